"""`Runtime.forget`: the runtime forgets a turn from every copy while it serves, recalls nothing of it
afterwards, and goes on writing; bad arguments raise `InvalidInput` and forget nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

import dagmem
from dagmem.memory.forget import verify_forgotten

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
