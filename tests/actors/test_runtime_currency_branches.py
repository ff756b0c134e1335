"""Currency across branch shapes, through the public API on asyncio and trio: a sub-agent's side branch
(`spawned=True`) whose newer statement replaces one said after the fork on the main branch; the order
said, not the order written, when a boundary writes the head branch first; a later update that replaces
the value said on each alternative of an edited prompt; and a reader inside the left alternative, who
gets its own branch's value first (the head's alternative is left for it), and never a sub-agent's
sibling turn above a value of its own branch."""

from __future__ import annotations

from pathlib import Path

import pytest

import dagmem

pytestmark = pytest.mark.anyio

QUESTION = "where do I live?"


def _cites(hit: dagmem.Hit, session: str, node: str) -> bool:
    return any(e.session == session and e.node == node for e in hit.evidence)


def _first_citing(hits: list[dagmem.Hit], *said: tuple[str, str]) -> tuple[str, str] | None:
    """Which of the statements `said` the first hit citing any of them cites."""
    for hit in hits:
        for statement in said:
            if _cites(hit, *statement):
                return statement
    return None


def _status_of(hits: list[dagmem.Hit], session: str, node: str) -> str | None:
    return next((h.status for h in hits if _cites(h, session, node)), None)


async def test_a_side_branch_statement_supersedes_one_said_after_its_fork(tmp_path: Path) -> None:
    async with dagmem.Runtime.open(tmp_path) as rt:
        await rt.append("s", "user", "Can you help me plan my week?")
        base = await rt.append("s", "assistant", "Of course, tell me about it.")
        paris = await rt.append("s", "user", "I live in Paris.")  # the main branch, after the fork
        await rt.append("s", "assistant", "Noted.")
        # A sub-agent's turns off `base`, said later: Paris lies off their path, but on no alternative.
        berlin = await rt.append("s", "user", "Update: I moved to Berlin.", predecessor=base, spawned=True)
        await rt.append("s", "assistant", "Got it.", predecessor=berlin, spawned=True)
        await rt.end_session("s")
        await rt.flush(force=True)
        for reader in ({}, {"session_id": "s"}, {"session_id": "other"}):
            if reader.get("session_id") == "other":
                await rt.append("other", "user", "Hello there.")
            hits = await rt.recall(QUESTION, k=10, **reader)  # type: ignore[arg-type]
            assert _first_citing(hits, ("s", berlin), ("s", paris)) == ("s", berlin), reader
        labelled = await rt.recall(QUESTION, k=10, history=True)
        assert _status_of(labelled, "s", paris) == "superseded"
        assert _status_of(labelled, "s", berlin) == "current"


async def test_the_order_said_decides_not_the_order_written(tmp_path: Path) -> None:
    async with dagmem.Runtime.open(tmp_path) as rt:
        await rt.append("s", "user", "I live in Paris.")
        base = await rt.append("s", "assistant", "Noted.")
        # The side branch says Berlin first; the main branch says Rome after it. The boundary writes
        # the head branch (Paris, Rome) first, then the side branch: Berlin is written last, said before.
        berlin = await rt.append("s", "user", "Update: I moved to Berlin.", predecessor=base, spawned=True)
        await rt.append("s", "assistant", "Got it.", predecessor=berlin, spawned=True)
        rome = await rt.append("s", "user", "Update: I moved to Rome.", predecessor=base)
        await rt.append("s", "assistant", "Rome it is.")
        await rt.end_session("s")
        await rt.flush(force=True)
        hits = await rt.recall(QUESTION, k=10)
        assert _first_citing(hits, ("s", rome), ("s", berlin)) == ("s", rome)
        labelled = await rt.recall(QUESTION, k=10, history=True)
        assert _status_of(labelled, "s", rome) == "current"
        assert _status_of(labelled, "s", berlin) == "superseded"
        assert "Rome" in await rt.core_async()
        assert "Berlin" not in await rt.core_async()


async def _edited_city(rt: dagmem.Runtime) -> tuple[str, str, str]:
    """Paris, then an edited prompt: "I moved to Berlin" edited to "I moved to Rome" (the head's). Each
    turn alone is a core fact, filed in the core only."""
    paris = await rt.append("s1", "user", "I live in Paris.")
    berlin = await rt.append("s1", "user", "Update: I moved to Berlin.")
    rome = await rt.append("s1", "user", "Update: I moved to Rome.", predecessor=paris)
    await rt.end_session("s1")
    return paris, berlin, rome


