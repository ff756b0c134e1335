"""The oracle's currency checks: no supersession between alternatives of one fork, and a core that never
holds a superseded or left block."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dagmem.memory.audit import check_home
from dagmem.memory.format import Supersession, parse_topic, render_core, render_topic
from dagmem.memory.store import FileSessionStore
from dagmem.memory.write import write_pass


def edited_home(home: Path) -> FileSessionStore:
    store = FileSessionStore(home)
    store.append("s", "user", "Hello there, planning a trip.")
    hi = store.append("s", "assistant", "Hi! Where to?")
    store.append("s", "user", "I live in Paris.", predecessor=hi.id)
    store.append("s", "assistant", "Noted: Paris.")
    store.append("s", "user", "I live in Berlin.", predecessor=hi.id)  # the edited prompt, now the head
    store.append("s", "assistant", "Noted: Berlin.")
    write_pass(home, force=True, threshold=10_000)
    return store


def kinds(home: Path, store: FileSessionStore) -> list[str]:
    report = check_home(store, home / "memory", None)
    return [v.kind for v in report.violations]


def test_a_home_written_with_an_edited_prompt_is_clean(tmp_path: Path) -> None:
    store = edited_home(tmp_path)
    assert kinds(tmp_path, store) == []


def test_a_supersession_between_two_alternatives_is_reported(tmp_path: Path) -> None:
    store = edited_home(tmp_path)
    master = tmp_path / "memory" / "topics" / "core.md"
    topic = parse_topic(master.read_text(encoding="utf-8"), "topics/core.md")
    paris = next(b for b in topic.blocks if "Paris" in b.claim)
    berlin = next(b for b in topic.blocks if "Berlin" in b.claim)
    marked = dataclasses.replace(
        paris, superseded=Supersession(berlin.id, "topics/core.md", "2026-11-20", "update")
    )
    blocks = tuple(marked if b.id == paris.id else b for b in topic.blocks)
    master.write_text(render_topic(dataclasses.replace(topic, blocks=blocks)), encoding="utf-8")
    assert "supersession_between_alternatives" in kinds(tmp_path, store)


def test_a_core_showing_a_left_block_is_reported(tmp_path: Path) -> None:
    store = edited_home(tmp_path)
    master = (tmp_path / "memory" / "topics" / "core.md").read_text(encoding="utf-8")
    (tmp_path / "memory" / "core.md").write_text(render_core(master), encoding="utf-8")  # every block
    assert kinds(tmp_path, store) == ["core-not-current"]
