"""The extractive distiller's memory worth reading (issue 12): `topics/core.md` maintained from
first-person facts, so `core.md` exists after the first write that has one and renders within its 2,000
tokens; and no duplicates: a claim already in its topic gains the new citation instead of a copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmem import ArchiveRecord, FileSessionStore, Runtime
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import count_tokens, parse_topic
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import BatchInput, ExtractiveDistiller, write_session
from dagmem.memory.write._core_facts import core_facts
from dagmem.sim import check_home

pytestmark = pytest.mark.anyio


def oracle(home: Path) -> None:
    workspace_id = read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")
    report = check_home(FileSessionStore(home, read_only=True), home / "memory", workspace_id, drained=True)
    assert report.violations == []


def all_blocks(home: Path) -> list[tuple[str, str, int]]:
    """(topic, claim, citations) of every block of every topic file."""
    out = []
    for path in sorted(t for t in (home / "memory" / "topics").glob("*.md") if t.name != "index.md"):
        rel = f"topics/{path.name}"
        out += [(rel, b.claim, len(b.citations)) for b in parse_topic(path.read_text(), rel).blocks]
    return out


async def readme_example(home: Path) -> None:
    """The README's embedding example, as written there."""
    async with Runtime.open(home) as rt:
        await rt.append("s1", "user", "Which neighbourhood in Lisbon?")
        a = await rt.append("s1", "assistant", "Alfama, Chiado or Príncipe Real.")
        await rt.append("s1", "user", "And with small children?")
        other = await rt.append("s1", "user", "Actually: Porto or Lisbon?", predecessor=a)
        await rt.set_head("s1", other)
        await rt.end_session("s1")
        await rt.flush(force=True)


async def test_running_the_readme_example_twice_files_each_claim_once(tmp_path: Path) -> None:
    await readme_example(tmp_path)
    once = all_blocks(tmp_path)
    await readme_example(tmp_path)
    twice = all_blocks(tmp_path)
    assert [(t, c) for t, c, _ in twice] == [(t, c) for t, c, _ in once]  # no second copy
    assert [n for _, _, n in twice] == [2 * n for _, _, n in once]  # each gained the new citation
    oracle(tmp_path)


def test_an_identical_claim_on_a_sibling_branch_gains_a_citation(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    root = store.append("s", "user", "Which neighbourhood in Lisbon?", node_id="u0").id
    store.append("s", "user", "Is the tram 28 worth it?", node_id="x1", predecessor=root)
    store.append("s", "user", "Is the tram 28 worth it?", node_id="y1", predecessor=root)  # a retry
    store.append("s", "user", "Is the tram 15 worth it?", node_id="z1", predecessor=root)
    with Workspace(tmp_path / "memory", fsync=False) as ws:
        result = write_session(store, ws, "s", boundary=True, distiller=ExtractiveDistiller())
    assert result.records == 4
    tram = [(c, n) for t, c, n in all_blocks(tmp_path) if "tram" in c]
    # Said on both branches, so true on both (DESIGN §8); a different claim stays a block of its own.
    assert sorted(tram) == [("User: “Is the tram 15 worth it?”", 1), ("User: “Is the tram 28 worth it?”", 2)]
    oracle(tmp_path)


def rec(i: int, text: str, role: str = "user") -> ArchiveRecord:
    return ArchiveRecord("s", f"n{i}", role, i, 1_750_000_000.0 + i, text)


def test_core_facts_are_first_person_statements_of_identity_and_preference() -> None:
    records = [
        rec(0, "Hi! My name is Ana. Can you plan a trip? I prefer aisle seats."),
        rec(1, "I am vegetarian, by the way. I'm going to Lisbon next week."),
        rec(2, "Actually, I never fly before noon. Do I like trams?"),
        rec(3, "My name is Ana."),  # said again: one fact
        rec(4, "I live in Porto.", role="assistant"),  # the assistant's words are not the user's facts
        rec(5, "The core of the plan is cheap flights. What is core to you?"),
    ]
    assert [fact for fact, _ in core_facts(records)] == [
        "My name is Ana.",
        "I prefer aisle seats.",
        "I am vegetarian, by the way.",
        "I never fly before noon.",
    ]
    assert [r.node_id for _, r in core_facts(records)] == ["n0", "n0", "n1", "n2"]


def test_core_md_exists_after_the_first_write_with_a_fact(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    store.append("s", "user", "What is the weather in Porto?", node_id="u0")
    with Workspace(tmp_path / "memory", fsync=False) as ws:
        write_session(store, ws, "s", boundary=True, distiller=ExtractiveDistiller())
        assert not (tmp_path / "memory" / "core.md").exists()  # no fact yet: no master, no core.md
        store.append(
            "s", "user", "I prefer trains to planes. Book Porto to Lisbon?", node_id="u1", predecessor="u0"
        )
        write_session(store, ws, "s", boundary=True, distiller=ExtractiveDistiller())
    master = parse_topic((tmp_path / "memory" / "topics" / "core.md").read_text(), "topics/core.md")
    assert [b.claim for b in master.blocks] == ["User: “I prefer trains to planes.”"]
    core = (tmp_path / "memory" / "core.md").read_text()
    assert "I prefer trains to planes." in core
    assert "sources/s.md#src-" in core
    oracle(tmp_path)


def test_many_facts_render_within_the_core_budget_and_the_master_stays_bounded() -> None:
    class Files:
        def __init__(self) -> None:
            self.files: dict[str, str] = {}

        def read(self, relpath: str) -> str | None:
            return self.files.get(relpath)

        def size(self, relpath: str) -> int | None:
            text = self.files.get(relpath)
            return None if text is None else len(text.encode())

    from dagmem.memory.format import render_core

    files = Files()
    for batch in range(40):
        records = tuple(
            rec(batch * 10 + i, f"I like the {batch}-{i} thing <|endoftext|> very much indeed.")
            for i in range(10)
        )
        files.files.update(
            {k: v for k, v in ExtractiveDistiller().distill(BatchInput("s", records), files).items() if v}
        )
    master = files.files["topics/core.md"]
    # It stops taking facts at the topic file limit (16 KiB): the last batch that found room may pass it
    # by its own facts, and no batch after it adds any.
    assert 16 * 1024 <= len(master.encode()) < 20 * 1024
    rendered = render_core(master)
    assert 1500 < count_tokens(rendered) <= 2000
    assert rendered.startswith("# Core\n")
