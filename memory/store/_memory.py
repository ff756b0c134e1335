"""`MemorySessionStore`: the same store in memory, for the simulator's speed."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

from .. import faults
from ._base import Clock, SessionStore

__all__ = ["MemorySessionStore"]


class _NoLock:
    """Nothing else can change a store in memory: no generation to compare."""

    generation: int | None = None

    def bump(self) -> None:
        return None


class _MemoryBackend:
    def __init__(self) -> None:
        self.files: dict[str, dict[str, bytes]] = {}

    def path(self, sid: str, relpath: str = "") -> Path:
        base = Path("<memory>") / "sessions" / sid
        return base / relpath if relpath else base

    def sessions(self) -> list[str]:
        return list(self.files)

    def exists(self, sid: str) -> bool:
        return sid in self.files

    def read(self, sid: str, relpath: str) -> bytes | None:
        return self.files.get(sid, {}).get(relpath)

    def history(self, sid: str) -> list[str]:
        return sorted(path for path in self.files.get(sid, {}) if path.startswith("history/"))

    def unsafe(self, sid: str) -> tuple[Path, str] | None:
        return None  # no symlinks in a dict

    @contextlib.contextmanager
    def lock(self, sid: str) -> Iterator[_NoLock]:
        yield _NoLock()  # one process: the store's thread lock is enough

    def write(self, sid: str, items: list[tuple[str, bytes]], site: str, *, exclusive: bool = False) -> None:
        session = self.files.setdefault(sid, {})
        for relpath, data in items:
            faults.hit(f"{site}:write")
            faults.hit(f"{site}:rename")
            if exclusive and relpath in session:
                raise FileExistsError(f"{self.path(sid, relpath)} exists")
            session[relpath] = data

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
        self.backend.files.setdefault(session_id, {})[relpath] = data
        self.forget(session_id)
