"""`MemorySessionStore`: the same store in memory, for the simulator's speed.

A store that serves thousands of sessions can `spill` the ones no actor holds to a scratch file (one
append-only file, never fsynced: it lives as long as the process): a spilled session costs a dict entry
in memory, and is read back, whole, the next time anything touches it.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import time
from collections.abc import Iterator
from pathlib import Path

from .. import faults
from ..format import HomePaths
from ._base import Clock, SessionStore

__all__ = ["MemorySessionStore"]


class _NoLock:
    """Nothing else can change a store in memory: no generation to compare."""

    generation: int | None = None

    def bump(self) -> None:
        return None


class _MemoryBackend:
    def __init__(self, spill_to: Path | None = None) -> None:
        self.files: dict[str, dict[str, bytes]] = {}  # the sessions held in memory
        self._order: dict[str, None] = {}  # every session, in the order it was made
        self._spilled: dict[str, tuple[int, int]] = {}  # session -> (offset, size) in the scratch file
        self._scratch: int | None = None
        if spill_to is not None:
            self._scratch = os.open(spill_to, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        self._end = 0
        self._read: tuple[str, dict[str, bytes]] | None = None  # the spilled session read last

    def close(self) -> None:
        if self._scratch is not None:
            os.close(self._scratch)
            self._scratch = None

    def spill(self, sid: str) -> None:
        """Move a session's files out of memory into the scratch file (no-op without one)."""
        if self._scratch is None or (session := self.files.get(sid)) is None:
            return
        blob = marshal.dumps(session)
        os.pwrite(self._scratch, blob, self._end)
        self._spilled[sid] = (self._end, len(blob))
        self._end += len(blob)  # append-only: a session spilled again takes new space (bounded by the run)
        del self.files[sid]

    def _session(self, sid: str, *, keep: bool = False) -> dict[str, bytes] | None:
        """The session's files; a spilled one is read back (and held again only to be changed: `keep`;
        reading, as a rebuild or the oracle does, holds one such session at a time)."""
        session = self.files.get(sid)
        if session is not None or sid not in self._spilled or self._scratch is None:
            return session
        if self._read is not None and self._read[0] == sid:
            session = self._read[1]
        else:
            offset, size = self._spilled[sid]
            session = marshal.loads(os.pread(self._scratch, size, offset))
            self._read = (sid, session)
        if keep:
            del self._spilled[sid]
            self.files[sid] = session
            self._read = None
        return session

    def path(self, sid: str, relpath: str = "") -> Path:
        base = HomePaths(Path("<memory>")).session(sid)
        return base / relpath if relpath else base

    def sessions(self) -> list[str]:
        return list(self._order)

    def exists(self, sid: str) -> bool:
        return sid in self.files or sid in self._spilled

    def read(self, sid: str, relpath: str) -> bytes | None:
        session = self._session(sid)
        return None if session is None else session.get(relpath)

    def history(self, sid: str) -> list[str]:
        session = self._session(sid) or {}
        return sorted(path for path in session if path.startswith("history/"))

    def unsafe(self, sid: str) -> tuple[Path, str] | None:
        return None  # no symlinks in a dict

    @contextlib.contextmanager
    def lock(self, sid: str) -> Iterator[_NoLock]:
        yield _NoLock()  # one process: the store's thread lock is enough

    def _made(self, sid: str) -> dict[str, bytes]:
        session = self._session(sid, keep=True)
        if session is None:
            session = self.files[sid] = {}
            self._order[sid] = None
        return session

    def put(self, sid: str, relpath: str, data: bytes) -> None:
        self._made(sid)[relpath] = data

    def write(self, sid: str, items: list[tuple[str, bytes]], site: str, *, exclusive: bool = False) -> None:
        session = self._made(sid)
        for relpath, data in items:
            faults.hit(f"{site}:write")
            faults.hit(f"{site}:rename")
            if exclusive and relpath in session:
                raise FileExistsError(f"{self.path(sid, relpath)} exists")
            session[relpath] = data

    def remove(self, sid: str, relpath: str) -> None:
        session = self._session(sid, keep=True)
        if session is not None:
            session.pop(relpath, None)

    def commit(self, sid: str, relpaths: list[str], message: str) -> None:
        return None

    def sweep(self, sid: str) -> list[Path]:
        return []  # nothing here outlives the process


class MemorySessionStore(SessionStore):
    """The same store kept in memory (the node and meta bytes in dicts), for the simulator."""

    blocking = False

    def __init__(self, *, clock: Clock = time.time) -> None:
        self.backend = _MemoryBackend()
        super().__init__(self.backend, clock=clock)

    def write_raw(self, session_id: str, relpath: str, data: bytes) -> None:
        """Put arbitrary bytes at a path (tests use it to plant malformed files)."""
        self.backend.put(session_id, relpath, data)
        self.forget(session_id)
