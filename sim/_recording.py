"""The simulator's session store: the real `SessionStore` over a backend that also keeps count.

For every session it counts the node files written (one per append) and rewritten (markers, rewinds),
so the report can show that a turn rewrites O(batch) node files, never O(session). For the sessions
sampled for git growth it records every write and commit, byte for byte, so that `gitgrowth` can replay
them into a real repository after the run, outside virtual time, exactly as `FileSessionStore(git=True)`
would have committed them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from ..memory.store import Backend as _Backend
from ..memory.store import FileBackend as _FileBackend
from ..memory.store import Held as _Held
from ..memory.store import MemoryBackend as _MemoryBackend
from ..memory.store import SessionStore

__all__ = ["FileCounts", "GitOp", "RecordingBackend", "SimStore"]

# ("write", [(relpath, bytes), ...]) or ("commit", [relpath, ...], message)
GitOp = tuple[str, list[tuple[str, bytes]], str]


@dataclass(slots=True)
class FileCounts:
    appended: int = 0  # node files created (one per append)
    rewritten: int = 0  # node files rewritten (a marker, a rewind)
    rewrites: int = 0  # calls that rewrote node files
    most: int = 0  # most node files one call rewrote


class RecordingBackend:
    """Delegates to a real backend; counts node files and records the sampled sessions' writes."""

    def __init__(self, inner: _Backend, sample: Iterable[str] = ()) -> None:
        self.inner = inner
        self.sample = frozenset(sample)
        self.counts: dict[str, FileCounts] = {}
        self.ops: dict[str, list[GitOp]] = {sid: [] for sid in sorted(self.sample)}

    def sessions(self) -> list[str]:
        return self.inner.sessions()

    def exists(self, sid: str) -> bool:
        return self.inner.exists(sid)

    def unsafe(self, sid: str) -> tuple[Path, str] | None:
        return self.inner.unsafe(sid)

    def read(self, sid: str, relpath: str) -> bytes | None:
        return self.inner.read(sid, relpath)

    def lock(self, sid: str) -> AbstractContextManager[_Held]:
        return self.inner.lock(sid)

    def history(self, sid: str) -> list[str]:
        return self.inner.history(sid)

    def path(self, sid: str, relpath: str = "") -> Path:
        return self.inner.path(sid, relpath)

    def sweep(self, sid: str) -> list[Path]:
        return self.inner.sweep(sid)

    def remove(self, sid: str, relpath: str) -> None:
        self.inner.remove(sid, relpath)

    def write(self, sid: str, items: list[tuple[str, bytes]], site: str, *, exclusive: bool = False) -> None:
        self.inner.write(sid, items, site, exclusive=exclusive)
        counts = self.counts.get(sid)
        if counts is None:
            counts = self.counts[sid] = FileCounts()
        nodes = sum(1 for relpath, _data in items if relpath.startswith("history/"))
        if site == "node":
            counts.appended += nodes
        elif nodes:
            counts.rewritten += nodes
            counts.rewrites += 1
            counts.most = max(counts.most, nodes)
        if sid in self.sample:
            self.ops[sid].append(("write", list(items), site))

    def commit(self, sid: str, relpaths: list[str], message: str) -> None:
        self.inner.commit(sid, relpaths, message)
        if sid in self.sample:
            self.ops[sid].append(("commit", [(relpath, b"") for relpath in relpaths], message))


class SimStore(SessionStore):
    """A `SessionStore` in memory (or on disk with `home`), recording as above."""

    def __init__(
        self,
        *,
        clock: Callable[[], float],
        home: Path | None = None,
        fsync: bool = False,
        sample: Iterable[str] = (),
        spill_to: Path | None = None,
    ) -> None:
        """`spill_to`: in memory, a scratch file for the sessions no actor holds (see `_MemoryBackend`)."""
        self.memory = _MemoryBackend(spill_to) if home is None else None
        inner: _Backend = self.memory or _FileBackend(home or Path(), git=False, fsync=fsync)
        self.recorder = RecordingBackend(inner, sample)
        self.blocking = home is not None
        super().__init__(self.recorder, clock=clock)

    def forget(self, session_id: str) -> None:
        """The runtime forgets a session when its actor retires: its files can leave memory too."""
        super().forget(session_id)
        if self.memory is not None:
            self.memory.spill(session_id)

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()
