"""A session's predecessor chain walked to its root: imports nothing, so a reader of cached DAG shapes
(currency) walks branches without loading the node models."""

from __future__ import annotations

from typing import Protocol

__all__ = ["PredecessorMap", "ancestors"]


class PredecessorMap(Protocol):
    """Node id -> its predecessor: a plain mapping, a snapshot's `predecessors` or the runtime's DAG view."""

    def __contains__(self, node_id: object, /) -> bool: ...

    def __getitem__(self, node_id: str, /) -> str | None: ...


def ancestors(predecessors: PredecessorMap, tip: str) -> list[str]:
    """`tip` and its ancestors, `tip` first: the one walk to the root. It ends at a root, at a
    predecessor `predecessors` does not hold (nothing when `tip` itself is unknown), or where the chain
    comes back on itself, so a damaged DAG ends the walk and never loops (`walk_branch` says which)."""
    path: list[str] = []
    seen: set[str] = set()
    current: str | None = tip
    while current is not None and current in predecessors and current not in seen:
        seen.add(current)
        path.append(current)
        current = predecessors[current]
    return path
