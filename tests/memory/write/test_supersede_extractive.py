"""The extractive distiller writes supersessions (issue 23): a user's update or retraction marks the
older block of the same fact superseded, in the same transaction, in the file the write touches anyway;
never from an assistant's words, never across alternatives of one fork, never by scanning the workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dagmem
from dagmem import FileSessionStore
from dagmem.cli import main
from dagmem.memory.format import Block, anchor_of, parse_topic
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import BatchInput, ExtractiveDistiller, write_session
from dagmem.memory.write._core import records_of

pytestmark = pytest.mark.anyio


def blocks_of(home: Path, name: str) -> dict[str, Block]:
    """Each block of `topics/<name>` by its user's words."""
    rel = f"topics/{name}"
    topic = parse_topic((home / "memory" / rel).read_text(), rel)
    return {b.claim: b for b in topic.blocks}


async def test_the_issue_example_supersedes_paris_and_vegetarian_and_keeps_the_nurse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / ".dagmem"
    async with dagmem.Runtime.open(home, token_threshold=50) as rt:
        await rt.append("s1", "user", "I live in Paris and I work as a nurse.")
        await rt.end_session("s1")
        await rt.flush(force=True)
        await rt.append("s2", "user", "Update: I moved to Berlin last month, I no longer live in Paris.")
        await rt.append("s2", "user", "I am vegetarian.")
        await rt.append("s2", "user", "Sorry, scratch that: I am not vegetarian, I eat fish.")
        await rt.end_session("s2")
        await rt.flush(force=True)
        said = await rt.core_async()
    assert all(word in said for word in ("Berlin", "nurse", "fish"))
    assert "Paris" not in said
    assert "vegetarian" not in said
    core = blocks_of(home, "core.md")
    paris, nurse = core["User: “I live in Paris”"], core["User: “I work as a nurse.”"]
    berlin = core[
        "User: “I moved to Berlin last month”"
    ]  # the negation only retracted: not a fact of its own
    vegetarian, fish = core["User: “I am vegetarian.”"], core["User: “I eat fish.”"]
    assert paris.superseded is not None
    assert vegetarian.superseded is not None
    assert (paris.superseded.by, paris.superseded.topic, paris.superseded.reason) == (
        berlin.id,
        "topics/core.md",
        "update",
    )
    assert (vegetarian.superseded.by, vegetarian.superseded.reason) == (fish.id, "retraction")
    assert paris.superseded.date == berlin.citations[-1].date
    assert [b.superseded for b in (nurse, berlin, fish)] == [None, None, None]
    # Each turn was wholly core facts: filed in the master only, so nothing stale elsewhere says Paris.
    others = [p for p in (home / "memory" / "topics").glob("*.md") if p.name != "core.md"]
    assert not [p for p in others if "Paris" in p.read_text() or "vegetarian" in p.read_text()]
    capsys.readouterr()
    assert main(["verify", "--strict", "--json", "--home", str(home)]) == 0
    assert not json.loads(capsys.readouterr().out).get("violations")


async def test_a_chinese_update_and_retraction(tmp_path: Path) -> None:
    home = tmp_path / ".dagmem"
    async with dagmem.Runtime.open(home, token_threshold=50) as rt:
        await rt.append("s1", "user", "我住在上海。")
        await rt.append("s1", "user", "我是素食者。")
        await rt.end_session("s1")
        await rt.flush(force=True)
        await rt.append("s2", "user", "我现在住在北京。")
        await rt.append("s2", "user", "其实我不是素食者，我吃鱼。")
        await rt.end_session("s2")
        await rt.flush(force=True)
    core = blocks_of(home, "core.md")
    shanghai, vegetarian = core["User: “我住在上海。”"], core["User: “我是素食者。”"]
    assert shanghai.superseded is not None
    assert shanghai.superseded.reason == "update"
    assert shanghai.superseded.by == core["User: “我现在住在北京。”"].id
    assert vegetarian.superseded is not None
    assert vegetarian.superseded.reason == "retraction"


