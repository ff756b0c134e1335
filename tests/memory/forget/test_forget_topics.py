"""What a forget does to topics: a block citing forgotten and kept evidence is re-distilled from what it
keeps; one citing only forgotten evidence goes, and the core is re-rendered without it; a topic named
after the forgotten text is renamed, so neither a file name nor a title keeps it."""

from __future__ import annotations

from pathlib import Path

from dagmem import FileSessionStore
from dagmem.memory.audit import OracleReport, check_home
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.forget import forget, plan_forget, verify_forgotten
from dagmem.memory.format import parse_topic
from dagmem.memory.recall import RecallIndex, RecallQuery, search
from dagmem.memory.writing import write_home

SECRET = "zorblax-7731-quintessence"


def _topics(home: Path) -> dict[str, str]:
    return {
        p.name: p.read_text()
        for p in sorted(t for t in (home / "memory/topics").glob("*.md") if t.name != "index.md")
    }


def _oracle(home: Path) -> OracleReport:
    store = FileSessionStore(home, read_only=True)
    return check_home(
        store, home / "memory", read_workspace_id(home / "memory/.dagmem/workspace-id"), drained=True
    )


def test_a_topic_named_after_the_secret_is_renamed_and_its_other_block_redistilled(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = FileSessionStore(home, fsync=False)
    store.append("s", "user", f"remember {SECRET} and {SECRET} please")
    store.append("s", "assistant", "Okay, noted for later.")
    write_home(home, force=True)
    assert f"{SECRET}.md" in _topics(home)

    report = forget(home, plan_forget(home, match=SECRET), fsync=False)

    assert report.clean, report.copies
    assert report.topics_renamed == {f"topics/{SECRET}.md": "topics/renamed-1.md"}
    topics = _topics(home)
    assert all(
        SECRET not in name.casefold() and SECRET not in text.casefold() for name, text in topics.items()
    )
    (block,) = parse_topic(topics["renamed-1.md"], "topics/renamed-1.md").blocks
    assert block.claim == "Assistant: “Okay, noted for later.”"  # only the turn it keeps
    assert verify_forgotten(home) == []
    assert SECRET not in (home / "memory/.dagmem/txlog.jsonl").read_text()  # the topic's old name too
    assert _oracle(home).ok
    (hit,) = search(RecallIndex.open(home / "memory"), RecallQuery("noted for later", k=1))
    assert hit.topic == "topics/renamed-1.md"


def test_a_core_fact_forgotten_leaves_the_core_and_its_block(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = FileSessionStore(home, fsync=False)
    fact = store.append("s", "user", "My name is Quillon Vantablack.")
    store.append("s", "user", "I like sailing on the lake at dawn.")
    write_home(home, force=True)
    assert "Quillon" in (home / "memory/core.md").read_text()

    report = forget(home, plan_forget(home, node=f"s/{fact.id}"), fsync=False)

    assert report.clean, report.copies
    assert report.blocks_removed
    assert "Quillon" not in (home / "memory/core.md").read_text()
    assert "sailing" in (home / "memory/core.md").read_text()
    assert _oracle(home).ok
