"""The path a distiller may ask for (`BatchInput.lineage`): the archive anchors of a batch's records and of
every ancestor, from the DAG the session's actor holds (no file read) or else from its node files."""

from __future__ import annotations

from collections.abc import Sequence

from ..format import Node, PredecessorMap, ancestors, anchor_of
from ..store import SessionStore

__all__ = ["lineage"]


def lineage(
    store: SessionStore, session_id: str, nodes: Sequence[Node], dag: PredecessorMap | None = None
) -> frozenset[str]:
    """The archive anchors of the batch's path: its nodes and every ancestor (a walk up, O(depth)). With
    the session's `dag` (what its actor holds) the walk reads no file; without, one node file each."""
    anchors = {anchor_of(f"{session_id}/{node.id}") for node in nodes}
    start = nodes[0].predecessor if nodes else None
    if start is None:
        return frozenset(anchors)
    if dag is not None and start in dag:
        path = ancestors(dag, start)
    else:
        path = ancestors(_StoreDag(store, session_id), start)
    anchors.update(anchor_of(f"{session_id}/{node_id}") for node_id in path)
    return frozenset(anchors)


class _StoreDag:
    """A session's predecessors read from its node files on demand (no actor holds its DAG)."""

    def __init__(self, store: SessionStore, session_id: str) -> None:
        self.store, self.session_id = store, session_id

    def __contains__(self, node_id: object) -> bool:
        return isinstance(node_id, str)

    def __getitem__(self, node_id: str) -> str | None:
        (node,) = self.store.read_nodes(self.session_id, [node_id])
        return node.predecessor