async def test_an_assistant_turn_never_supersedes_and_a_plain_restatement_is_no_update(
    tmp_path: Path,
) -> None:
    home = tmp_path / ".dagmem"
    async with dagmem.Runtime.open(home, token_threshold=50) as rt:
        await rt.append("s1", "user", "I live in Paris.")
        await rt.append(
            "s1", "assistant", "Actually, you moved to Berlin now, I no longer think you live in Paris."
        )
        await rt.append("s1", "user", "I live in Berlin.")  # no cue: maybe a second home; not replaced
        await rt.end_session("s1")
        await rt.flush(force=True)
    core = blocks_of(home, "core.md")
    assert [b.superseded for b in core.values()] == [None, None]


async def test_within_one_topic_a_corrected_detail_supersedes_the_old_block(tmp_path: Path) -> None:
    home = tmp_path / ".dagmem"
    async with dagmem.Runtime.open(home, token_threshold=50) as rt:
        await rt.append("s1", "user", "My flight to Rome is at 9am on Friday.")
        await rt.append("s1", "assistant", "Noted your flight.")
        await rt.end_session("s1")
        await rt.flush(force=True)
        await rt.append("s2", "user", "Actually my flight to Rome is at 11am on Friday.")
        await rt.append("s2", "assistant", "Noted your flight.")
        await rt.end_session("s2")
        await rt.flush(force=True)
    (old, new) = blocks_of(home, "flight.md").values()
    assert old.superseded is not None
    assert (old.superseded.by, old.superseded.reason) == (new.id, "retraction")
    assert new.superseded is None


def _branching(tmp_path: Path, berlin_after_paris: bool) -> dict[str, Block]:
    """Paris is written first; then "Actually, I moved to Berlin." said either after it on one path, or
    as an edited prompt (an alternative of the same fork)."""
    store = FileSessionStore(tmp_path)
    root = store.append("s", "user", "Hello there, can you help me plan my week?", node_id="u0").id
    paris = store.append("s", "user", "I live in Paris.", node_id="x1", predecessor=root).id
    with Workspace(tmp_path / "memory", fsync=False) as ws:
        write_session(store, ws, "s", boundary=True, distiller=ExtractiveDistiller())
        store.append(
            "s",
            "user",
            "Actually, I moved to Berlin.",
            node_id="y1",
            predecessor=paris if berlin_after_paris else root,
        )
        write_session(store, ws, "s", boundary=True, distiller=ExtractiveDistiller())
    return blocks_of(tmp_path, "core.md")


def test_on_one_path_the_move_supersedes(tmp_path: Path) -> None:
    core = _branching(tmp_path, berlin_after_paris=True)
    assert core["User: “I live in Paris.”"].superseded is not None


def test_never_between_alternatives_of_one_fork(tmp_path: Path) -> None:
    core = _branching(tmp_path, berlin_after_paris=False)
    assert (
        core["User: “I live in Paris.”"].superseded is None
    )  # the edited prompt leaves it: `left`, not superseded


class _CountingReader:
    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self.asked: set[str] = set()

    def read(self, relpath: str) -> str | None:
        self.asked.add(relpath)
        return self.texts.get(relpath)

    def size(self, relpath: str) -> int | None:
        self.asked.add(relpath)
        text = self.texts.get(relpath)
        return None if text is None else len(text.encode())


def test_the_lookup_reads_only_the_files_the_batch_touches(tmp_path: Path) -> None:
    """Candidates come from the core master and the new block's own topic, never from a workspace scan."""
    store = FileSessionStore(tmp_path)
    store.append("s", "user", "I live in Paris.", node_id="a")
    node = store.append("s", "user", "Actually I moved to Berlin.", node_id="b")
    first = ExtractiveDistiller().distill(
        BatchInput("s", tuple(records_of("s", store.read_nodes("s", ["a"])))), _CountingReader({})
    )
    texts = {path: text for path, text in first.items() if text is not None}
    texts.update({f"topics/unrelated-{i}.md": "# Unrelated\n" for i in range(50)})
    reader = _CountingReader(texts)
    path = frozenset({anchor_of("s/a"), anchor_of("s/b")})  # b follows a on one path
    edits = ExtractiveDistiller().distill(
        BatchInput("s", tuple(records_of("s", [node])), lambda: path), reader
    )
    assert reader.asked == {"topics/core.md"}
    core = parse_topic(str(edits["topics/core.md"]), "topics/core.md")
    assert [b.superseded is not None for b in core.blocks] == [True, False]
