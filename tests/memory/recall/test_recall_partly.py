"""Recall and partly superseded blocks, on a home written through the real write path (the second
install marks the older block with `TopicEdit.partly`): the hit stays current and names its successor
(`partly_by`), the successor's current statement comes right after it (not when it ranks above already,
nor when the reader may not see it, and within k), the index keeps the mark from the install's delta and
through a compaction (a delta entry whose mark is malformed is damage), and `render_context` labels the
hit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dagmem import FileSessionStore, Hit, render_context
from dagmem.memory.format import inert
from dagmem.memory.recall import (
    RecallIndex,
    RecallQuery,
    RecallUpdater,
    Visible,
    compact,
    find_hits,
    search,
    status_label,
)
from dagmem.memory.recall._embed import DIM
from dagmem.memory.recall._entries import Entry
from dagmem.memory.recall._index import _entry as checked_entry
from dagmem.memory.recall._snapshot import Damaged
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import BatchInput, Edits, TopicReader, records_of, write_batch
from dagmem.memory.write._blocks import Groups, TopicEdit

HOME, FRIENDS, BERLIN = "topics/home.md", "topics/friends.md", "topics/berlin.md"
NURSE = "I live in Paris and I work as a nurse at the Paris hospital."
ANNA = "My friend Anna is a nurse too, she works nights at the hospital."
MOVED = "I moved to Berlin last month."
QUERY = "do I live in Paris and work as a nurse"  # the nurse block's words, then Anna's; none of Berlin's

Script = Callable[[BatchInput, TopicReader], Edits]


class Scripted:
    name = "scripted"

    def __init__(self, script: Script) -> None:
        self.script = script

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        return self.script(batch, topics)


def cite(batch: BatchInput, n: int, date: str) -> tuple[str, Groups]:
    """The claim of the batch's record `n` and its one citation, as the extractive distiller files it."""
    record = batch.records[n]
    return "User: " + inert(record.content), [(date, [("user", record.source_id)])]


@dataclass
class Written:
    memory: Path
    nurse: str
    anna: str
    berlin: str

    def hits(self, query: str = QUERY, *, keep: Visible | None = None, **asked: Any) -> list[Hit]:
        return search(RecallIndex.open(self.memory), RecallQuery(query, **asked), keep=keep)

    def ids(self, query: str = QUERY, *, keep: Visible | None = None, **asked: Any) -> list[str | None]:
        return [hit.block_id for hit in self.hits(query, keep=keep, **asked)]


def write_home(root: Path, *, marked: bool = True, berlin_path: str = HOME) -> Written:
    """Paris and the nurse (home) and Anna (friends) in one session; Berlin in the next, filed in
    `berlin_path`, the nurse block marked partly superseded by it when `marked`."""
    store = FileSessionStore(root, fsync=False)
    ids: dict[str, str] = {}

    def before(batch: BatchInput, topics: TopicReader) -> Edits:
        home, friends = TopicEdit(HOME, None, "Home"), TopicEdit(FRIENDS, None, "Friends")
        ids["nurse"] = home.add(*cite(batch, 0, "2026-11-01")).id
        ids["anna"] = friends.add(*cite(batch, 1, "2026-11-01")).id
        return {HOME: home.render(), FRIENDS: friends.render()}

    def after(batch: BatchInput, topics: TopicReader) -> Edits:
        home = TopicEdit(HOME, topics.read(HOME), "Home")
        where = home if berlin_path == HOME else TopicEdit(berlin_path, topics.read(berlin_path), "Berlin")
        berlin = where.add(*cite(batch, 0, "2026-11-20"))
        ids["berlin"] = berlin.id
        if marked:
            assert home.partly(ids["nurse"], berlin, berlin_path, "update") is not None
        return {HOME: home.render(), berlin_path: where.render()}

    with Workspace(root / "memory", fsync=False, on_install=RecallUpdater()) as workspace:
        first = [store.append("s1", "user", text) for text in (NURSE, ANNA)]
        write_batch(workspace, "s1", records_of("s1", first), Scripted(before))
        moved = store.append("s2", "user", MOVED)
        write_batch(workspace, "s2", records_of("s2", [moved]), Scripted(after))
    return Written(root / "memory", ids["nurse"], ids["anna"], ids["berlin"])


@pytest.fixture
def home(tmp_path: Path) -> Written:
    return write_home(tmp_path / "home")


def test_without_the_mark_the_successor_does_not_come_with_the_hit(tmp_path: Path) -> None:
    plain = write_home(tmp_path / "plain", marked=False)
    # Not asked about the person now (where the person's own statement on the topic comes whatever it
    # scores), and Berlin shares no word of the question.
    hits = plain.hits("the nurse from Paris")
    assert [hit.block_id for hit in hits] == [plain.nurse, plain.anna]
    assert all(hit.partly_by is None for hit in hits)


