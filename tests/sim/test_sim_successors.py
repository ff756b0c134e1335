"""The simulator oracle's currency check (DESIGN §12): no superseded block outranks its successor by
default, and the check is off (no index opened) when no topic file records a supersession."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

import dagmem
from dagmem.memory import format as fmt
from dagmem.memory.recall import RecallIndex, RecallQuery
from dagmem.sim import _recall_oracle as oracle


@pytest.mark.anyio
async def test_the_check_is_off_without_supersessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with dagmem.Runtime.open(tmp_path, token_threshold=20) as rt:
        await rt.append("s", "user", "I live in Paris and I like trams.")
        await rt.append("s", "assistant", "Paris has lovely trams.")
        await rt.flush(force=True)

    def never(*_args: object, **_kwargs: object) -> object:
        raise AssertionError("the index was opened although nothing is superseded")

    assert (tmp_path / "memory" / "topics").is_dir()
    monkeypatch.setattr(RecallIndex, "open", never)
    assert oracle.check_successors(tmp_path / "memory") == []


def _workspace(memory: Path) -> tuple[str, str]:
    """topics/home.md: "I live in Paris." superseded by "I moved to Berlin, no longer Paris."."""
    taken: set[str] = set()
    source = [("2026-01-01", [("user s1/a", "s1/a")])]
    old = fmt.make_block("topics/home.md", "User: “I live in Paris.”", source, taken)
    new = fmt.make_block("topics/home.md", "User: “I moved to Berlin, no longer Paris.”", source, taken)
    mark = fmt.Supersession(by=new.id, topic="topics/home.md", date="2026-01-02", reason="update")
    old = dataclasses.replace(old, superseded=mark)
    (memory / "topics").mkdir(parents=True)
    (memory / "topics" / "home.md").write_text(
        fmt.render_topic(fmt.Topic("Home", (old, new))), encoding="utf-8"
    )
    return old.id, new.id


def _hit(block_id: str, **extra: Any) -> dagmem.Hit:
    hit = dagmem.Hit(text="", topic="topics/home.md", block_id=block_id, score=1.0, branch=None, date=None,
                     evidence=())  # fmt: skip
    return hit.model_copy(update=extra)


def test_a_superseded_block_above_its_current_successor_is_a_violation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    old, new = _workspace(memory)
    asked: list[str] = []
    order: list[dagmem.Hit] = []

    def search(_index: object, query: RecallQuery, **_kwargs: object) -> list[dagmem.Hit]:
        asked.append(query.text)
        return order

    monkeypatch.setattr(RecallIndex, "open", lambda _memory: object())
    monkeypatch.setattr(oracle, "search", search)
    order[:] = [_hit(new), _hit(old)]
    assert oracle.check_successors(memory) == []
    assert asked == ["paris"]  # the word both claims say ("user" is in every claim, as often)
    order[:] = [_hit(old), _hit(new)]
    [violation] = oracle.check_successors(memory)
    assert violation.kind == "recall-superseded-above-successor"
    assert violation.subject == old
    if "status" in dagmem.Hit.model_fields:  # a successor that is not current for the reader: no rule
        order[:] = [_hit(old), _hit(new, status="left")]
        assert oracle.check_successors(memory) == []
