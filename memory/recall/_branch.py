"""Branch classes (DESIGN §8): where a block's evidence lies relative to a reader at tip T of session S.

A session's nodes form a forest (one predecessor each); path(T) is T and its ancestors. With E the block's
evidence nodes in S: `other` when E is empty, `on` when some node of E lies on path(T), `sibling` when E is
not empty and none of it does (an alternative the reader on T never saw).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import UnknownNode, UnknownSession
from ..format import PredecessorMap, ancestors
from ..store import SessionStore
from ._hit import BranchClass

__all__ = ["branch_class", "path_to", "session_path"]


def path_to(predecessors: PredecessorMap, tip: str) -> frozenset[str]:
    """path(tip): `tip` and its ancestors (the walk stops at a missing predecessor or a cycle)."""
    return frozenset(ancestors(predecessors, tip))


def session_path(store: SessionStore, session_id: str, tip: str | None) -> frozenset[str]:
    """path(tip) in a stored session; without a tip, the head's path (empty for a session without one)."""
    if not store.has_session(session_id):
        raise UnknownSession(session_id)
    snapshot = store.load(session_id)
    predecessors = {node_id: node.predecessor for node_id, node in snapshot.nodes.items()}
    if tip is None:
        tip = snapshot.meta.head
        if tip is None:
            return frozenset()
    if tip not in predecessors:
        raise UnknownNode(session_id, tip)
    return path_to(predecessors, tip)


def branch_class(
    evidence: Iterable[tuple[str, str | None]], session_id: str, path: frozenset[str]
) -> BranchClass:
    """The class of a block whose evidence is these (session, node) pairs."""
    in_session = [node for session, node in evidence if session == session_id and node is not None]
    if not in_session:
        return "other"
    return "on" if any(node in path for node in in_session) else "sibling"
