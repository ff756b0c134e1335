"""The one walk to the root (`ancestors`): every walker but the oracles' own uses it, over a plain mapping,
a snapshot's predecessors or the runtime's DAG view alike, and a damaged DAG ends it rather than loops."""

from __future__ import annotations

import pytest

from dagmem.memory.errors import BrokenChain, UnknownNode
from dagmem.memory.format import ancestors, walk_branch
from dagmem.memory.policy import DagView
from dagmem.memory.recall import path_to

# r <- a <- b <- c, and a fork a <- x
FORK: dict[str, str | None] = {"r": None, "a": "r", "b": "a", "c": "b", "x": "a"}


def test_ancestors_is_the_tip_then_each_predecessor_to_the_root() -> None:
    assert ancestors(FORK, "c") == ["c", "b", "a", "r"]
    assert ancestors(FORK, "x") == ["x", "a", "r"]
    assert ancestors(FORK, "r") == ["r"]


def test_a_damaged_dag_ends_the_walk() -> None:
    assert ancestors(FORK, "nowhere") == []
    assert ancestors({"b": "a", "a": "gone"}, "b") == ["b", "a"]  # a missing predecessor
    assert ancestors({"a": "b", "b": "c", "c": "a"}, "a") == ["a", "b", "c"]  # a cycle


def test_walk_branch_is_the_walk_reversed_and_names_the_damage() -> None:
    assert walk_branch("s", FORK, "c") == ["r", "a", "b", "c"]
    with pytest.raises(UnknownNode):
        walk_branch("s", FORK, "nowhere")
    with pytest.raises(BrokenChain, match="'gone' does not exist") as missing:
        walk_branch("s", {"b": "a", "a": "gone"}, "b")
    assert missing.value.node_id == "a"
    with pytest.raises(BrokenChain, match="cycle") as cycle:
        walk_branch("s", {"a": "b", "b": "c", "c": "a"}, "a")
    assert cycle.value.node_id == "a"


def test_the_runtime_dag_view_is_walked_by_the_same_walk() -> None:
    """The runtime's recall path comes from the session actor's DAG view, with no adapter in between."""
    view = DagView("s")
    for node_id, predecessor in FORK.items():
        view.add(node_id, predecessor, tokens=1)
    assert ancestors(view, "c") == ancestors(FORK, "c")
    assert path_to(view, "x") == path_to(FORK, "x") == frozenset({"x", "a", "r"})
