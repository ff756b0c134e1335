"""Where a home lives. On a shared root (one path that every node sees, or one machine) a home lives at
`<root>/<home id>` and its actor may run on any node: Ray places it (spread) and, after a node dies,
restarts it on another, where it recovers from the same files. With local disks (`local_disks=True`) a
home's files are on one node's disk, so its actor is pinned there (Ray's node affinity, not soft): the home
→ node map is kept in Ray's key-value store (the GCS), written once per home (the first client to place it
wins; the others read its choice), and a new home goes to the alive node that rendezvous hashing picks
(stable as nodes come and go: only the homes of a removed node would move, and they are not moved)."""

from __future__ import annotations

import hashlib
import time
from types import ModuleType

from ._ray import NAMESPACE

__all__ = ["Placements", "rendezvous"]

_NODES_TTL = 2.0  # seconds a list of alive nodes is trusted


def rendezvous(home_id: str, nodes: list[str]) -> str:
    """The node with the highest hash of (home, node): every client picks the same one."""
    return max(nodes, key=lambda node: hashlib.sha256(f"{home_id}\0{node}".encode()).digest())


class Placements:
    """The home → node map in the GCS, and the alive nodes (blocking calls: run them in a thread)."""

    def __init__(self, ray: ModuleType) -> None:
        self._ray = ray
        self._alive: list[str] = []
        self._checked = -_NODES_TTL

    def alive_nodes(self, *, fresh: bool = False) -> list[str]:
        now = time.monotonic()
        if fresh or now - self._checked > _NODES_TTL:
            self._alive = sorted(n["NodeID"] for n in self._ray.nodes() if n.get("Alive"))
            self._checked = now
        return self._alive

    def recorded(self, home_id: str) -> str | None:
        from ray.experimental import internal_kv

        value = internal_kv._internal_kv_get(_key(home_id), namespace=NAMESPACE)
        return None if value is None else bytes(value).decode()

    def node_of(self, home_id: str) -> str:
        """Where the home lives: as recorded, else placed now (and recorded, unless another won)."""
        from ray.experimental import internal_kv

        node = self.recorded(home_id)
        if node is not None:
            return node
        internal_kv._internal_kv_put(
            _key(home_id), rendezvous(home_id, self.alive_nodes(fresh=True)), False, namespace=NAMESPACE
        )
        node = self.recorded(home_id)
        assert node is not None
        return node

    def record(self, home_id: str, node_id: str) -> None:
        from ray.experimental import internal_kv

        internal_kv._internal_kv_put(_key(home_id), node_id, True, namespace=NAMESPACE)

    def is_alive(self, node_id: str) -> bool:
        return node_id in self.alive_nodes() or node_id in self.alive_nodes(fresh=True)


def _key(home_id: str) -> bytes:
    return f"home:{home_id}".encode()
