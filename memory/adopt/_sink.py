"""Where an import's planned nodes go: a `SessionStore`, a run of one session's nodes at a time
(`SessionStore.append_many`), counted per session in an `ImportReport`.

A node's time is its source's time: the store takes `created_at` from its clock, so the importer's store
is given a `SourceClock` set to each node's time before its append (`updated_at` then is the time of the
session's last turn, and `dagmem write` treats an old transcript as the idle session it is)."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..errors import InvalidInput, SessionInvalid
from ..forget import forgotten_check
from ..format import HomePaths, Node, Role, is_tool_evidence
from ..store import FileSessionStore, SessionStore, Turn
from ._entries import Problem
from ._mapper import Planned, text_digest

__all__ = ["ImportReport", "SessionCount", "SourceClock", "StoreSink"]


# What `known` holds for a tool row that is no tool evidence (every tool row an importer wrote before tool
# evidence existed): whatever this importer reads at its id now (a call with its result, an assistant's
# words beside its calls), the row is kept as it is and no problem is reported. It never was memory, so a
# home written then owes, and reads, exactly what it did; tool evidence reaches those lines only through
# an import into a new home. Never for a user record planned at that id: the person's words are not
# skipped without a word.
_PLAIN_TOOL_ROW: Final = b"plain tool row"  # never a digest (those are 32 bytes)


def _stored_digest(node: Node) -> bytes:
    if node.role == Role.TOOL and not is_tool_evidence(node.metadata):
        return _PLAIN_TOOL_ROW
    return text_digest(node.content)


def _journal_state(path: Path | None) -> tuple[int, int, int] | None:
    """What tells one version of the forget journal from the next: inode, size, modification time."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _same_turn(stored: bytes, planned: Planned) -> bool:
    """Is the node a session holds (its `_stored_digest`) the planned one's turn, as this importer or an
    older one read that line?"""
    if stored == _PLAIN_TOOL_ROW:
        return planned.role != "user"
    return stored in (planned.digest, planned.legacy)


