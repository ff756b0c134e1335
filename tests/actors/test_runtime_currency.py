"""Issue 23's acceptance: the example a new user tried, through the public API, on asyncio and trio.

Paris and a nurse's job (session s1), then Berlin, "I am vegetarian" and its retraction (s2); an edited
prompt in s3 ("Lisbon, please." edited to "Kyoto, please."). Afterwards the core says Berlin and fish and
neither "I live in Paris" nor "I am vegetarian"; each question's top hit cites the newer turn and the older
one is labelled superseded (returned, labelled, with `history=True`); the edited-away alternative is
labelled left and ranks below the accepted one from another session, and is the top hit from its own tip.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import dagmem

pytestmark = pytest.mark.anyio

HISTORY: dict[str, Any] = {"history": True}  # `recall(..., history=True)`, by keyword


def _status(hit: dagmem.Hit) -> object:
    return getattr(hit, "status", None)


def _superseded_by(hit: dagmem.Hit) -> object:
    return getattr(hit, "superseded_by", None)


def _cites(hit: dagmem.Hit, session: str, node: str) -> bool:
    return any(e.session == session and e.node == node for e in hit.evidence)


async def test_the_issue_example_core_and_recall_know_what_is_still_true(tmp_path: Path) -> None:
    async with dagmem.Runtime.open(tmp_path, token_threshold=50) as rt:
        paris = await rt.append("s1", "user", "I live in Paris and I work as a nurse.")
        await rt.end_session("s1")
        berlin = await rt.append(
            "s2", "user", "Update: I moved to Berlin last month, I no longer live in Paris."
        )
        veggie = await rt.append("s2", "user", "I am vegetarian.")
        fish = await rt.append("s2", "user", "Sorry, scratch that: I am not vegetarian, I eat fish.")
        await rt.end_session("s2")
        # An edited prompt: "Lisbon, please." and its answer, then the prompt edited to "Kyoto, please.";
        # the head goes on from the edit, so the Lisbon branch is left. Lisbon's answer says more of the
        # question's words, so only currency can put Kyoto above it.
        await rt.append("s3", "user", "Where should I travel in October?")
        offer = await rt.append("s3", "assistant", "Lisbon or Kyoto are both lovely in October.")
        lisbon = await rt.append("s3", "user", "Lisbon, please.")
        lisbon_tip = await rt.append(
            "s3", "assistant", "Lisbon in October: we plan trams and tiles in October."
        )
        kyoto = await rt.append("s3", "user", "Kyoto, please.", predecessor=offer)
        await rt.append("s3", "assistant", "Kyoto in October: maples, temples and cool mornings.")
        await rt.end_session("s3")
        await rt.flush(force=True)

        core = await rt.core_async()
        assert "Berlin" in core
        assert "fish" in core
        assert "I live in Paris" not in core
        assert "I am vegetarian" not in core

        for question, new, old in (
            ("where do I live?", ("s2", berlin), ("s1", paris)),
            ("am I vegetarian?", ("s2", fish), ("s2", veggie)),
        ):
            hits = await rt.recall(question)  # nobody in particular, the default ranking
            assert _cites(hits[0], *new), (question, hits[0].text)
            assert _status(hits[0]) == "current"
            olds = [h for h in hits if _cites(h, *old)]
            assert len(olds) <= 1, f"{question}: the older statement came back {len(olds)} times"
            assert all(_status(h) == "superseded" for h in olds)
            everything = await rt.recall(question, **HISTORY)
            older = [h for h in everything if _cites(h, *old)]
            assert len(older) == 1, f"{question}: history=True returns the older statement once"
            assert _status(older[0]) == "superseded"
            assert _superseded_by(older[0]) in {h.block_id for h in everything if _cites(h, *new)}

        question = "what did we plan for October?"
        hits = await rt.recall(question, session_id="s1")  # from another session
        ranks = {
            name: next(i for i, h in enumerate(hits) if _cites(h, "s3", node))
            for name, node in (("lisbon", lisbon), ("kyoto", kyoto))
        }
        assert ranks["kyoto"] < ranks["lisbon"]
        assert _status(hits[ranks["lisbon"]]) == "left"
        assert _status(hits[ranks["kyoto"]]) == "current"
        own = await rt.recall(question, session_id="s3", tip=lisbon_tip)  # from the left branch's own tip
        assert _cites(own[0], "s3", lisbon)
        assert _status(own[0]) == "current"
        assert own[0].branch == "on"
