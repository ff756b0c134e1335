"""`dagmem.Turn`: a turn as one value, checked once when it is made (a `Turn` that exists is one the store
takes as it is), frozen, and whole after a trip through pickle (the cluster's wire)."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest

import dagmem
from dagmem import HEAD, GitContext, InvalidInput, MemorySessionStore, Role, Turn


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"role": "robot", "content": "x"}, "invalid role 'robot'"),
        ({"role": "user", "content": "\ud800"}, "lone surrogate"),
        ({"role": "user", "content": "x", "node_id": "not an id"}, "node id"),
        ({"role": "user", "content": "x", "predecessor": "../up"}, "predecessor id"),
        ({"role": "user", "content": "x", "metadata": {"spawned": True}}, "'spawned' is dagmem's own"),
        ({"role": "user", "content": "x", "metadata": {"display": 3}}, "'display' must be a string"),
        ({"role": "user", "content": "x", "spawned": 1}, "spawned must be True or False"),
        ({"role": "user", "content": "x", "spawned_from": "p"}, "spawned_from"),
        ({"role": "user", "content": "x", "origin": "elsewhere"}, "invalid origin 'elsewhere'"),
        (
            {"role": "user", "content": "x", "git": {"repo": "/r", "branch": "a\nb"}},
            "git must be a GitContext",
        ),
        ({"role": "user", "content": "x", "forgotten_at": 1.0}, "a tombstone"),
    ],
)
def test_a_turn_that_may_not_be_one_is_refused_as_it_is_made(args: dict[str, Any], problem: str) -> None:
    with pytest.raises(InvalidInput, match=problem):
        Turn(**args)


def test_a_turn_holds_its_arguments_checked_and_its_node_holds_what_dagmem_adds() -> None:
    git = GitContext("/src/app/.git", "main")
    turn = Turn("user", "a page", metadata={"k": [1]}, spawned=True, origin="tool", git=git.to_json())
    assert (turn.role, turn.predecessor, turn.git) == (Role.USER, HEAD, git)  # the JSON read as a context
    assert turn.node_metadata() == {"k": [1], "spawned": True, "origin": "tool", "git": git.to_json()}
    assert Turn("user", "typed", origin="user").node_metadata() == {}  # the role's default origin is not kept
    assert Turn("user", "", forgotten_at=5.0).node_metadata() == {"forgotten_at": 5.0}


def test_a_turn_is_frozen_and_survives_the_wire_whole() -> None:
    turn = Turn(
        "assistant", "an answer", predecessor="n1", node_id="n2", metadata={"k": 1}, git=GitContext("/r")
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        turn.content = "another"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(turn)) == turn
    store = MemorySessionStore()
    store.append("s", "user", "a question", node_id="n1")
    node = store.append_turn("s", pickle.loads(pickle.dumps(turn)))
    assert (node.id, node.predecessor, node.metadata["git"]) == ("n2", "n1", {"repo": "/r"})
    assert dagmem.Turn is Turn
