"""The core block holds current blocks only (DESIGN §12): a branch the user edited away, or a fact a
later block superseded, never reaches `memory/core.md`; a head move re-renders it at the session's next
install."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dagmem.memory.currency import SessionShape
from dagmem.memory.format import (
    Supersession,
    Topic,
    TopicLookup,
    anchor_of,
    make_block,
    render_topic,
)
from dagmem.memory.shapes import shapes_for
from dagmem.memory.store import FileSessionStore
from dagmem.memory.write import write_pass
from dagmem.memory.write._current import TopicBlocks, current_core


def core(home: Path) -> str:
    return (home / "memory" / "core.md").read_text(encoding="utf-8")


def edited(home: Path) -> tuple[FileSessionStore, str, str]:
    """s: hello -> hi -> "I live in Paris." -> ok, and the prompt edited to "I live in Berlin." (the
    head); returns the store and the two edited prompts' replies."""
    store = FileSessionStore(home)
    store.append("s", "user", "Hello there, planning a trip.")
    hi = store.append("s", "assistant", "Hi! Where to?")
    store.append("s", "user", "I live in Paris.", predecessor=hi.id)
    paris = store.append("s", "assistant", "Noted: Paris.")
    store.append("s", "user", "I live in Berlin.", predecessor=hi.id)  # an edited prompt: the head moves
    berlin = store.append("s", "assistant", "Noted: Berlin.")
    return store, paris.id, berlin.id


def test_an_edited_away_prompt_never_reaches_the_core(tmp_path: Path) -> None:
    edited(tmp_path)
    write_pass(tmp_path, force=True, threshold=10_000)
    master = (tmp_path / "memory" / "topics" / "core.md").read_text(encoding="utf-8")
    assert "I live in Paris." in master
    assert "I live in Berlin." in master
    assert "Berlin" in core(tmp_path)
    assert "Paris" not in core(tmp_path)


def test_a_head_move_re_renders_the_core_at_the_next_install(tmp_path: Path) -> None:
    store, paris, _berlin = edited(tmp_path)
    write_pass(tmp_path, force=True, threshold=10_000)
    store.set_head("s", paris)  # back to the first alternative, and the conversation goes on there
    store.append("s", "user", "Let us plan the weekend.")
    write_pass(tmp_path, force=True, threshold=10_000)
    assert "Paris" in core(tmp_path)
    assert "Berlin" not in core(tmp_path)


def test_the_install_keeps_the_shape_cache_current(tmp_path: Path) -> None:
    store, _paris, berlin = edited(tmp_path)
    write_pass(tmp_path, force=True, threshold=10_000)
    with shapes_for(tmp_path) as shapes:
        cached = shapes("s")
        assert cached is not None
        assert cached == SessionShape.from_snapshot(store.load("s"))
        assert cached.head == berlin
        assert shapes.cached_head("s") == (True, berlin)


def test_a_superseded_block_is_skipped_and_a_left_successor_does_not_hide_it() -> None:
    anchors = {anchor_of(f"s/{node}"): node for node in ("r", "u1", "u2")}
    taken: set[str] = set()
    old = make_block("topics/core.md", "I live in Paris.", [("2026-11-01", [("user", "s/r")])], taken)
    new = make_block("topics/core.md", "I live in Berlin.", [("2026-11-20", [("user", "s/u2")])], taken)
    edited_away = make_block("topics/core.md", "I live in Rome.", [("2026-11-20", [("user", "s/u1")])], taken)
    shape = SessionShape(
        "s",
        {"r": None, "u1": "r", "u2": "r"},
        {"r": "assistant", "u1": "user", "u2": "user"},
        frozenset(),
        "u2",
    )

    def render(successor: str) -> str:
        marked = dataclasses.replace(
            old, superseded=Supersession(successor, "topics/core.md", "2026-11-20", "update")
        )
        text = render_topic(Topic("Core", (marked, new, edited_away)))
        lookup = TopicLookup(lambda relpath: text.encode() if relpath == "topics/core.md" else None)
        blocks = TopicBlocks(lookup, lambda session, anchor: f"{session}/{anchors[anchor]}")
        return current_core(text, blocks, {"s": shape}.get)

    by_berlin = render(new.id)
    assert "Berlin" in by_berlin
    assert "Paris" not in by_berlin
    assert "Rome" not in by_berlin
    by_rome = render(edited_away.id)  # a correction said on a branch the user edited away
    assert "Paris" in by_rome
    assert "Rome" not in by_rome


def test_a_head_moved_back_to_a_fork_then_continued_re_renders_the_core(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    store.append("s", "user", "Hello there, planning a trip.")
    hi = store.append("s", "assistant", "Hi! Where to?")
    store.append("s", "user", "I live in Paris.")
    store.append("s", "assistant", "Noted: Paris.")
    write_pass(tmp_path, force=True, threshold=10_000)
    store.set_head("s", hi.id)  # back to the fork; an install sees the head there (a side branch's turn)
    store.append("s", "user", "Sub-agent: checking trains.", predecessor=hi.id, spawned=True)
    write_pass(tmp_path, force=True, threshold=10_000)
    assert "Paris" in core(tmp_path)  # nothing is left while the head waits at the fork
    store.append("s", "user", "I live in Berlin.")  # the head continues from the fork: Paris is left
    write_pass(tmp_path, force=True, threshold=10_000)
    assert "Berlin" in core(tmp_path)
    assert "Paris" not in core(tmp_path)
