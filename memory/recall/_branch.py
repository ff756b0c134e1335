"""The reader of a search (DESIGN §8, §12): a session and a tip, checked, as a `currency.Reader`.

Branch classes and statuses are the currency package's rule (`Reader.branch`, `Reader.is_left`, spawn-aware):
recall only names who reads. `path_to` stays for callers that walk a predecessor map themselves.
"""

from __future__ import annotations

from ..currency import Reader, ShapeSource
from ..errors import InvalidInput
from ..format import PredecessorMap, ancestors

__all__ = ["path_to", "reader_for"]


def path_to(predecessors: PredecessorMap, tip: str) -> frozenset[str]:
    """path(tip): `tip` and its ancestors (the walk stops at a missing predecessor or a cycle)."""
    return frozenset(ancestors(predecessors, tip))


def reader_for(shapes: ShapeSource, session_id: str | None = None, tip: str | None = None) -> Reader:
    """The reader at `tip` of `session_id` (its head without a tip; nobody in particular without a
    session): `UnknownSession` / `UnknownNode` when there is no such session or node, and a tip without
    its session is refused."""
    if tip is not None and session_id is None:
        raise InvalidInput("a tip needs its session_id")
    return Reader(shapes, session_id, tip)
