"""A session's DAG as the writer sees it: ids, edges, roles, record token counts, marks and side-branch
marks, never the text. It is a `currency.DagLike`: `SessionShape.from_dag` reads it in O(1).

What is unwritten on a branch is found by walking from its end toward the root until the first record
marked for this workspace (DESIGN §3). Running unwritten sums are kept per tip so that the per-turn check
is O(1); a fork, a mark or a rewind recomputes only the tips whose branch holds the changed nodes, each by
one walk over its unwritten suffix (O(new work)). Ancestor tests use skew-binary jump pointers: O(1) extra
space per node and O(log depth) per query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ..errors import InvalidInput, UnknownNode
from ..format import SPAWNED_KEY, Node
from ._records import is_marked, is_record_node

__all__ = ["DagView", "Unwritten"]

_NONE = -1


@dataclass(frozen=True)
class Unwritten:
    tokens: int
    records: int


class DagView:
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._index: dict[str, int] = {}
        self._ids: list[str] = []
        self._parent: list[int] = []
        self._depth: list[int] = []
        self._jump: list[int] = []
        self._tokens: list[int] = []  # content tokens of a record; 0 for a node that is not a record
        self._marked: list[bool] = []
        self._children: list[int] = []
        self._roles: list[str] = []
        self._spawned: frozenset[str] = frozenset()  # the few nodes of side branches
        self._tips: dict[int, None] = {}  # in the order they became tips (deterministic)
        self._sums: dict[int, Unwritten] = {}  # tip -> its branch's unwritten tokens and records

    # -- building --------------------------------------------------------------------------------------

    @classmethod
    def from_nodes(
        cls, session_id: str, nodes: Iterable[Node], workspace_id: str, count: Callable[[str], int]
    ) -> DagView:
        """Build from a valid snapshot's nodes (any order; predecessors must exist, no cycles)."""
        view = cls(session_id)
        by_id = {node.id: node for node in nodes}
        for node in by_id.values():
            chain: list[Node] = []
            current: Node | None = node
            while current is not None and current.id not in view._index:
                chain.append(current)
                current = by_id[current.predecessor] if current.predecessor is not None else None
            for item in reversed(chain):
                record = is_record_node(item)
                view.add(
                    item.id,
                    item.predecessor,
                    tokens=count(item.content) if record else 0,
                    marked=record and is_marked(item.metadata, workspace_id),
                    role=str(item.role),
                    spawned=item.metadata.get(SPAWNED_KEY) is True,
                )
        return view

    def add(
        self,
        node_id: str,
        predecessor: str | None,
        *,
        tokens: int,
        marked: bool = False,
        role: str = "user",
        spawned: bool = False,
    ) -> None:
        """Add a node; `tokens` > 0 makes it a record. O(1), or O(unwritten suffix) for a fork."""
        if node_id in self._index:
            raise InvalidInput(f"session {self.session_id!r} already has a node {node_id!r}")
        parent = _NONE if predecessor is None else self._position(predecessor)
        x = len(self._ids)
        # Every per-node list grows before the id is published (`_index`, `_ids`): a reader in another
        # thread that finds a node finds all of it.
        self._roles.append(role)
        if spawned:
            self._spawned = self._spawned | {node_id}
        self._parent.append(parent)
        self._tokens.append(max(tokens, 0))
        self._marked.append(marked and tokens > 0)
        self._children.append(0)
        if parent == _NONE:
            self._depth.append(0)
            self._jump.append(x)
            base = Unwritten(0, 0)
        else:
            self._depth.append(self._depth[parent] + 1)
            j = self._jump[parent]
            same = self._depth[parent] - self._depth[j] == self._depth[j] - self._depth[self._jump[j]]
            self._jump.append(self._jump[j] if same else parent)
            self._children[parent] += 1
            if parent in self._tips:
                base = self._sums.pop(parent)
                del self._tips[parent]
            else:
                base = self._walk_sum(parent)
        self._tips[x] = None
        if self._tokens[x] and self._marked[x]:
            self._sums[x] = Unwritten(0, 0)
        elif self._tokens[x]:
            self._sums[x] = Unwritten(base.tokens + self._tokens[x], base.records + 1)
        else:
            self._sums[x] = base
        self._ids.append(node_id)
        self._index[node_id] = x

    # -- queries ---------------------------------------------------------------------------------------

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._index

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def node_at(self, position: int) -> str:
        """The node added `position`-th (from 0)."""
        return self._ids[position]

    def position(self, node_id: str) -> int | None:
        return self._index.get(node_id)

    def role(self, node_id: str) -> str:
        return self._roles[self._position(node_id)]

    def child_count(self, node_id: str) -> int:
        return self._children[self._position(node_id)]

    def is_spawned(self, node_id: str) -> bool:
        return node_id in self._spawned

    def spawned_nodes(self) -> frozenset[str]:
        """The nodes appended with spawned=True (a side branch's turns)."""
        return self._spawned

    def predecessor(self, node_id: str) -> str | None:
        parent = self._parent[self._position(node_id)]
        return None if parent == _NONE else self._ids[parent]

    def __getitem__(self, node_id: str) -> str | None:
        """The view as node id -> predecessor (a `PredecessorMap`), for the one walk to the root."""
        return self.predecessor(node_id)

    def tips(self) -> list[str]:
        return [self._ids[x] for x in self._tips]

    def is_tip(self, node_id: str) -> bool:
        return self._position(node_id) in self._tips

    def is_record(self, node_id: str) -> bool:
        return self._tokens[self._position(node_id)] > 0

    def is_marked(self, node_id: str) -> bool:
        return self._marked[self._position(node_id)]

    def tokens(self, node_id: str) -> int:
        return self._tokens[self._position(node_id)]

    def is_ancestor(self, ancestor: str, node_id: str) -> bool:
        """True when `ancestor` is on the branch root -> `node_id` (a node is its own ancestor)."""
        a, x = self._position(ancestor), self._position(node_id)
        return self._depth[a] <= self._depth[x] and self._level_ancestor(x, self._depth[a]) == a

    def unwritten(self, node_id: str) -> Unwritten:
        """Unwritten tokens and records on root -> `node_id`: O(1) for a tip, a walk otherwise."""
        x = self._position(node_id)
        if x in self._tips:
            return self._sums[x]
        return self._walk_sum(x)

    def unwritten_records(self, node_id: str) -> list[str]:
        """The records of root -> `node_id` after its newest marked record, oldest first."""
        out: list[str] = []
        x = self._position(node_id)
        while x != _NONE:
            if self._tokens[x]:
                if self._marked[x]:
                    break
                out.append(self._ids[x])
            x = self._parent[x]
        out.reverse()
        return out

    def pending_records(self) -> int:
        """Records some branch still owes, each counted once however many tips share it."""
        seen: set[int] = set()
        count = 0
        for tip in self._tips:
            x = tip
            while x != _NONE and x not in seen:
                seen.add(x)
                if self._tokens[x]:
                    if self._marked[x]:
                        break
                    count += 1
                x = self._parent[x]
        return count

    # -- changes ---------------------------------------------------------------------------------------

    def mark(self, node_ids: Iterable[str]) -> None:
        """Record that these records were marked; recompute only the tips below them."""
        changed = [x for x in map(self._position, node_ids) if self._tokens[x] and not self._marked[x]]
        for x in changed:
            self._marked[x] = True
        self._refresh_below(changed)

    def set_tokens(self, node_id: str, tokens: int) -> None:
        """Change a node's record status (e.g. it was rewound: 0 tokens, no longer a record)."""
        x = self._position(node_id)
        if self._tokens[x] == tokens:
            return
        self._tokens[x] = max(tokens, 0)
        if not self._tokens[x]:
            self._marked[x] = False
        self._refresh_below([x])

    # -- internals -------------------------------------------------------------------------------------

    def _position(self, node_id: str) -> int:
        try:
            return self._index[node_id]
        except KeyError:
            raise UnknownNode(self.session_id, node_id) from None

    def _level_ancestor(self, x: int, depth: int) -> int:
        while self._depth[x] > depth:
            j = self._jump[x]
            x = j if self._depth[j] >= depth else self._parent[x]
        return x

    def _walk_sum(self, x: int) -> Unwritten:
        tokens = records = 0
        while x != _NONE:
            if self._tokens[x]:
                if self._marked[x]:
                    break
                tokens += self._tokens[x]
                records += 1
            x = self._parent[x]
        return Unwritten(tokens, records)

    def _refresh_below(self, changed: list[int]) -> None:
        if not changed:
            return
        # Only the shallowest changed nodes matter: every tip below a deeper one is below them too.
        roots: list[int] = []
        for x in sorted(changed, key=self._depth.__getitem__):
            if not any(self._level_ancestor(x, self._depth[r]) == r for r in roots):
                roots.append(x)
        for tip in self._tips:
            if any(
                self._depth[r] <= self._depth[tip] and self._level_ancestor(tip, self._depth[r]) == r
                for r in roots
            ):
                self._sums[tip] = self._walk_sum(tip)
