"""Recall and currency (DESIGN §12): each hit's status (`current` / `superseded` / `left`) from the index
alone, the default ranking (no superseded or left hit above a current one) against `history=True`
(relevance, labelled), a reader inside a left branch, the labels of `render_context`, an install that
marks an old block superseded, and one statement coming back once (a core fact and its turn's block).
The command line's and MCP's pass-through are tested in tests/cli and tests/serve."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dagmem import FileSessionStore, Hit, Runtime, render_context
from dagmem.memory.format import Supersession, Topic, inert, make_block, render_topic
from dagmem.memory.recall import RecallIndex, RecallQuery, RecallUpdater, search
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import BatchInput, Edits, TopicReader, records_of, write_batch
from dagmem.tests._hand_home import HOME, MOVED, HandHome

pytestmark = pytest.mark.anyio


def ids(hits: list[Hit]) -> list[str | None]:
    return [hit.block_id for hit in hits]


@pytest.fixture
def hand(tmp_path: Path) -> HandHome:
    return HandHome(tmp_path / "home")


def test_a_superseded_block_ranks_below_its_successor_unless_history_is_asked(hand: HandHome) -> None:
    query = "do I live in Paris near the canal"  # Paris's words: by relevance alone it comes first
    by_relevance = hand.recall(query, history=True)
    assert ids(by_relevance)[:2] == [hand.paris_id, hand.berlin_id]
    paris = by_relevance[0]
    assert (paris.status, paris.superseded_by, paris.superseded_on) == ("superseded", hand.berlin_id, MOVED)
    assert by_relevance[1].status == "current"
    assert by_relevance[1].superseded_by is None

    default = hand.recall(query)
    assert ids(default)[:2] == [hand.berlin_id, hand.paris_id]
    assert default[1].status == "superseded"  # still there, labelled, after every current hit
    assert {h.block_id: h.score for h in default} == {h.block_id: h.score for h in by_relevance}


def test_a_left_alternative_ranks_below_the_accepted_one_except_from_its_own_tip(hand: HandHome) -> None:
    query = "which conference city Lisbon hall"
    for session in (None, "s1"):  # nobody in particular, and a reader in another session
        hits = hand.recall(query, session)
        assert ids(hits)[:2] == [hand.kyoto_id, hand.lisbon_id]
        assert [h.status for h in hits[:2]] == ["current", "left"]
        history = hand.recall(query, session, history=True)
        assert ids(history)[0] == hand.lisbon_id
        assert history[0].status == "left"
    # From the left branch's own tip that branch is the reader's: on and current, first.
    own = hand.recall(query, "s3", hand.lisbon)
    assert ids(own)[0] == hand.lisbon_id
    assert (own[0].status, own[0].branch) == ("current", "on")
    kyoto = next(h for h in own if h.block_id == hand.kyoto_id)
    assert kyoto.branch == "sibling"
    # From the head (Kyoto's branch), Lisbon is a left sibling.
    head = hand.recall(query, "s3")
    assert ids(head)[:2] == [hand.kyoto_id, hand.lisbon_id]
    assert (head[1].status, head[1].branch) == ("left", "sibling")


def test_render_context_labels_a_hit_that_is_not_current(hand: HandHome) -> None:
    hits = hand.recall("do I live in Paris near the canal", history=True)
    hits += hand.recall("which conference city Lisbon hall", history=True)
    text = render_context(hits)
    paris = next(line for line in text.splitlines() if "Paris canal" in line)
    assert f"(superseded {MOVED} by {hand.berlin_id})" in paris
    lisbon = next(line for line in text.splitlines() if "Lisbon hall" in line)
    assert "(left branch: said on a branch of the conversation that was edited or retried away)" in lisbon
    berlin = next(line for line in text.splitlines() if "I live in Berlin now" in line)
    assert "superseded" not in berlin
    assert "left branch" not in berlin


class Scripted:
    """A distiller that edits as it is told (the test's hand on the transaction)."""

    name = "scripted"

    def __init__(self, edits: dict[str, str]) -> None:
        self.edits = edits

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        for path in self.edits:
            topics.read(path)  # what the install checks nobody changed meanwhile
        return self.edits


def test_an_install_that_marks_an_old_block_superseded_updates_its_row(tmp_path: Path) -> None:
    root = tmp_path / "home"
    store = FileSessionStore(root, fsync=False)
    workspace = Workspace(root / "memory", fsync=False, on_install=RecallUpdater())
    old = store.append("s1", "user", "My bike is red, a red city bike.")
    taken: set[str] = set()
    paris = make_block(
        HOME, "User: " + inert(old.content), [("2026-11-01", [("user", f"s1/{old.id}")])], taken
    )
    write_batch(
        workspace, "s1", records_of("s1", [old]), Scripted({HOME: render_topic(Topic("Home", (paris,)))})
    )
    query = "what colour is my bike red"
    first = search(RecallIndex.open(root / "memory"), RecallQuery(query))
    assert [(h.block_id, h.status) for h in first] == [(paris.id, "current")]

    new = store.append("s1", "user", "I painted my bike blue.")
    blue = make_block(
        HOME, "User: " + inert(new.content), [("2026-11-20", [("user", f"s1/{new.id}")])], taken
    )
    marked = dataclasses.replace(paris, superseded=Supersession(blue.id, HOME, "2026-11-20", "update"))
    edits = {HOME: render_topic(Topic("Home", (marked, blue)))}
    write_batch(workspace, "s1", records_of("s1", [new]), Scripted(edits))
    index = RecallIndex.open(root / "memory")  # the snapshot and the delta line the install appended
    assert index.replayed == {}  # nothing read from the topic files: the delta held it
    rows = index.block_rows(paris.id)
    assert len(rows) == 1
    assert index.entry(rows[0]).superseded == (blue.id, HOME, "2026-11-20")
    hits = search(index, RecallQuery(query, history=True))
    assert [(h.block_id, h.status, h.superseded_by) for h in hits][:1] == [(paris.id, "superseded", blue.id)]


async def test_a_core_fact_and_its_turns_topic_block_come_back_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with Runtime.open(home, token_threshold=50) as rt:
        await rt.append("s1", "user", "I am vegetarian. What should I cook tonight?")
        await rt.end_session("s1")
        await rt.flush(force=True)
        core = await rt.core_async()
        assert "I am vegetarian." in core
        topics = {p.name for p in (home / "memory" / "topics").glob("*.md")}
        assert len(topics) >= 2  # the sentence in core.md, the whole turn in its topic
        hits = await rt.recall("am I vegetarian", k=10, floor=0.0)
    said = [h for h in hits if "vegetarian" in h.text]
    assert len(said) == 1, [(h.topic, h.text) for h in said]  # one statement, once
    rendered = render_context(hits, core)
    assert rendered.count("I am vegetarian.") == 1, rendered
