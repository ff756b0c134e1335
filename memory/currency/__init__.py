"""PROVISIONAL stand-in for cur-dag's `memory/currency` (CURRENCY.md §2), written by cur-recall so that
the reading side can be built and tested before cur-dag's branch is ready. Same names and shapes as the
contract; cur-dag's package replaces this file whole at the merge (take theirs).

Status from the DAG: alternatives (same-role children of one fork, neither spawned), left branches (an
alternative the head path does not run through while it runs through another), and a reader's branch
class, aware of a cross-session spawn."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "Reader",
    "SessionShape",
    "ShapeSource",
    "Status",
    "are_alternatives",
    "left_nodes",
    "resolve",
    "store_shapes",
]

Status = Literal["current", "superseded", "left"]
BranchClass = Literal["on", "sibling", "other"]


@dataclass(frozen=True)
class SessionShape:
    session_id: str
    predecessors: Mapping[str, str | None]
    roles: Mapping[str, str]
    spawned: frozenset[str]
    head: str | None
    spawned_from: tuple[str, str] | None


ShapeSource = Callable[[str], SessionShape | None]


def _path(shape: SessionShape, tip: str | None) -> frozenset[str]:
    out: list[str] = []
    seen: set[str] = set()
    node = tip
    while node is not None and node in shape.predecessors and node not in seen:
        seen.add(node)
        out.append(node)
        node = shape.predecessors[node]
    return frozenset(out)


def _children(shape: SessionShape) -> dict[str | None, list[str]]:
    children: dict[str | None, list[str]] = {}
    for node, parent in shape.predecessors.items():
        children.setdefault(parent, []).append(node)
    return children


def left_nodes(shape: SessionShape) -> frozenset[str]:
    """Every node inside an alternative the head path does not run through, at a fork it does."""
    head_path = _path(shape, shape.head)
    children = _children(shape)
    roots: list[str] = []
    for fork in head_path:
        kids = [c for c in children.get(fork, []) if c not in shape.spawned]
        taken = [c for c in kids if c in head_path]
        if not taken:
            continue
        role = shape.roles.get(taken[0])
        roots += [c for c in kids if c not in head_path and shape.roles.get(c) == role]
    left: set[str] = set()
    while roots:
        node = roots.pop()
        if node not in left:
            left.add(node)
            roots += children.get(node, [])
    return frozenset(left)


def are_alternatives(shape: SessionShape, a: str, b: str) -> bool:
    pa, pb = _path(shape, a), _path(shape, b)
    if a in pb or b in pa:
        return False
    children = _children(shape)
    for fork in pa & pb:
        kids = [c for c in children.get(fork, []) if c not in shape.spawned]
        ka = [c for c in kids if c in pa]
        kb = [c for c in kids if c in pb]
        if ka and kb and ka[0] != kb[0]:
            return shape.roles.get(ka[0]) == shape.roles.get(kb[0])
    return False


class Reader:
    """Who reads: a session and a tip (tip None = that session's head), or nobody in particular."""

    def __init__(self, shapes: ShapeSource, session_id: str | None = None, tip: str | None = None) -> None:
        self.shapes = shapes
        self.session_id = session_id
        self.tip = tip
        self._left: dict[str, frozenset[str]] = {}
        self._own: frozenset[str] | None = None

    def _shape(self, session: str) -> SessionShape | None:
        return self.shapes(session)

    def own_path(self) -> frozenset[str]:
        if self._own is None:
            shape = self._shape(self.session_id) if self.session_id is not None else None
            self._own = frozenset() if shape is None else _path(shape, self.tip or shape.head)
        return self._own

    def _left_of(self, session: str) -> frozenset[str]:
        if session not in self._left:
            shape = self._shape(session)
            self._left[session] = frozenset() if shape is None else left_nodes(shape)
        return self._left[session]

    def is_left(self, evidence: Iterable[tuple[str, str | None]]) -> bool:
        nodes = [(s, n) for s, n in evidence if n is not None]
        if not nodes:
            return False
        for session, node in nodes:
            if session == self.session_id and node in self.own_path():
                return False
            if node not in self._left_of(session):
                return False
        return True

    def branch(self, evidence: Iterable[tuple[str, str | None]]) -> BranchClass | None:
        if self.session_id is None:
            return None
        pairs = list(evidence)
        path = self.own_path()
        mine = [n for s, n in pairs if s == self.session_id and n is not None]
        if any(n in path for n in mine):
            return "on"
        # A child session's blocks are on for a reader on the parent's path through the spawn node;
        # a reader in a child sees the parent's root -> spawn node as on.
        own = self._shape(self.session_id)
        for session, node in pairs:
            if node is None or session == self.session_id:
                continue
            shape = self._shape(session)
            if shape is not None and shape.spawned_from is not None:
                parent, at = shape.spawned_from
                if parent == self.session_id and at in path:
                    return "on"
            if own is not None and own.spawned_from is not None and own.spawned_from[0] == session:
                parent_shape = self._shape(session)
                if parent_shape is not None and node in _path(parent_shape, own.spawned_from[1]):
                    return "on"
        return "sibling" if mine else "other"


def resolve(
    block_id: str,
    superseded_by: Callable[[str], str | None],
    evidence_of: Callable[[str], Sequence[tuple[str, str | None]]],
    reader: Reader,
) -> tuple[Status, str | None]:
    if reader.is_left(evidence_of(block_id)):
        return "left", None
    seen = {block_id}
    successor = superseded_by(block_id)
    first = successor
    while successor is not None and successor not in seen:
        if not reader.is_left(evidence_of(successor)):
            return "superseded", first
        seen.add(successor)
        successor = superseded_by(successor)
    return "current", None


def store_shapes(store: Any) -> ShapeSource:
    """Shapes read from a `SessionStore` (each session once per source; provisional: cur-dag's cache)."""
    memo: dict[str, SessionShape | None] = {}

    def shape(session_id: str) -> SessionShape | None:
        if session_id not in memo:
            if not store.has_session(session_id):
                memo[session_id] = None
            else:
                snap = store.load(session_id)
                spawned_from = snap.meta.spawned_from
                parent = tuple(spawned_from.split("/", 1)) if spawned_from else None
                memo[session_id] = SessionShape(
                    session_id,
                    {nid: n.predecessor for nid, n in snap.nodes.items()},
                    {nid: str(n.role) for nid, n in snap.nodes.items()},
                    frozenset(nid for nid, n in snap.nodes.items() if n.metadata.get("spawned") is True),
                    snap.meta.head,
                    parent if parent is not None and len(parent) == 2 else None,
                )
        return memo[session_id]

    return shape
