"""`dagmem.RecallQuery`: what recall is asked as one value, checked once when it is made (each refusal
names its argument, as the MCP tool reports it), frozen, and whole after a trip through pickle (the
cluster's wire)."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest

import dagmem
from dagmem.memory.recall import MAX_QUERY_CHARS, QueryRefused, RecallQuery


@pytest.mark.parametrize(
    ("args", "argument", "problem"),
    [
        ({"text": "   "}, "query", "query is empty"),
        ({"text": "x" * (MAX_QUERY_CHARS + 1)}, "query", "at most"),
        ({"text": "a\ud800"}, "query", "lone surrogate"),
        ({"text": "q", "held": 1}, "held", "held must be True or False"),
        ({"text": "q", "session_id": "../x"}, "session_id", "session id"),
        ({"text": "q", "session_id": "s", "tip": "bad id"}, "tip", "tip id"),
        ({"text": "q", "tip": "n1"}, "tip", "a tip needs its session_id"),
        ({"text": "q", "k": 0}, "k", "at least 1"),
        ({"text": "q", "k": True}, "k", "whole number"),
        ({"text": "q", "history": "yes"}, "history", "history must be true or false"),
        ({"text": "q", "floor": 2.0}, "floor", "floor must be a number from 0 to 1"),
        ({"text": "q", "siblings": "hide"}, "siblings", "siblings must be one of demote, exclude, include"),
    ],
)
def test_a_query_recall_cannot_take_is_refused_as_it_is_made(
    args: dict[str, Any], argument: str, problem: str
) -> None:
    with pytest.raises(QueryRefused, match=problem) as refused:
        RecallQuery(**args)
    assert refused.value.argument == argument
    assert isinstance(refused.value, dagmem.InvalidInput)


def test_a_query_is_frozen_and_survives_the_wire_whole() -> None:
    query = RecallQuery("where do trams go", session_id="s", tip="n2", k=3, history=True, floor=0)
    assert (query.k, query.siblings, query.floor, query.held) == (3, "demote", 0.0, False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        query.k = 4  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(query)) == query
    assert dagmem.RecallQuery is RecallQuery
