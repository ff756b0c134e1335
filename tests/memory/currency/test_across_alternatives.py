"""Supersession across topic files never links two alternatives of one fork (those are `left`)."""

from __future__ import annotations

from pathlib import Path

import pytest

import dagmem
from dagmem.memory.format import parse_topic

pytestmark = pytest.mark.anyio


async def test_an_edited_prompt_does_not_supersede_the_alternative_it_replaced(tmp_path: Path) -> None:
    async with dagmem.Runtime.open(tmp_path, token_threshold=30) as rt:
        await rt.append("s1", "user", "Let me tell you about my year.")
        offer = await rt.append("s1", "assistant", "Go on.")
        await rt.append("s1", "user", "Update: I moved to Berlin for work.")
        await rt.append("s1", "assistant", "Berlin, nice.")
        # The prompt edited: the same fork, another value. An alternative, never a newer value.
        await rt.append("s1", "user", "Update: I relocated to Rome for work.", predecessor=offer)
        await rt.append("s1", "assistant", "Rome, nice.")
        await rt.end_session("s1")
        await rt.flush(force=True)
    marked = {
        block.claim: block.superseded
        for path in (tmp_path / "memory" / "topics").glob("*.md")
        if path.name != "index.md"
        for block in parse_topic(path.read_text("utf-8"), f"topics/{path.name}").blocks
    }
    berlin = [mark for claim, mark in marked.items() if "Berlin" in claim]
    rome = [mark for claim, mark in marked.items() if "Rome" in claim]
    assert berlin
    assert rome
    assert all(mark is None for mark in berlin + rome)
