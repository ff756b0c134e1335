"""A first-person fact said alone is filed once: in the core master, not also in a topic file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dagmem
from dagmem.cli import main

pytestmark = pytest.mark.anyio


async def test_a_fact_said_alone_is_filed_in_the_core_only_and_verify_is_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / ".dagmem"
    async with dagmem.Runtime.open(home, token_threshold=50) as rt:
        await rt.append("s1", "user", "I live in Paris and I work as a nurse.")
        await rt.append("s1", "assistant", "Nice, Paris is lovely.")
        await rt.append("s1", "user", "I am vegetarian.")
        await rt.end_session("s1")
        await rt.flush(force=True)
        hits = await rt.recall("am I vegetarian?", k=5)
    topics = home / "memory" / "topics"
    holders = [p.name for p in sorted(topics.glob("*.md")) if "I am vegetarian." in p.read_text()]
    assert holders == ["core.md"]
    assert sum("I am vegetarian." in h.text for h in hits) <= 1
    capsys.readouterr()
    assert main(["verify", "--strict", "--json", "--home", str(home)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert not report.get("violations")
    assert not report.get("warnings")
