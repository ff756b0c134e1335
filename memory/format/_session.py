"""Session metadata, a loaded snapshot of one session, and the pure DAG walks over it.

Tips come from the DAG, never from `meta.branches`: a tip is a node that is no other node's predecessor.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import BrokenChain, InvalidInput, SessionInvalid, UnknownNode
from ._ancestry import PredecessorMap, ancestors
from ._ids import check_id
from ._node import Node
from ._problems import EpochSeconds, validation_problem

__all__ = [
    "BranchInfo",
    "PredecessorMap",
    "Problem",
    "SessionMeta",
    "SessionSnapshot",
    "Tip",
    "ancestors",
    "check_spawned_from",
    "graph_problems",
    "walk_branch",
]


class BranchInfo(BaseModel):
    """People's annotations of a tip; they never decide what is written."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")
    archived: bool = False
    name: str | None = None


def check_spawned_from(value: object) -> str:
    """Where a session was spawned from: `"<session id>/<node id>"`, both valid ids; else `InvalidInput`."""
    if not isinstance(value, str):
        raise InvalidInput(f"spawned_from must be a string '<session>/<node>', not {type(value).__name__}")
    session, slash, node = value.partition("/")
    if not slash:
        shown = value if len(value) <= 80 else value[:77] + "..."
        raise InvalidInput(f"spawned_from {shown!r} must be '<session>/<node>'")
    check_id(session, "spawned_from session id")
    check_id(node, "spawned_from node id")
    return value


class SessionMeta(BaseModel):
    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")

    id: str
    head: str | None = None
    created_at: EpochSeconds
    updated_at: EpochSeconds
    branches: dict[str, BranchInfo] = Field(default_factory=dict)
    merged: list[str] = Field(default_factory=list)
    # "<sid>/<node>" this session was spawned from (a sub-agent's session); absent from meta.json when None.
    spawned_from: str | None = None

    @field_validator("spawned_from")
    @classmethod
    def _spawned_from(cls, value: str | None) -> str | None:
        return None if value is None else check_spawned_from(value)

    def to_json(self) -> bytes:
        # pydantic's serialiser writes what json.dumps(indent=1, ensure_ascii=False) wrote (a float's
        # exponent aside: 1e-7 for 1e-07), ~7x faster; NaN stays NaN in a host's metadata.
        exclude = {"spawned_from"} if self.spawned_from is None else None
        return self.model_dump_json(indent=1, exclude=exclude).encode() + b"\n"

    @classmethod
    def from_json(cls, data: bytes) -> SessionMeta:
        """The meta in `data`; `ValueError` saying in one line what is wrong (the caller names the file)."""
        try:
            return cls.model_validate_json(data)
        except ValidationError as exc:
            raise ValueError(validation_problem(exc)) from None


class Tip(BaseModel):
    model_config = ConfigDict(frozen=True)
    id: str
    archived: bool = False
    merged: bool = False
    name: str | None = None


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a session on disk: the file and what is wrong with it."""

    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def walk_branch(session_id: str, predecessors: Mapping[str, str | None], tip: str) -> list[str]:
    """Node ids from the root to `tip`, oldest first. A cycle or a missing predecessor raises
    `BrokenChain` naming the node."""
    if tip not in predecessors:
        raise UnknownNode(session_id, tip)
    path = ancestors(predecessors, tip)
    beyond = predecessors[path[-1]]  # None at a root; else the walk stopped short
    if beyond is not None:
        if beyond in predecessors:  # held but already walked: the chain came back on itself
            raise BrokenChain(session_id, beyond, "predecessor chain has a cycle")
        raise BrokenChain(session_id, path[-1], f"predecessor {beyond!r} does not exist")
    path.reverse()
    return path


def graph_problems(predecessors: Mapping[str, str | None]) -> list[tuple[str, str]]:
    """(node_id, reason) for every missing predecessor and one node of every cycle; O(n)."""
    problems: list[tuple[str, str]] = []
    state: dict[str, int] = {}  # 1 = on the current walk, 2 = done (reaches a root or a reported fault)
    for start in predecessors:
        walk: list[str] = []
        current: str | None = start
        while current is not None and state.get(current, 0) == 0:
            state[current] = 1
            walk.append(current)
            parent = predecessors[current]
            if parent is not None and parent not in predecessors:
                problems.append((current, f"predecessor {parent!r} does not exist"))
                current = None
                break
            current = parent
        if current is not None and state.get(current) == 1:
            problems.append((current, "predecessor chain has a cycle"))
        for node_id in walk:
            state[node_id] = 2
    return problems


@dataclass
class SessionSnapshot:
    """Everything read from one session: its meta, its valid nodes (by seq) and what was wrong."""

    session_id: str
    meta: SessionMeta
    nodes: dict[str, Node]
    problems: list[Problem] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def spawned_from(self) -> str | None:
        """`"<sid>/<node>"` the session was spawned from (given at its first append), or None."""
        return self.meta.spawned_from

    def require_valid(self) -> None:
        if self.problems:
            first = self.problems[0]
            raise SessionInvalid(self.session_id, first.path, first.reason)

    @property
    def predecessors(self) -> dict[str, str | None]:
        return {node_id: node.predecessor for node_id, node in self.nodes.items()}

    def tips(self) -> list[Tip]:
        """Every node without a child, in seq order, with its people's annotations."""
        parents = {node.predecessor for node in self.nodes.values()}
        merged = set(self.meta.merged)
        tips = []
        for node_id in self.nodes:
            if node_id in parents:
                continue
            info = self.meta.branches.get(node_id, BranchInfo())
            tips.append(Tip(id=node_id, archived=info.archived, merged=node_id in merged, name=info.name))
        return tips

    def branch(self, tip: str) -> list[Node]:
        """The nodes from the root to `tip`, oldest first (the head branch when `tip` is the head)."""
        return [self.nodes[node_id] for node_id in walk_branch(self.session_id, self.predecessors, tip)]


def parse_node(data: bytes) -> tuple[Node | None, str | None]:
    """(node, None) or (None, reason) for the bytes of a node file."""
    try:
        # pydantic reads the JSON itself (one pass); anything it refuses takes the path below, which
        # accepts the same files and names the reason.
        return Node.model_validate_json(data), None
    except ValidationError:
        pass
    try:
        raw: Any = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, f"malformed JSON: {exc}"
    except RecursionError:  # a hand-written file nested thousands deep: a problem, never a crash
        return None, "malformed JSON: nested too deep"
    if not isinstance(raw, dict):
        return None, "malformed node: not a JSON object"
    try:
        return Node.model_validate(raw), None
    except ValidationError as exc:
        return None, f"malformed node: {validation_problem(exc)}"