class SourceClock:
    """The store's clock while importing: the time of the node being appended."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class SessionCount:
    added: int = 0
    present: int = 0  # already in the session (an earlier import)
    failed: int = 0
    orphans: int = 0
    forgotten: int = 0  # turns whose text was forgotten: stored as tombstones
    head: str | None = None

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ImportReport:
    sessions: dict[str, SessionCount] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    files: int = 0

    def count(self, session: str) -> SessionCount:
        found = self.sessions.get(session)  # called per node: no new SessionCount per call
        if found is None:
            found = self.sessions[session] = SessionCount()
        return found

    @property
    def added(self) -> int:
        return sum(c.added for c in self.sessions.values())

    def as_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "added": self.added,
            "sessions": {sid: c.as_json() for sid, c in sorted(self.sessions.items())},
            "problems": [str(p) for p in self.problems],
        }


class StoreSink:
    """Appends planned nodes through a store: ids the session has with the same turn are skipped (a second
    import adds only what is new); an id it has with another turn, and a node the store refuses, are
    reported and their children follow their predecessor. A session found invalid on disk (before or
    while appending) is reported once; none of its nodes after that is appended."""

    def __init__(self, store: SessionStore, clock: SourceClock, report: ImportReport) -> None:
        self.store = store
        self.clock = clock
        self.report = report
        # node id -> `text_digest` of its text, per session; None: the session on disk is invalid
        self._known: dict[str, dict[str, bytes] | None] = {}
        self._alias: dict[tuple[str, str], str | None] = {}
        self._spawned_from: dict[str, str | None] = {}  # session -> what it was spawned from on disk
        # Forgotten stays forgotten: a text `dagmem forget` removed (by its hashes in the journal) is
        # never brought back by an import, whatever session id its transcript now has; nor by a follow that
        # was running when it was forgotten (the journal is read again whenever it changed).
        home = store.home if isinstance(store, FileSessionStore) else None
        self._home = home
        self._journal: Path | None = None if home is None else HomePaths(home).workspace.forgotten
        self._journal_seen: tuple[int, int, int] | None = _journal_state(self._journal)
        self._forgotten: Callable[[str], bool] | None = None if home is None else forgotten_check(home)

    def _forgotten_now(self) -> Callable[[str], bool] | None:
        """The forget journal's test, read again when the journal changed since it was read (every forget
        saves it anew: temp file, rename). Blocking: called off the event loop."""
        if self._home is not None:
            state = _journal_state(self._journal)
            if state != self._journal_seen:
                self._forgotten = forgotten_check(self._home)
                self._journal_seen = state
        return self._forgotten

    def screen(self, planned: Planned) -> Planned:
        """`planned`, or its tombstone when its text holds a forgotten one (reported, never its text)."""
        if not planned.content:
            return planned
        forgotten = self._forgotten_now()
        if forgotten is None or not forgotten(planned.content):
            return planned
        source = planned.metadata.get("source", {})
        self.report.problems.append(
            Problem(
                str(source.get("file")),
                int(source.get("line", 0)),
                f"turn {planned.session}/{planned.node_id} holds a text forgotten by `dagmem forget`: "
                "stored as a tombstone, its text not imported",
            )
        )
        self.report.count(planned.session).forgotten += 1
        return dataclasses.replace(
            planned, content="", digest=text_digest(""), forgotten_at=round(time.time(), 3)
        )

    def spawned_from(self, planned: Planned) -> str | None:
        """Where the planned node's session was spawned from, to give with its append: only while the
        session is new or says the same (it is given at a session's first append, never added later)."""
        sid, wanted = planned.session, planned.spawned_from
        if wanted is None:
            return None
        if sid not in self._spawned_from:
            has = self.store.has_session(sid)
            self._spawned_from[sid] = self.store.meta(sid).spawned_from if has else wanted
        return wanted if self._spawned_from[sid] == wanted else None

    def turn(self, planned: Planned) -> Turn:
        """The planned node as a `Turn` to append (`InvalidInput`: it may not be one), with the predecessor
        and `spawned_from` it has now (a refused node's children follow its predecessor)."""
        return Turn(
            planned.role,
            planned.content,
            predecessor=self.predecessor(planned),
            node_id=planned.node_id,
            metadata=planned.metadata,
            spawned=planned.spawned,
            spawned_from=self.spawned_from(planned),
            origin=planned.origin,
            git=planned.git,
            forgotten_at=planned.forgotten_at,
        )

    def known(self, sid: str) -> dict[str, bytes] | None:
        if sid not in self._known:
            if not self.store.has_session(sid):
                self._known[sid] = {}
            else:
                snapshot = self.store.load(sid)
                if snapshot.problems:
                    first = snapshot.problems[0]
                    self._invalid(sid, str(first.path), first.reason)
                else:
                    self._known[sid] = {nid: _stored_digest(node) for nid, node in snapshot.nodes.items()}
        return self._known[sid]

    def _invalid(self, sid: str, path: str, reason: str) -> None:
        self.report.problems.append(Problem(path, 0, f"session {sid} is invalid ({reason}); not imported"))
        self._known[sid] = None

    def predecessor(self, planned: Planned) -> str | None:
        predecessor = planned.predecessor
        while predecessor is not None and (planned.session, predecessor) in self._alias:
            predecessor = self._alias[(planned.session, predecessor)]
        return predecessor

    def skip(self, planned: Planned) -> bool:
        """True when the node needs no append: already there, or its session is not imported."""
        known = self.known(planned.session)
        count = self.report.count(planned.session)
        if known is None:
            count.failed += 1
            return True
        digest = known.get(planned.node_id)
        if digest is None:
            return False
        if _same_turn(digest, planned):
            count.present += 1
        else:  # never counted as there: its text would be lost without a word
            self.refused(
                planned, f"session {planned.session} already has a node {planned.node_id} with other content"
            )
        return True

    def refused(self, planned: Planned, error: Exception | str) -> None:
        source = planned.metadata.get("source", {})
        self.report.problems.append(
            Problem(str(source.get("file")), int(source.get("line", 0)), f"not imported: {error}")
        )
        self._alias[(planned.session, planned.node_id)] = self.predecessor(planned)
        self.report.count(planned.session).failed += 1

    def added(self, planned: Planned) -> None:
        known = self.known(planned.session)
        assert known is not None
        known[planned.node_id] = planned.digest
        self.report.count(planned.session).added += 1

    def append_run(self, run: Sequence[Planned]) -> None:
        """Append a run of one session's planned nodes, in order, under one hold of the session's lock
        (`SessionStore.append_many`); each node is skipped, refused or added as `append` would have it."""
        if not run:
            return
        sid = run[0].session
        if self.known(sid) is None:
            for planned in run:
                self.skip(planned)  # counted as failed: the session was reported already
            return
        current: list[Planned] = []  # the node whose turn the store holds now (at most one)

        def turns() -> Iterator[Turn]:
            for planned in map(self.screen, run):
                if self.skip(planned):
                    continue
                try:  # made as each turn is taken: a refused node's children follow its predecessor
                    turn = self.turn(planned)
                except InvalidInput as exc:
                    self.refused(planned, exc)
                    continue
                self.clock.now = planned.time
                current.append(planned)
                yield turn

        def outcome(_turn: Turn, result: Node | InvalidInput) -> None:
            planned = current.pop()
            if isinstance(result, InvalidInput):
                self.refused(planned, result)
            else:
                self.added(planned)

        pending = turns()
        try:
            self.store.append_many(sid, pending, on_outcome=outcome)
        except SessionInvalid as exc:
            if current:
                self.report.count(sid).failed += 1
            self._invalid(sid, str(exc.path or self.store.path(sid)), exc.reason)
            for _rest in pending:  # none is yielded: `skip` counts each as failed
                pass

    def head_to_set(self, sid: str, head: str) -> str | None:
        """The node the session's head should move to (the source's, or its nearest imported ancestor),
        or None when it is there already."""
        known = self.known(sid)
        target: str | None = head
        while target is not None and (sid, target) in self._alias:
            target = self._alias[(sid, target)]
        if known is None or target is None or target not in known or self.store.head(sid) == target:
            return None
        return target

    def head(self, sid: str) -> str | None:
        """The session's head, None when it is not imported (invalid, or every turn of it refused)."""
        if self.known(sid) is None or not self.store.has_session(sid):
            return None
        return self.store.head(sid)
