"""Who reads, and what a block is for them: left or not, its branch class, its status.

A `Reader` is a session and a tip (tip None: that session's head), or nobody in particular (session
None: what the core block shows every conversation). For a reader at tip T of session S:

- a node of another session is left when it lies inside a left alternative of that session (`left_nodes`);
- a node of S is left when it lies inside an alternative that path(T) did not take (at the forks path(T)
  passes through; the head decides the others): a reader whose tip lies inside a left branch sees that
  branch as its own, and the head's alternative of it as left;
- cross-session spawn: when S was spawned from (P, n), P is read likewise as from tip n: the parent's
  root → n is the reader's own too.

A block is left when it has evidence and every saying of it (a run of consecutive cited turns) runs into a
left branch (for this reader): an exchange joining the last shared turn with an abandoned prompt is the
abandoned statement, while a block said again on a kept branch stays current.
Branch classes (`on` / `sibling` / `other`) follow DESIGN's rule, spawn-aware: a reader on the parent's
path through the spawn node sees the child session's blocks as `on`; a reader in the child sees the
parent's root → node as `on`; everyone else sees the other session's blocks as `other`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from ..errors import UnknownNode, UnknownSession
from ._shape import SessionShape, ShapeSource, Status

__all__ = ["BranchClass", "Reader", "resolve"]

BranchClass = Literal["on", "sibling", "other"]

Evidence = Iterable[tuple[str, str | None]]


class Reader:
    """Who reads: a session and a tip (tip None = that session's head), or nobody in particular (session
    None). Raises `UnknownSession` / `UnknownNode` for a session or tip its shapes do not know. Answers
    are memoised: one reader per query (or per install), not per process."""

    def __init__(self, shapes: ShapeSource, session_id: str | None = None, tip: str | None = None) -> None:
        self.shapes = shapes
        self.session_id = session_id
        self.tip = tip
        self._shapes: dict[str, SessionShape | None] = {}
        self._left: dict[str, frozenset[str]] = {}
        self.path: frozenset[str] = frozenset()  # path(T) in the reader's session
        self.parent: tuple[str, frozenset[str]] | None = None  # (parent session, its root -> spawn node)
        self._spawn_node: str | None = None
        if session_id is None:
            return
        shape = self._shape(session_id)
        if shape is None:
            raise UnknownSession(session_id)
        tip = shape.head if tip is None else tip
        if tip is not None:
            if tip not in shape.predecessors:
                raise UnknownNode(session_id, tip)
            self.path = shape.path_to(tip)
        if shape.spawned_from is not None:
            parent, node = shape.spawned_from
            self._spawn_node = node
            parent_shape = self._shape(parent)
            own = parent_shape.path_to(node) if parent_shape is not None else frozenset()
            self.parent = (parent, own)
        self.tip = tip  # the head's id when no tip was given

    def _shape(self, session_id: str) -> SessionShape | None:
        if session_id not in self._shapes:
            self._shapes[session_id] = self.shapes(session_id)
        return self._shapes[session_id]

    def left_in(self, session_id: str) -> frozenset[str]:
        """The nodes of `session_id` that are left for this reader."""
        if session_id not in self._left:
            shape = self._shape(session_id)
            tip = None
            if session_id == self.session_id:
                tip = self.tip
            elif self.parent is not None and session_id == self.parent[0]:
                tip = self._spawn_node
            self._left[session_id] = frozenset() if shape is None else shape.left_for(tip)
        return self._left[session_id]

    def is_left(self, evidence: Evidence) -> bool:
        """True when there is evidence and every saying of it runs into a branch left for this reader (a
        node None, or a session no shape knows, is never left).

        A saying is a run of cited turns one after the other (an exchange: a prompt, its reply, the answer
        to the reply's question). One that starts on the shared prefix and ends on an alternative the
        person edited or retried away (the last shared turn joined with the abandoned prompt) is that
        abandoned statement: its shared turns do not make it current. A run with no left turn is a saying
        on a kept branch, and the block stays current (said both on the kept branch and the left one)."""
        by_session: dict[str, set[str]] = {}
        for session, node in evidence:
            if node is None:
                return False
            by_session.setdefault(session, set()).add(node)
        if not by_session:
            return False
        for session, nodes in by_session.items():
            left = self.left_in(session)
            if not nodes & left:
                return False
            if not nodes <= left and not self._runs_into(session, nodes, left):
                return False
        return True

    def _runs_into(self, session: str, nodes: set[str], left: frozenset[str]) -> bool:
        """Whether every run of consecutive cited `nodes` (linked by predecessor edges) holds a left one."""
        shape = self._shape(session)
        if shape is None:
            return False
        parent: dict[str, str] = {}

        def root(node: str) -> str:
            while node in parent:
                node = parent[node]
            return node

        for node in nodes:
            before = shape.predecessors.get(node)
            if before is not None and before in nodes:
                a, b = root(node), root(before)
                if a != b:
                    parent[a] = b
        runs_left = {root(node) for node in nodes if node in left}
        return all(root(node) in runs_left for node in nodes)

    def branch(self, evidence: Evidence) -> BranchClass | None:
        """`on` / `sibling` / `other` for this reader, spawn-aware; None without a session."""
        me = self.session_id
        if me is None:
            return None
        sibling = False
        for session, node in evidence:
            if node is None:
                continue
            if session == me:
                if node in self.path:
                    return "on"
                sibling = True
            elif self.parent is not None and session == self.parent[0]:
                if node in self.parent[1]:
                    return "on"
            elif self._spawned_here(session):
                return "on"
        return "sibling" if sibling else "other"

    def _spawned_here(self, session_id: str) -> bool:
        """Whether `session_id` was spawned from a node on this reader's path."""
        shape = self._shape(session_id)
        if shape is None or shape.spawned_from is None:
            return False
        parent, node = shape.spawned_from
        return parent == self.session_id and node in self.path


def resolve(
    block_id: str,
    superseded_by: Callable[[str], str | None],
    evidence_of: Callable[[str], Sequence[tuple[str, str | None]]],
    reader: Reader,
) -> tuple[Status, str | None]:
    """(status, superseded_by) of a block for `reader`. `left` when its evidence lies on left branches
    only; else `superseded` when its successor chain reaches a block that is not left for this reader (a
    correction said on a branch the user edited away does not hide the old fact); else `current`. The
    block returned is the first successor in the chain that is not left (None when there is none)."""
    successor = None
    seen = {block_id}
    later = superseded_by(block_id)
    while later is not None and later not in seen:  # a cycle (a validation error) ends the chain
        seen.add(later)
        if not reader.is_left(evidence_of(later)):
            successor = later
            break
        later = superseded_by(later)
    if reader.is_left(evidence_of(block_id)):
        return "left", successor
    return ("superseded", successor) if successor is not None else ("current", None)
