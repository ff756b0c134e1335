"""`dagmem reorganise` regroups a home written under the older layout (one file per salient word, many of
them filler) into pages by subject, in one transaction: every citation kept, nothing lost, the files it
changed reported, the home consistent after it, and a second pass changes nothing."""

from __future__ import annotations

from pathlib import Path

from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import ArchiveRecord, is_topic_path, parse_topic
from dagmem.memory.store import FileSessionStore
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import BatchInput, Edits, TopicReader, exchange_claim, reorganise, write_session
from dagmem.memory.write._blocks import TopicEdit
from dagmem.sim import check_home

TURNS = [
    ("user", "My sister Maya moved to Lisbon last month."),
    ("assistant", "That's a big move! How is Maya settling in?"),
    ("user", "Awesome, Maya loves it, she found a flat near the river."),
    ("assistant", "Lovely. Do you have any pets?"),
    ("user", "Yes, a beagle called Biscuit. Biscuit is three years old."),
    ("assistant", "Awesome! What does Biscuit like to do?"),
    ("user", "Biscuit loves chasing pigeons in the park, awesome to watch."),
    ("assistant", "Does Biscuit get along with Maya?"),
    ("user", "Biscuit adores Maya, he sleeps on her feet."),
]


class OldLayout:
    """The older extractive layout: a user turn and the replies after it are one block, filed under a
    filler word (what the old salient-word rule picked for chatty turns)."""

    name = "old-layout"

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        edits: dict[str, TopicEdit] = {}
        exchanges: list[list[ArchiveRecord]] = []
        for record in batch.records:
            if record.role == "user" or not exchanges:
                exchanges.append([record])
            else:
                exchanges[-1].append(record)
        for n, exchange in enumerate(exchanges):
            path = "topics/awesome.md" if n % 2 else "topics/it-s.md"
            edit = edits.get(path) or TopicEdit(path, topics.read(path), "Awesome" if n % 2 else "It’s")
            edits[path] = edit
            sources = [(f"{r.role} {r.session_id}/{r.node_id}", r.source_id) for r in exchange]
            edit.add(exchange_claim(exchange), [("2025-06-01", sources)])
        return {path: edit.render() for path, edit in edits.items()}


def _home(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path, fsync=False)
    for role, text in TURNS:
        store.append("s", role, text)
    with Workspace(tmp_path / "memory", fsync=False) as ws:
        write_session(store, ws, "s", boundary=True, distiller=OldLayout())


def _pages(home: Path) -> dict[str, list[tuple[str, set[tuple[str, str]]]]]:
    out = {}
    for p in sorted((home / "memory" / "topics").glob("*.md")):
        rel = f"topics/{p.name}"
        if not is_topic_path(rel):
            continue  # the topic index is the map, not a topic
        out[rel] = [
            (b.claim, {(s.session_id, s.anchor) for c in b.citations for s in c.sources})
            for b in parse_topic(p.read_text(encoding="utf-8"), rel).blocks
        ]
    return out


def test_an_old_home_is_regrouped_into_pages_by_subject(tmp_path: Path) -> None:
    _home(tmp_path)
    before = _pages(tmp_path)
    assert set(before) == {"topics/awesome.md", "topics/it-s.md"}
    with Workspace(tmp_path / "memory", fsync=False) as ws:
        result = reorganise(ws)
    after = _pages(tmp_path)
    assert result.tx is not None
    assert result.regrouped == sum(len(blocks) for blocks in before.values())
    assert "topics/awesome.md" not in after
    assert "topics/it-s.md" not in after
    assert {"topics/maya.md", "topics/biscuit.md"} <= set(after)
    assert set(result.changed) == set(before) | set(after)
    # Nothing lost: the same blocks, each with every citation it had.
    assert sorted(b for blocks in after.values() for b in blocks) == sorted(
        b for blocks in before.values() for b in blocks
    )
    workspace_id = read_workspace_id(tmp_path / "memory" / ".dagmem" / "workspace-id")
    report = check_home(
        FileSessionStore(tmp_path, read_only=True), tmp_path / "memory", workspace_id, drained=True
    )
    assert report.violations == []


def test_a_second_pass_changes_nothing(tmp_path: Path) -> None:
    _home(tmp_path)
    with Workspace(tmp_path / "memory", fsync=False) as ws:
        assert reorganise(ws).tx is not None
    snapshot = {p: p.read_bytes() for p in (tmp_path / "memory").rglob("*.md")}
    with Workspace(tmp_path / "memory", fsync=False) as ws:
        again = reorganise(ws)
    assert again.tx is None
    assert again.regrouped == 0
    assert {p: p.read_bytes() for p in (tmp_path / "memory").rglob("*.md")} == snapshot