async def test_a_reader_inside_the_left_alternative_gets_its_own_value_first(tmp_path: Path) -> None:
    async with dagmem.Runtime.open(tmp_path) as rt:
        paris, berlin, rome = await _edited_city(rt)
        await rt.flush(force=True)
        said = (("s1", paris), ("s1", berlin), ("s1", rome))
        # Paris has one recorded successor, Rome (the head's, written first): for this reader Rome is
        # left, so Paris is current for it, and ranks after Berlin, which no supersession could link.
        own = await rt.recall(QUESTION, session_id="s1", tip=berlin, k=10)
        assert _first_citing(own, *said) == ("s1", berlin)
        labelled = await rt.recall("I moved to Rome", session_id="s1", tip=berlin, k=10, history=True)
        assert _status_of(labelled, "s1", rome) == "left"  # the head's alternative, for this reader
        assert _status_of(labelled, "s1", berlin) == "current"
        head = await rt.recall(QUESTION, session_id="s1", k=10)
        assert _first_citing(head, *said) == ("s1", rome)


async def test_a_value_replaced_only_on_a_branch_the_reader_left_still_ranks_above_a_sibling(
    tmp_path: Path,
) -> None:
    async with dagmem.Runtime.open(tmp_path) as rt:
        paris = await rt.append("s1", "user", "I live in Paris.")
        berlin = await rt.append("s1", "user", "Update: I moved to Berlin.")
        # A sub-agent's turn off Paris that matches the question: a sibling for a reader at Berlin.
        side = await rt.append(
            "s1", "user", "Museums near where they live, a list of three.", predecessor=paris, spawned=True
        )
        await rt.append("s1", "user", "Update: I moved to Rome.", predecessor=paris)  # the head's
        await rt.end_session("s1")
        await rt.flush(force=True)
        # For this reader Paris's recorded successor (Rome) is left: Paris is current and, though it
        # comes after Berlin, it is the reader's own branch, so the sub-agent's turn comes after it.
        hits = await rt.recall(QUESTION, session_id="s1", tip=berlin, k=10)
        order = [s for h in hits for s in (("s1", berlin), ("s1", paris), ("s1", side)) if _cites(h, *s)]
        assert order == [("s1", berlin), ("s1", paris), ("s1", side)]
        assert [h.branch for h in hits if _cites(h, "s1", side)] == ["sibling"]


async def test_a_later_update_replaces_the_value_said_on_each_alternative(tmp_path: Path) -> None:
    async with dagmem.Runtime.open(tmp_path) as rt:
        paris, berlin, rome = await _edited_city(rt)
        await rt.flush(force=True)
        oslo = await rt.append("s2", "user", "Update: I moved to Oslo.")
        await rt.end_session("s2")
        await rt.flush(force=True)
        said = (("s2", oslo), ("s1", paris), ("s1", berlin), ("s1", rome))
        for reader in ({}, {"session_id": "s1"}, {"session_id": "s1", "tip": berlin}):
            hits = await rt.recall(QUESTION, k=10, **reader)  # type: ignore[arg-type]
            assert _first_citing(hits, *said) == ("s2", oslo), reader
        labelled = await rt.recall("I moved to Berlin", session_id="s1", tip=berlin, k=10, history=True)
        assert _status_of(labelled, "s1", berlin) == "superseded"  # Oslo replaced it too
        assert "Oslo" in await rt.core_async()
        assert "Berlin" not in await rt.core_async()


async def test_an_exchange_joining_the_shared_turn_with_an_edited_away_prompt_is_left(tmp_path: Path) -> None:
    """The reply asked, the person answered, and the exchange block holds the question and the answer.
    Then the person edits that answer: the block cites the shared turns (on the new branch's path) and
    the abandoned prompt; it is the abandoned statement, `left` for readers on the new branch and for the
    core, and never ranks above the edited prompt's value."""
    async with dagmem.Runtime.open(tmp_path) as rt:
        await rt.append("s", "user", "Can you help me plan my week?")
        asked = await rt.append("s", "assistant", "Of course. Where do you live?")
        lisbon = await rt.append("s", "user", "I live in Lisbon.")
        await rt.flush(force=True)  # written together: one block cites the question and the answer
        porto = await rt.append("s", "user", "I live in Porto.", predecessor=asked)  # the edited prompt
        await rt.append("s", "assistant", "Porto it is.")
        await rt.end_session("s")
        await rt.flush(force=True)
        labelled = await rt.recall(QUESTION, session_id="s", tip=porto, k=10, history=True)
        spanning = [h for h in labelled if _cites(h, "s", lisbon)]
        assert any(_cites(h, "s", asked) for h in spanning)
        assert all(h.status == "left" for h in spanning)
        for reader in ({"session_id": "s", "tip": porto}, {"session_id": "s"}, {}):
            hits = await rt.recall(QUESTION, k=10, **reader)  # type: ignore[arg-type]
            assert _first_citing(hits, ("s", porto), ("s", lisbon)) == ("s", porto), reader
        # A reader inside the abandoned branch still has it as its own.
        own = await rt.recall(QUESTION, session_id="s", tip=lisbon, k=10, history=True)
        assert all(h.status == "current" for h in own if _cites(h, "s", lisbon))
        assert "Lisbon" not in await rt.core_async()
