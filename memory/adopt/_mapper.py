"""The shared core of every importer: source entries in, nodes to append out (DESIGN §10).

Per session it maps each entry's key to a node id (`to_id`), and each entry's parent to the node it follows:
a kept parent is its node; a skipped one (a line that is no node) is followed up to its nearest kept
ancestor. The mapping of an entry depends only on the entries before it, so a file that has grown maps its
old lines exactly as before and a second import appends only what is new (the driver skips ids the session
already has). An unknown parent (in another file, or never written) makes the entry a root. A key seen
again is a no-op when its turn is the same, and reported (`file:line`, never dropped silently) when not."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ..checkout import Whereabouts
from ..format import EVIDENCE_KEY, EVIDENCE_TOOL, GitContext
from ._entries import Entry, Problem, clean, to_id

__all__ = ["Planned", "SessionMapper", "text_digest"]


def text_digest(content: str) -> bytes:
    """What makes two nodes with one id the same turn: their text. Not the source's file and line (they
    differ when the same transcript is imported from a copy), nor the role (a newer importer may read
    the same line as another kind of row than an older one did)."""
    return hashlib.sha256(clean(content).encode()).digest()


@dataclass(slots=True)  # not frozen: a frozen dataclass costs 3x to make, one per line
class Planned:
    """One node to append: `predecessor` None starts a root. `spawned`: a side branch's turn (a
    sub-agent's), appended so that it leaves the head where it was."""

    session: str
    node_id: str
    predecessor: str | None
    role: str
    content: str
    time: float
    metadata: dict[str, Any] = field(default_factory=dict)
    spawned: bool = False
    origin: str | None = None
    spawned_from: str | None = None  # "<sid>/<node>": where its session was spawned from, when known
    digest: bytes = b""  # `text_digest(content)`, made once by the mapper
    forgotten_at: float | None = None  # a tombstone: its text was forgotten (`StoreSink.screen`)
    legacy: bytes = b""  # `text_digest` of what an older importer stored for the line, when it differs
    git: GitContext | None = None  # where in git it was said (`checkout.Whereabouts`), when known

    def __post_init__(self) -> None:
        if not self.digest:
            self.digest = text_digest(self.content)


_MISSING = object()


class SessionMapper:
    def __init__(self, session: str, fmt: str, where: Whereabouts | None = None) -> None:
        self.session = session
        self.format = fmt
        self.where = where if where is not None else Whereabouts()
        self._resolved: dict[
            str, str | None
        ] = {}  # key -> its node id, or (skipped) its nearest kept ancestor
        self.head: str | None = None
        self.spawned_from: str | None = None  # "<sid>/<node>", set by the importer when a line names it
        self.last_time: float | None = None
        self.orphans = 0  # entries whose parent is unknown here (made roots)
        self.duplicates = 0  # keys seen twice (the first is kept)
        self._first: dict[str, tuple[str, int, bytes]] = {}  # key -> (file, line, digest) of its turn

    def resolve(self, parent: str | None) -> str | None:
        if parent is None:
            return None
        found = self._resolved.get(parent, _MISSING)
        if found is _MISSING:
            self.orphans += 1
            return None
        assert found is None or isinstance(found, str)
        return found

    def map(self, entry: Entry, file: str, default_time: float) -> Planned | Problem | None:
        """The node to append; a `Problem` for a key already used by another turn; None for nothing new."""
        if entry.key in self._resolved:
            self.duplicates += 1
            first = self._first.get(entry.key)
            if entry.turn is None or first is None or first[2] == text_digest(entry.turn.content):
                return None  # the same turn again (a grown file read from its start, a repeated line)
            where = f"line {first[1]}" if first[0] == file else f"{first[0]}:{first[1]}"
            return Problem(
                file,
                entry.line,
                f"id {clean(entry.key)!r} is already used by {where} with other content; skipped",
            )
        predecessor = self.resolve(entry.parent)
        if entry.time is not None:
            self.last_time = entry.time
        if entry.turn is None:
            self._resolved[entry.key] = predecessor
            if entry.moves_head and predecessor is not None:
                self.head = predecessor
            return None
        node_id = to_id(entry.key)
        self._resolved[entry.key] = node_id
        digest = text_digest(entry.turn.content)
        self._first[entry.key] = (file, entry.line, digest)
        if entry.moves_head:
            self.head = node_id
        source: dict[str, Any] = {"format": self.format, "file": file, "line": entry.line}
        if node_id != entry.key:
            source["id"] = clean(entry.key)
        source.update(entry.turn.info)
        metadata: dict[str, Any] = {"source": source}
        if entry.turn.evidence:
            metadata[EVIDENCE_KEY] = EVIDENCE_TOOL
        legacy = entry.turn.legacy
        time = entry.time if entry.time is not None else self.last_time
        git = None
        if entry.where is not None:
            git = self.where.context(*entry.where, entry.time, entry.turn.cited)
        return Planned(
            self.session,
            node_id,
            predecessor,
            entry.turn.role,
            clean(entry.turn.content),
            default_time if time is None else time,
            metadata,
            spawned=not entry.moves_head,
            origin=entry.turn.origin,
            spawned_from=self.spawned_from,
            digest=digest,
            legacy=text_digest(legacy) if legacy is not None else b"",
            git=git,
        )
