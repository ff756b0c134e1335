"""What a home's sessions hold, for people and agents: each session's nodes, head and tips (with the first
words of each tip's last turn) and what it still owes; and node ids given by any unique prefix.

Read-only: nothing is created or locked. `dagmem sessions`, `dagmem show` and the MCP server's `sessions`
tool all call `list_sessions`; every place a user names a node calls `resolve_node`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .durable import read_workspace_id
from .errors import InvalidInput, SessionInvalid, UnknownNode, UnknownSession
from .format import HomePaths
from .store import FileSessionStore, SessionStore
from .write import pending_by_session

__all__ = [
    "AmbiguousNode",
    "SessionSummary",
    "TipSummary",
    "first_words",
    "list_sessions",
    "resolve_node",
    "resolve_stored",
]

FIRST_WORDS = 8  # words of a tip's last turn shown beside it


class AmbiguousNode(InvalidInput):
    """A node id prefix that more than one node of the session starts with."""

    def __init__(self, session_id: str, prefix: str, matches: int) -> None:
        super().__init__(
            f"node id prefix {prefix!r} matches {matches} nodes of session {session_id!r}: give more of it"
        )
        self.session_id = session_id
        self.prefix = prefix
        self.matches = matches


def resolve_node(session_id: str, node_ids: Iterable[str], given: str) -> str:
    """The node `given` names: itself when it is a whole id, else the one node whose id starts with it.
    No match raises `UnknownNode`; several raise `AmbiguousNode` (a whole id always wins over a prefix)."""
    ids = node_ids if isinstance(node_ids, set | frozenset | dict) else set(node_ids)
    if given in ids:
        return given
    matches = [node_id for node_id in ids if node_id.startswith(given)] if given else []
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UnknownNode(session_id, given)
    raise AmbiguousNode(session_id, given, len(matches))


def resolve_stored(store: SessionStore, session_id: str, given: str) -> str:
    """`resolve_node` over the nodes of a stored session (`UnknownSession` when there is none)."""
    if not store.has_session(session_id):
        raise UnknownSession(session_id)
    return resolve_node(session_id, store.load(session_id).nodes, given)


def first_words(text: str, words: int = FIRST_WORDS) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


@dataclass(frozen=True)
class TipSummary:
    id: str
    seq: int
    role: str
    words: str  # the first words of the tip's turn
    head: bool

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "seq": self.seq, "role": self.role, "words": self.words, "head": self.head}


@dataclass(frozen=True)
class SessionSummary:
    """One session; `problem` says why it could not be read (then it has no nodes, head or tips)."""

    id: str
    nodes: int
    head: str | None
    tips: list[TipSummary]
    owed: int  # records still owed to this home's memory
    problem: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "nodes": self.nodes,
            "head": self.head,
            "tips": [tip.as_json() for tip in self.tips],
            "owed": self.owed,
            "problem": self.problem,
        }


def list_sessions(home: Path, sessions: Iterable[str] | None = None) -> list[SessionSummary]:
    """Every session of `home` (or those named), sorted by id. A missing `sessions/` is no sessions."""
    store = FileSessionStore(home, read_only=True)
    workspace_id = read_workspace_id(HomePaths(home).workspace.workspace_id)
    owed = pending_by_session(home, workspace_id)
    out: list[SessionSummary] = []
    for session_id in sorted(store.session_ids() if sessions is None else sessions):
        try:
            snapshot = store.load(session_id)
            snapshot.require_valid()
        except SessionInvalid as exc:
            out.append(SessionSummary(session_id, 0, None, [], 0, problem=str(exc)))
            continue
        head = snapshot.meta.head
        tips = [
            TipSummary(
                tip.id,
                snapshot.nodes[tip.id].seq,
                snapshot.nodes[tip.id].role,
                first_words(snapshot.nodes[tip.id].content),
                tip.id == head,
            )
            for tip in snapshot.tips()
        ]
        pending = owed.get(session_id, 0)
        out.append(
            SessionSummary(
                session_id, len(snapshot.nodes), head, tips, pending if isinstance(pending, int) else 0
            )
        )
    return out