def test_a_partly_superseded_hit_stays_current_and_its_successor_comes_right_after_it(home: Written) -> None:
    hits = home.hits()
    assert [hit.block_id for hit in hits][:3] == [home.nurse, home.berlin, home.anna]
    nurse, berlin = hits[0], hits[1]
    assert (nurse.status, nurse.superseded_by, nurse.partly_by) == ("current", None, home.berlin)
    assert (berlin.status, berlin.partly_by) == ("current", None)
    assert berlin.score >= hits[2].score  # ranked where the hit it comes with is
    assert nurse.model_dump(mode="json")["partly_by"] == home.berlin  # the wire carries it
    assert home.ids(history=True)[:3] == [home.nurse, home.berlin, home.anna]


def test_the_index_keeps_the_partly_mark_from_the_install_and_through_a_compaction(home: Written) -> None:
    index = RecallIndex.open(home.memory)  # the snapshot and the delta line the second install appended
    assert index.replayed == {}  # nothing read from the topic files: the delta held it
    (row,) = index.block_rows(home.nurse)
    entry = index.entry(row)
    assert (entry.partly, entry.superseded) == ((home.berlin, HOME, "2026-11-20"), None)
    compact(home.memory, fsync=False)  # a new snapshot: the entry from its documents
    compacted = RecallIndex.open(home.memory)
    (row,) = compacted.block_rows(home.nurse)
    assert compacted.entry(row).partly == (home.berlin, HOME, "2026-11-20")
    assert home.ids()[:2] == [home.nurse, home.berlin]


def test_a_successor_ranked_above_the_hit_comes_once(home: Written) -> None:
    ids = home.ids("did I move to Berlin, am I a nurse in Paris")
    assert ids == [home.berlin, home.nurse]  # Anna is below the floor
    assert ids.count(home.berlin) == 1


def test_k_counts_the_successor(home: Written) -> None:
    assert home.ids(k=1) == [home.nurse]
    assert home.ids(k=2) == [home.nurse, home.berlin]


def test_a_successor_the_reader_may_not_see_does_not_come(tmp_path: Path) -> None:
    apart = write_home(tmp_path / "apart", berlin_path=BERLIN)
    assert apart.ids()[:3] == [apart.nurse, apart.berlin, apart.anna]  # across files, as in one
    hidden = apart.ids(keep=lambda entry: entry.topic != BERLIN)
    assert hidden[:2] == [apart.nurse, apart.anna]
    assert apart.berlin not in hidden


def test_render_context_labels_a_partly_superseded_hit(home: Written) -> None:
    hits = home.hits()
    text = render_context(hits)
    nurse = next(line for line in text.splitlines() if "I work as a nurse" in line)
    assert f"(partly superseded by {home.berlin}, given next)" in nurse
    berlin = next(line for line in text.splitlines() if "moved to Berlin" in line)
    assert "superseded" not in berlin
    anna = next(line for line in text.splitlines() if "Anna" in line)
    assert "superseded" not in anna
    alone = render_context(hits[:1])  # the successor not shown: the label does not promise it
    assert f"(partly superseded by {home.berlin}) " in alone
    assert "given next" not in alone
    assert status_label(hits[0]) == f"partly superseded by {home.berlin}"  # `dagmem recall`'s [label]
    found = find_hits(RecallIndex.open(home.memory), RecallQuery(QUERY))  # the plain records render the same
    assert render_context(found) == text


def test_a_delta_entry_whose_partly_mark_is_not_one_is_damage() -> None:
    mark = ("b-89ab12cd", BERLIN, "2026-11-20")
    entry = Entry(
        HOME, "b-1234abcd", "0" * 16, "I live in Paris.", "2026-11-01", (), np.zeros(DIM, np.float16)
    )
    entry.partly = mark
    raw = entry.to_json()
    assert raw["p"] == list(mark)
    assert checked_entry(raw).partly == mark  # what a delta line holds reads back
    assert "p" not in Entry.from_json(raw | {"p": None}).to_json()  # an unmarked entry writes no "p"
    for bad in ([mark[0], mark[1]], "b-89ab12cd", [1, 2, 3]):
        with pytest.raises(Damaged, match="a supersession that is not one"):
            checked_entry(raw | {"p": bad})


def test_the_successor_that_comes_is_the_current_one_of_its_chain(tmp_path: Path) -> None:
    root = tmp_path / "home"
    home = write_home(root)
    rome: list[str] = []

    def moved_on(batch: BatchInput, topics: TopicReader) -> Edits:
        edit = TopicEdit(HOME, topics.read(HOME), "Home")
        block = edit.add(*cite(batch, 0, "2026-12-01"))
        edit.supersede(home.berlin, block, HOME, "update")  # Berlin no longer current: Rome is
        rome.append(block.id)
        return {HOME: edit.render()}

    store = FileSessionStore(root, fsync=False)
    with Workspace(root / "memory", fsync=False, on_install=RecallUpdater()) as workspace:
        turn = store.append("s3", "user", "I moved on to Rome this week.")
        write_batch(workspace, "s3", records_of("s3", [turn]), Scripted(moved_on))
    hits = home.hits()
    assert [hit.block_id for hit in hits][:2] == [home.nurse, rome[0]]
    assert hits[0].partly_by == rome[0]  # the current statement of the part, the one given next
    assert home.berlin not in [hit.block_id for hit in hits][:3]
    assert f"(partly superseded by {rome[0]}, given next)" in render_context(hits)
