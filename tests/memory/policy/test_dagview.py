"""The DAG view's running sums, walks and ancestor queries against a brute-force oracle."""

from __future__ import annotations

import random

import pytest

from dagmem.memory.errors import UnknownNode
from dagmem.memory.policy import DagView, Unwritten


class Brute:
    """The definitions of DESIGN §3, computed the slow obvious way."""

    def __init__(self) -> None:
        self.parent: dict[str, str | None] = {}
        self.tokens: dict[str, int] = {}
        self.marked: dict[str, bool] = {}

    def path(self, node: str) -> list[str]:
        out: list[str] = []
        current: str | None = node
        while current is not None:
            out.append(current)
            current = self.parent[current]
        return out[::-1]

    def unwritten(self, node: str) -> list[str]:
        out: list[str] = []
        for x in reversed(self.path(node)):
            if self.tokens[x]:
                if self.marked[x]:
                    break
                out.append(x)
        return out[::-1]

    def tips(self) -> list[str]:
        parents = set(self.parent.values())
        return [n for n in self.parent if n not in parents]


def check(view: DagView, brute: Brute) -> None:
    assert sorted(view.tips()) == sorted(brute.tips())
    for node in brute.parent:
        ids = brute.unwritten(node)
        assert view.unwritten_records(node) == ids
        assert view.unwritten(node) == Unwritten(sum(brute.tokens[i] for i in ids), len(ids))
    union = {i for tip in brute.tips() for i in brute.unwritten(tip)}
    assert view.pending_records() == len(union)


@pytest.mark.parametrize("seed", range(40))
def test_random_operations_match_the_brute_force_definitions(seed: int) -> None:
    rng = random.Random(seed)
    view, brute = DagView("s"), Brute()
    for step in range(rng.randint(20, 120)):
        nodes = list(brute.parent)
        action = rng.random()
        if not nodes or action < 0.6:
            node = f"n{step}"
            tips = brute.tips()
            if not nodes or rng.random() < 0.05:
                parent = None
            elif rng.random() < 0.7:
                parent = rng.choice(tips)
            else:
                parent = rng.choice(nodes)  # a fork in the middle
            tokens = 0 if rng.random() < 0.2 else rng.randint(1, 50)
            marked = tokens > 0 and rng.random() < 0.1
            view.add(node, parent, tokens=tokens, marked=marked)
            brute.parent[node], brute.tokens[node], brute.marked[node] = parent, tokens, marked
        elif action < 0.85:
            # Mark the oldest unwritten records of some branch, as a batch landing does.
            target = rng.choice(nodes)
            ids = brute.unwritten(target)[: rng.randint(1, 6)]
            view.mark(ids)
            for i in ids:
                brute.marked[i] = True
        elif action < 0.95:
            node = rng.choice(nodes)
            view.set_tokens(node, 0)  # rewound
            brute.tokens[node], brute.marked[node] = 0, False
        else:
            # Arbitrary marks (a host's file), not a prefix: sums must stay exact anyway.
            ids = [n for n in rng.sample(nodes, min(3, len(nodes))) if brute.tokens[n]]
            view.mark(ids)
            for i in ids:
                brute.marked[i] = True
        check(view, brute)


@pytest.mark.parametrize("seed", range(10))
def test_is_ancestor_matches_the_walk(seed: int) -> None:
    rng = random.Random(seed)
    view, brute = DagView("s"), Brute()
    for i in range(300):
        nodes = list(brute.parent)
        parent = (
            None
            if not nodes or rng.random() < 0.02
            else rng.choice(nodes[-20:] if rng.random() < 0.8 else nodes)
        )
        view.add(f"n{i}", parent, tokens=1)
        brute.parent[f"n{i}"], brute.tokens[f"n{i}"], brute.marked[f"n{i}"] = parent, 1, False
    nodes = list(brute.parent)
    for _ in range(2000):
        a, b = rng.choice(nodes), rng.choice(nodes)
        assert view.is_ancestor(a, b) == (a in brute.path(b))


def test_the_per_turn_sum_of_a_tip_is_constant_time_state() -> None:
    view = DagView("s")
    view.add("a", None, tokens=5)
    view.add("b", "a", tokens=7)
    view.add("t", "b", tokens=0)  # a tool row: not a record, does not stop the walk
    assert view.unwritten("t") == Unwritten(12, 2)
    view.mark(["a"])
    assert view.unwritten("t") == Unwritten(7, 1)
    assert view.unwritten_records("t") == ["b"]


def test_unknown_nodes_are_named() -> None:
    view = DagView("s")
    with pytest.raises(UnknownNode, match="'ghost'"):
        view.add("x", "ghost", tokens=1)
    assert len(view) == 0
