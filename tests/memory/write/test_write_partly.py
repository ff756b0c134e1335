"""Partly superseded blocks on the write side: `TopicEdit.partly` (the newest successor wins, never on a
superseded block or on the successor itself, kept by a later full supersession), a transaction that marks
one through the real write path, its successor checked like a superseded line's (missing: refused and
nothing written; removed later: refused), and a reorganisation that never folds the successor away."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dagmem.memory.format import Block, Supersession, Topic, make_block, parse_topic, render_topic
from dagmem.memory.outcomes import ReasonCode
from dagmem.memory.write import BatchInput, Edits, TopicReader, reorganise
from dagmem.memory.write._blocks import TopicEdit
from dagmem.tests.memory.write.test_write_supersession import (
    BERLIN,
    HOME,
    NOTES,
    OTHER,
    Home,
    citing,
    topic_of,
)

NURSE = "I live in Paris and I work as a nurse."
MOVED = "I moved to Berlin."


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    made = Home(tmp_path / "home")
    yield made
    made.workspace.close()


# --- TopicEdit.partly ---------------------------------------------------------------------------------------


def edit_of(*claims: str) -> tuple[TopicEdit, list[Block]]:
    taken: set[str] = set()
    made = [
        make_block(HOME, claim, [(f"2026-11-{n:02d}", [("user", f"s1/n{n}")])], taken)
        for n, claim in enumerate(claims, start=1)
    ]
    edit = TopicEdit(HOME, render_topic(Topic("Home", tuple(made))), "Home")
    return edit, list(edit.blocks)


def test_partly_marks_the_block_current_dated_by_its_successor_and_keeps_its_id() -> None:
    edit, (nurse, berlin) = edit_of(NURSE, MOVED)
    marked = edit.partly(nurse.id, berlin, HOME, "update")
    assert marked is not None
    assert marked.partly == Supersession(berlin.id, HOME, "2026-11-02", "update")
    assert marked.superseded is None  # still current
    assert (marked.id, marked.claim, marked.citations) == (nurse.id, nurse.claim, nurse.citations)
    assert edit.block(nurse.id) == marked
    assert edit.holds(NURSE)  # a partly superseded block is current: the file still holds its claim
    assert parse_topic(edit.render(), HOME).blocks[0].partly == marked.partly


def test_the_newest_successor_wins() -> None:
    edit, (nurse, berlin, rome) = edit_of(NURSE, MOVED, "I moved on to Rome.")
    edit.partly(nurse.id, berlin, HOME, "update")
    again = edit.partly(nurse.id, rome, HOME, "retraction")
    assert again is not None
    assert again.partly == Supersession(rome.id, HOME, "2026-11-03", "retraction")
    assert edit.render().count("**Partly superseded**") == 1


def test_partly_leaves_a_superseded_block_and_the_successor_itself_alone() -> None:
    edit, (nurse, berlin) = edit_of(NURSE, MOVED)
    superseded = edit.supersede(nurse.id, berlin, HOME, "update")
    before = edit.render()
    assert edit.partly(nurse.id, berlin, HOME, "update") is None
    assert edit.block(nurse.id) == superseded
    assert edit.partly(berlin.id, berlin, HOME, "update") is None
    assert edit.render() == before
    with pytest.raises(KeyError):
        edit.partly("b-00000000", berlin, HOME, "update")


def test_a_later_full_supersession_keeps_the_partly_line() -> None:
    edit, (nurse, berlin, quit_) = edit_of(NURSE, MOVED, "I quit nursing and left Paris.")
    edit.partly(nurse.id, berlin, HOME, "update")
    both = edit.supersede(nurse.id, quit_, HOME, "update")
    assert both.partly == Supersession(berlin.id, HOME, "2026-11-02", "update")
    assert both.superseded == Supersession(quit_.id, HOME, "2026-11-03", "update")
    lines = edit.render().split("\n")
    assert lines[2].startswith("**Superseded** on `2026-11-03`")
    assert lines[3].startswith("**Partly superseded** on `2026-11-02`")
    assert parse_topic(edit.render(), HOME).blocks[0] == both


# --- through the write path -----------------------------------------------------------------------------------


def nurse(batch: BatchInput, topics: TopicReader) -> Edits:
    return {HOME: render_topic(Topic("Home", (citing(HOME, NURSE, batch),)))}


def moved(batch: BatchInput, topics: TopicReader) -> Edits:
    """Berlin added to the home page with TopicEdit, the nurse block marked partly superseded by it."""
    edit = TopicEdit(HOME, topics.read(HOME), "Home")
    berlin = edit.add(MOVED, [("2026-11-20", [("user", r.source_id) for r in batch.records])])
    edit.partly(edit.blocks[0].id, berlin, HOME, "update")
    return {HOME: edit.render()}


def test_a_write_marks_an_older_block_partly_superseded_and_verify_passes(home: Home) -> None:
    home.write(nurse)
    old = home.block(HOME, NURSE)
    home.write(moved)
    marked, berlin = parse_topic(home.text(HOME), HOME).blocks
    assert marked.partly == Supersession(berlin.id, HOME, "2026-11-20", "update")
    assert marked.superseded is None
    assert (marked.id, marked.claim, marked.citations) == (old.id, old.claim, old.citations)
    assert home.text(HOME).split("\n")[2] == (
        f"**Partly superseded** on `2026-11-20` by [{berlin.id}](home.md#^{berlin.id}) (update):"
    )
    home.check()


def partly_marking(topic: Topic, claim: str, by: str, where: str) -> str:
    status = Supersession(by, where, "2026-11-20", "update")
    marked = tuple(
        Block(b.id, b.claim, b.citations, b.superseded, status) if b.claim == claim else b
        for b in topic.blocks
    )
    return render_topic(Topic(topic.title, marked))


def nurse_and_berlin(batch: BatchInput, topics: TopicReader) -> Edits:
    return {
        **nurse(batch, topics),
        BERLIN: render_topic(Topic("Berlin", (citing(BERLIN, MOVED, batch),))),
    }


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        (
            lambda berlin: (BERLIN, "b-00000000"),
            "partly superseded by berlin.md#^b-00000000, which does not exist",
        ),
        (lambda berlin: ("topics/nowhere.md", berlin.id), "partly superseded by nowhere.md#^"),
        (lambda berlin: (HOME, berlin.id), "which does not exist"),
    ],
)
def test_a_write_naming_a_missing_partly_successor_is_refused_and_writes_nothing(
    home: Home, target: Callable[[Block], tuple[str, str]], fragment: str
) -> None:
    home.write(nurse_and_berlin)
    berlin = home.block(BERLIN, MOVED)
    before = home.text(HOME)
    where, by = target(berlin)

    def dangling(batch: BatchInput, topics: TopicReader) -> Edits:
        notes = render_topic(Topic("Notes", (citing(NOTES, "A note.", batch),)))
        return {NOTES: notes, HOME: partly_marking(topic_of(topics, HOME), NURSE, by, where)}

    detail = home.refused(dangling)
    assert str(ReasonCode.INVALID_TOPIC_FORMAT) in detail
    assert fragment in detail
    assert "topics/home.md, line 3" in detail
    assert home.text(HOME) == before  # the refused edits are not installed
    assert not (home.root / "memory" / NOTES).exists()
    home.check()


def test_a_write_removing_the_partly_successor_in_the_same_file_is_refused(home: Home) -> None:
    home.write(nurse)
    home.write(moved)
    before = home.text(HOME)

    def dropping(batch: BatchInput, topics: TopicReader) -> Edits:
        marked, _berlin = topic_of(topics, HOME).blocks
        notes = render_topic(Topic("Notes", (citing(NOTES, "A note.", batch),)))
        return {NOTES: notes, HOME: render_topic(Topic("Home", (marked,)))}

    detail = home.refused(dropping)
    assert "topics/home.md, line 3: partly superseded by ^" in detail
    assert "which no longer exists" in detail
    assert home.text(HOME) == before


def test_reorganise_never_folds_a_partly_successor_into_its_twin(home: Home) -> None:
    def twins(batch: BatchInput, topics: TopicReader) -> Edits:
        edits = dict(nurse_and_berlin(batch, topics))  # MOVED in topics/berlin.md, the first holder
        # And word for word in topics/other.md, citing one turn (the same sources would be a duplicate).
        other = make_block(OTHER, MOVED, [("2026-11-20", [("user", batch.records[0].source_id)])], set())
        edits[OTHER] = render_topic(Topic("Other", (other,)))
        edits[HOME] = partly_marking(parse_topic(str(edits[HOME]), HOME), NURSE, other.id, OTHER)
        return edits

    home.write(twins)
    named = home.block(HOME, NURSE).partly
    assert named is not None
    reorganise(home.workspace)
    after = home.block(HOME, NURSE).partly
    assert after is not None
    assert after.by == named.by  # the block it names is still there, wherever it now is
    assert any(b.id == named.by for b in parse_topic(home.text(after.topic), after.topic).blocks)
    home.check()
