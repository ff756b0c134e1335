"""Alternatives and left branches, from the DAG alone (no text).

At a fork, children of the same **side** are alternatives of one another: two user prompts (an edited
prompt), two replies (a retry). The side is the child's role as the DAG has it, with one equivalence: a
`tool` row counts as the assistant's side, because a reply that starts with a tool call is still a reply
(a retry whose first attempt called a tool and whose second answered at once is a retry, not a side
branch). A child of another side, a node appended with `spawned=True`, and a separate root start **side
branches**, never alternatives.

An alternative is **left** when the head path runs through another alternative of its fork; everything
below a left alternative is left too (nested forks: a node is left when any fork on its root path makes
it so). Only forks on the head path can make anything left, so `left_nodes` is one walk down from them.

For a reader whose tip lies elsewhere (inside a left alternative, or on a side branch), each fork on its
own path is decided by the path it took, and the head decides the forks the reader's path does not pass
through: inside a left alternative, the reader's branch is its own and the head's is the one left.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

from ..format import ancestors
from ._shape import SessionShape, ShapeSource

__all__ = ["are_alternatives", "between_alternatives", "left_nodes", "side_of"]

_SIDES = {"tool": "assistant"}


def side_of(role: str) -> str:
    """Which side of a turn a role speaks for: a tool row is the assistant's."""
    return _SIDES.get(role, role)


def _alternative(shape: SessionShape, a: str, b: str) -> bool:
    """Whether two children of one fork are alternatives of each other."""
    return (
        a != b
        and a not in shape.spawned
        and b not in shape.spawned
        and side_of(shape.roles.get(a, "")) == side_of(shape.roles.get(b, ""))
    )


def _children(predecessors: Mapping[str, str | None]) -> dict[str, list[str]]:
    children: dict[str, list[str]] = {}
    for node_id, parent in predecessors.items():
        if parent is not None:
            children.setdefault(parent, []).append(node_id)
    return children


def left_nodes(shape: SessionShape, tip: str | None = None) -> frozenset[str]:
    """Every node lying inside a left alternative (O(nodes)): left by the head, or for a reader at `tip`
    (a node of the shape), by the choices its own path makes and by the head's at the others (a fork the
    reader passes on a side branch, or at its tip, is still the head's to decide)."""
    preds = shape.predecessors
    head = shape.head if shape.head is not None and shape.head in preds else None
    mine = ancestors(preds, tip) if tip is not None and tip in preds and tip != head else []
    if head is None and not mine:
        return frozenset()
    taken = {fork: below for below, fork in pairwise(mine)}  # the reader's child at each fork it passes
    children = _children(preds)
    left: set[str] = set()
    stack: list[str] = []
    for below, fork in pairwise(mine):
        stack.extend(c for c in children.get(fork, ()) if _alternative(shape, c, below))
    for below, fork in pairwise(ancestors(preds, head) if head is not None else []):
        own = taken.get(fork)
        if own is not None and (own == below or _alternative(shape, own, below)):
            continue  # the reader's own choice among these alternatives
        stack.extend(c for c in children.get(fork, ()) if _alternative(shape, c, below))
    while stack:
        node = stack.pop()
        if node not in left:
            left.add(node)
            stack.extend(children.get(node, ()))
    return frozenset(left)


def are_alternatives(shape: SessionShape, a: str, b: str) -> bool:
    """Whether `a` and `b` lie on different alternatives of one fork (their deepest common ancestor)."""
    if a not in shape.predecessors or b not in shape.predecessors:
        return False
    path_a = ancestors(shape.predecessors, a)  # a first
    on_a = {node: i for i, node in enumerate(path_a)}
    below_b = None
    for node in ancestors(shape.predecessors, b):
        if node in on_a:
            i = on_a[node]
            if i == 0 or below_b is None:
                return False  # one is the other's ancestor: one path, never alternatives
            return _alternative(shape, path_a[i - 1], below_b)
        below_b = node
    return False  # separate roots: side branches of each other


def between_alternatives(
    shapes: ShapeSource,
    old: Iterable[tuple[str, str | None]],
    new: Iterable[tuple[str, str | None]],
) -> bool:
    """The rule "never a supersession between two alternatives of one fork": True when some session holds
    evidence of both blocks and there every pair of them lies on alternatives (the newer block was said
    on a branch the older one's never led to: that is an edited prompt or a retry, which makes the other
    one left, not superseded). Evidence is (session, node) pairs; a node None is unknown and never an
    alternative of anything."""
    older = _by_session(old)
    newer = _by_session(new)
    for session in sorted(older.keys() & newer.keys()):
        shape = shapes(session)
        if shape is None:
            continue
        if all(
            a is not None and b is not None and are_alternatives(shape, a, b)
            for a in older[session]
            for b in newer[session]
        ):
            return True
    return False


def _by_session(evidence: Iterable[tuple[str, str | None]]) -> dict[str, Sequence[str | None]]:
    out: dict[str, list[str | None]] = {}
    for session, node in evidence:
        out.setdefault(session, []).append(node)
    return dict(out)
