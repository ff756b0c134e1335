"""What currency needs of one session's DAG: edges, roles, side-branch marks, the head (never the text).

A `SessionShape` is built from a store snapshot (`from_snapshot`: the files) or from the DAG a session
actor holds (`from_dag`: the live view, O(1): its mappings read the view). A `ShapeSource` answers a
session id with its shape, or None for a session it does not know.
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Generic, Literal, Protocol, TypeVar

from ..format import ancestors

if TYPE_CHECKING:
    from ..format import SessionSnapshot

__all__ = ["DagLike", "SessionShape", "ShapeSource", "Status", "parse_spawned_from"]

Status = Literal["current", "superseded", "left"]


def parse_spawned_from(value: str | None) -> tuple[str, str] | None:
    """`"<sid>/<node>"` (as `meta.json` keeps it) as a pair; None stays None."""
    if value is None:
        return None
    session, _slash, node = value.partition("/")
    return session, node


@dataclass(frozen=True)
class SessionShape:
    """One session's DAG as currency needs it: what is left, what is an alternative of what."""

    session_id: str
    predecessors: Mapping[str, str | None]
    roles: Mapping[str, str]  # node -> "user" | "assistant" | "tool" | "system"
    spawned: frozenset[str]  # nodes appended with spawned=True (metadata["spawned"])
    head: str | None
    spawned_from: tuple[str, str] | None = None  # (parent session id, parent node id)

    def position(self, node_id: str) -> int | None:
        """Where `node_id` comes in the order the session's nodes were added (the order they were said),
        None for a node the shape does not hold. O(1) over a live view; a mapping is indexed once."""
        if isinstance(self.predecessors, _DagMap):
            return self.predecessors.position(node_id)
        return self._positions.get(node_id)

    @cached_property
    def _positions(self) -> dict[str, int]:
        return {node_id: i for i, node_id in enumerate(self.predecessors)}

    # A shape never changes once built, so what is derived from it is derived once: a cached shape
    # (the shape cache's, a live view's) then costs a reader O(1), not a walk of the session per query.
    def left_for(self, tip: str | None) -> frozenset[str]:
        """`left_nodes(self, tip)` (memoised per tip): what is left for a reader at `tip`."""
        from ._alternatives import left_nodes

        memo: dict[str | None, frozenset[str]] = self.__dict__.setdefault("_left_for", {})
        found = memo.get(tip)
        if found is None:
            found = memo[tip] = left_nodes(self, tip)
        return found

    def path_to(self, node: str) -> frozenset[str]:
        """`node` and its ancestors (memoised per node)."""
        paths: dict[str, frozenset[str]] = self.__dict__.setdefault("_paths", {})
        found = paths.get(node)
        if found is None:
            found = paths[node] = frozenset(ancestors(self.predecessors, node))
        return found

    @classmethod
    def from_snapshot(cls, snapshot: SessionSnapshot) -> SessionShape:
        """The shape of a session read from its files (O(its nodes))."""
        from ..format import SPAWNED_KEY  # the node models' module: loaded by the snapshot already

        nodes = snapshot.nodes
        return cls(
            snapshot.session_id,
            {node_id: node.predecessor for node_id, node in nodes.items()},
            {node_id: str(node.role) for node_id, node in nodes.items()},
            frozenset(node_id for node_id, node in nodes.items() if node.metadata.get(SPAWNED_KEY) is True),
            snapshot.meta.head,
            parse_spawned_from(snapshot.meta.spawned_from),
        )

    @classmethod
    def from_dag(
        cls,
        dag: DagLike,
        head: str | None,
        spawned_from: tuple[str, str] | None = None,
        *,
        known: int | None = None,
    ) -> SessionShape:
        """The shape over a live DAG view, O(1) (O(side-branch nodes)): its mappings read the view's first
        `known` nodes (all when None), so a view that grows meanwhile (the actor appends) shows the same
        shape."""
        size = len(dag) if known is None else known
        return cls(
            dag.session_id,
            _DagMap(dag, size, dag.predecessor),
            _DagMap(dag, size, dag.role),
            dag.spawned_nodes(),
            head,
            spawned_from,
        )


class DagLike(Protocol):
    """What `from_dag` reads of a DAG view (`memory.policy.DagView` is one): nodes in the order they were
    added, each with its predecessor, role and side-branch mark."""

    session_id: str

    def __len__(self) -> int: ...
    def node_at(self, position: int) -> str: ...
    def position(self, node_id: str) -> int | None: ...
    def predecessor(self, node_id: str) -> str | None: ...
    def role(self, node_id: str) -> str: ...
    def spawned_nodes(self) -> frozenset[str]: ...


_V = TypeVar("_V")


class _DagMap(Mapping[str, _V], Generic[_V]):
    """node -> a property, read from the view's first `size` nodes."""

    def __init__(self, dag: DagLike, size: int, get: Callable[[str], _V]) -> None:
        self._dag, self._size, self._get = dag, size, get

    def _known(self, node_id: object) -> bool:
        if not isinstance(node_id, str):
            return False
        position = self._dag.position(node_id)
        return position is not None and position < self._size

    def __contains__(self, node_id: object) -> bool:
        return self._known(node_id)

    def position(self, node_id: str) -> int | None:
        return self._dag.position(node_id) if self._known(node_id) else None

    def __getitem__(self, node_id: str) -> _V:
        if not self._known(node_id):
            raise KeyError(node_id)
        return self._get(node_id)

    def __iter__(self) -> Iterator[str]:
        return (self._dag.node_at(i) for i in range(self._size))

    def __len__(self) -> int:
        return self._size

    def items(self) -> ItemsView[str, _V]:
        return _Items(self)


class _Items(ItemsView[str, _V]):
    """One pass over the view's nodes, without a lookup per key (a walk of every node: `left_nodes`)."""

    def __init__(self, owner: _DagMap[_V]) -> None:
        super().__init__(owner)
        self._owner = owner

    def __iter__(self) -> Iterator[tuple[str, _V]]:
        owner = self._owner
        for i in range(owner._size):
            node = owner._dag.node_at(i)
            yield node, owner._get(node)


ShapeSource = Callable[[str], SessionShape | None]
