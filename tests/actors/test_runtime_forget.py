"""`Runtime.forget`: the runtime forgets a turn from every copy while it serves, recalls nothing of it
afterwards, and goes on writing (its slot index the file the forget left, rebuilt); bad arguments raise
`InvalidInput` and forget nothing."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from pathlib import Path

import pytest

import dagmem
from dagmem.memory.forget import verify_forgotten
from dagmem.memory.format import anchor_of, parse_topic
from dagmem.tests._forget_homes import open_deleted

pytestmark = pytest.mark.anyio

SECRET = "hunter2-plover-88231-wombat"


async def test_the_runtime_forgets_a_turn_and_goes_on(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with dagmem.Runtime.open(home, git=True) as rt:
        await rt.append("s", "user", f"my vault password is {SECRET} remember the vault")
        await rt.append("s", "assistant", "I will remember the vault password.")
        await rt.flush(force=True)
        assert any(SECRET in hit.text for hit in await rt.recall("vault password"))

        report = await rt.forget(match=SECRET)

        assert isinstance(report, dagmem.ForgetReport)
        assert report.clean, report.copies
        assert report.targets == ["s/n1"]
        hits = await rt.recall("vault password")
        assert all(SECRET not in hit.text for hit in hits)
        assert all(SECRET not in e.text for hit in hits for e in hit.evidence)
        await rt.append("s", "user", "the garden needs watering on sunday")
        await rt.flush(force=True)
        assert any("watering" in hit.text for hit in await rt.recall("garden watering"))
    assert verify_forgotten(home) == []


async def test_bad_arguments_raise_invalid_input_and_forget_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with dagmem.Runtime.open(home) as rt:
        await rt.append("s", "user", "a turn to keep about the harbour")
        for kwargs in ({}, {"node": "s"}, {"session": "nope"}, {"match": "x", "node": "s/n1"}):
            with pytest.raises(dagmem.InvalidInput):
                await rt.forget(**kwargs)  # type: ignore[arg-type]
        assert (await rt.forget(match="not said anywhere")).targets == []
    assert "harbour" in next((home / "sessions/s/history/0000").glob("*.json")).read_text()


async def test_after_a_forget_the_writer_uses_the_rebuilt_slot_index_and_holds_no_deleted_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The forget deletes the slot index (its rows name the forgotten words) to be rebuilt from the
    files: the writer must not keep the deleted file open, and the next write's said times and
    supersession lookups go to the file at its path."""
    home = tmp_path / "home"
    slots = home / "memory" / ".dagmem" / "slots.sqlite3"
    async with dagmem.Runtime.open(home) as rt:
        await rt.append("s", "user", "I live in Lisbon, near the river.")
        await rt.append("s", "assistant", "Lisbon is lovely.")
        await rt.append("s", "user", f"my vault password is {SECRET} remember the vault")
        await rt.append("s", "assistant", "I will remember the vault password.")
        await rt.flush(force=True)
        assert slots.is_file()
        assert open_deleted("slots.sqlite3") == []

        report = await rt.forget(match=SECRET)

        assert report.clean, report.copies
        assert not slots.exists()
        assert open_deleted("slots.sqlite3") == []  # before: the writer's connection to the deleted file
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="dagmem"):
            await rt.append("s", "user", "I live in Porto now, we moved last week.")
            await rt.append("s", "assistant", "Porto, how exciting.")
            await rt.flush(force=True)
        assert not [r for r in caplog.records if "slot index is unusable" in r.getMessage()]
        assert slots.is_file()
        assert open_deleted("slots.sqlite3") == []
        with contextlib.closing(sqlite3.connect(slots)) as db:
            said = set(db.execute("SELECT session, anchor FROM said"))
        assert {("s", anchor_of("s/n5")), ("s", anchor_of("s/n6"))} <= said  # kept in the rebuilt file
    claims = {
        block.claim: block.superseded is not None
        for path in (home / "memory" / "topics").glob("*.md")
        if path.name != "index.md"
        for block in parse_topic(path.read_text("utf-8"), f"topics/{path.name}").blocks
    }
    lisbon = [sup for claim, sup in claims.items() if "Lisbon" in claim]
    porto = [sup for claim, sup in claims.items() if "Porto now" in claim]
    assert lisbon
    assert all(lisbon)  # superseded: the lookup found them in the rebuilt index
    assert porto
    assert not any(porto)
    assert verify_forgotten(home) == []
