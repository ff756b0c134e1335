"""`FileSessionStore`: sessions as sharded node files on disk (DESIGN §2), optionally committed to git."""

from __future__ import annotations

import contextlib
import fcntl
import os
import posixpath
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .. import faults
from ..durable import (
    atomic_write_many,
    check_dir,
    create_unsynced,
    exclusive_lock,
    fsync_dir,
    fsync_paths,
    is_temp_name,
    open_regular,
    read_regular,
    sweep_temp,
)
from ..errors import SessionInvalid, UnsafePath
from ..format import HomePaths, Node, Role
from ._base import Clock, SessionStore
from ._git import SessionGit

__all__ = ["FileSessionStore"]


_LOCK = ".lock"  # sessions/<sid>/.lock: a dotfile, so never a node, a session or a temp file


class _refused_as_invalid:  # a class, not a generator: entered once per node file of an import
    """A symlink or a FIFO inside a session makes that session invalid (the writer refuses it)."""

    __slots__ = ("sid",)

    def __init__(self, sid: str) -> None:
        self.sid = sid

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, trace: object) -> None:
        if isinstance(exc, UnsafePath):
            raise SessionInvalid(self.sid, exc.path, exc.reason) from None


def _parents(created: list[Path]) -> list[str]:
    return [str(path.parent) for path in created]


class _HeldLock:
    """The session lock, held. The lock file holds a generation number that every writer that changes
    what stores keep (the node ids, the head) bumps before it writes: a store that finds another number
    than the one it left knows another process changed the session."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        line = os.pread(fd, 32, 0).split(b"\n", 1)[0]
        self.generation: int | None = int(line) if line.isdigit() else 0

    def bump(self) -> None:
        assert self.generation is not None
        self.generation += 1
        os.pwrite(self._fd, f"{self.generation:020d}\n".encode(), 0)


class _WindowLock:
    """A session's lock held by a bulk run from its first write in a flush window to the flush: the
    generation is bumped once per window (no one else can change the session while it is held), and the
    lock is released at the flush, once no call of this process is inside it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._held = _HeldLock(fd)
        self.generation = self._held.generation
        self._bumped = False
        self.users = 0
        self.release_when_idle = False

    def bump(self) -> None:
        if not self._bumped:
            self._held.bump()
            self.generation = self._held.generation
            self._bumped = True


class _Unflushed:
    """What a bulk run wrote without an fsync: the files (by name) and the directories whose entries
    changed, to fsync at the next flush; a flush is due every `every` files. Also the session locks the
    run holds until that flush, and the directories it has checked already (each is lstat'ed once per
    run, not once per write)."""

    def __init__(self, every: int, before_flush: Callable[[], None]) -> None:
        self.every = every
        self.before_flush = before_flush
        self.files: dict[str, None] = {}
        self.dirs: dict[str, None] = {}
        self.locks: dict[str, _WindowLock] = {}
        self.checked: set[str] = set()
        self.due = False
        self.flushing = False
        self.guard = threading.RLock()


class _FileBackend:
    def __init__(self, home: Path, *, git: bool, fsync: bool) -> None:
        self.root = HomePaths(home).sessions
        self.root_name = str(self.root)
        self.git = git
        self.fsync = fsync
        self._gits: dict[str, SessionGit] = {}  # one per session: each keeps its last commit's trees
        self._unflushed: _Unflushed | None = None  # set during a bulk run

    def begin_bulk(self, every: int, before_flush: Callable[[], None]) -> bool:
        """Write without an fsync each until `end_bulk`; False if a bulk run is on already (or nothing is
        ever fsynced), so the outer one flushes. `before_flush` writes what the store left for the flush
        (its deferred meta.json files)."""
        if not self.fsync or self._unflushed is not None:
            return False
        self._unflushed = _Unflushed(every, before_flush)
        return True

    def flush_if_due(self) -> None:
        pending = self._unflushed
        if pending is not None and pending.due:
            self.flush()

    def flush(self) -> None:
        """Write what the store deferred, fsync every file the bulk run wrote since the last flush, then
        their directories; then let go of the session locks held for the window."""
        pending = self._unflushed
        if pending is None:
            return
        with pending.guard:
            if pending.flushing:
                return
            pending.flushing = True
            try:
                pending.before_flush()
                files, dirs = list(pending.files), list(pending.dirs)
                fsync_paths(files, dirs, site="flush")
                pending.files.clear()
                pending.dirs.clear()
                pending.due = False
                for sid, held in list(pending.locks.items()):
                    held.release_when_idle = True
                    if held.users == 0:
                        del pending.locks[sid]
                        os.close(held.fd)  # releases the lock
            finally:
                pending.flushing = False

    def end_bulk(self, *, flush: bool) -> None:
        pending = self._unflushed
        try:
            if flush:
                self.flush()
        finally:
            self._unflushed = None
            if pending is not None:
                for held in pending.locks.values():
                    os.close(held.fd)

    def _written(self, files: list[str], dirs: list[str]) -> None:
        """Note files written without an fsync, and the directories whose entries changed (theirs, and
        the parents of directories created), for the next flush; a flush is due every N files."""
        pending = self._unflushed
        assert pending is not None
        with pending.guard:
            for path in files:
                pending.files[path] = None
            for directory in dirs:
                pending.dirs[directory] = None
            if len(pending.files) >= pending.every:
                pending.due = True

    def path(self, sid: str, relpath: str = "") -> Path:
        base = self.root / sid
        return base / relpath if relpath else base

    def sessions(self) -> list[str]:
        if not check_dir(self.root):  # a symlinked sessions/ is refused (`UnsafePath`), never listed
            return []
        # A symlink is listed too (without following it), so that `load` reports it.
        return [
            entry.name
            for entry in os.scandir(self.root)
            if (entry.is_dir() or entry.is_symlink()) and not entry.name.startswith(".")
        ]

    def exists(self, sid: str) -> bool:
        path = self.root / sid
        return path.is_dir() or path.is_symlink()

    def unsafe(self, sid: str) -> tuple[Path, str] | None:
        """The first directory of the session that is a symlink (or not a directory), with why."""
        base = self.root / sid
        try:
            check_dir(self.root)  # nothing of the home's tree is read through a symlink, sessions/ included
            if check_dir(base) and check_dir(base / "history"):
                with os.scandir(base / "history") as shards:
                    for shard in shards:
                        if shard.is_symlink():
                            check_dir(Path(shard.path))
        except UnsafePath as exc:
            return exc.path, exc.reason
        return None

    def read(self, sid: str, relpath: str) -> bytes | None:
        with _refused_as_invalid(sid):  # a string path: a session is read a file at a time
            return read_regular(f"{self.root_name}/{sid}/{relpath}")

    def history(self, sid: str) -> list[str]:
        history = self.root / sid / "history"
        if not history.is_dir():
            return []
        found: list[str] = []
        for shard in sorted(os.scandir(history), key=lambda entry: entry.name):
            if is_temp_name(shard.name) or shard.name.startswith("."):
                continue
            if not shard.is_dir(follow_symlinks=False):
                found.append(f"history/{shard.name}")
                continue
            for name in sorted(os.listdir(shard.path)):
                if name.startswith("."):
                    continue  # temp files of an interrupted write, editor dotfiles
                found.append(f"history/{shard.name}/{name}")
        return found

    def _make_dirs(self, directories: list[Path]) -> list[Path]:
        """Create the missing ones of these nested directories (outermost first), refusing a symlink;
        returns those this call created. A bulk run checks each directory once."""
        pending = self._unflushed
        if pending is not None:
            with pending.guard:
                directories = [d for d in directories if str(d) not in pending.checked]
                if not directories:
                    return []
        created: list[Path] = []
        if not check_dir(self.root):
            for missing in reversed([self.root, *self.root.parents]):
                if not missing.exists():
                    try:
                        missing.mkdir()
                    except FileExistsError:
                        continue
                    created.append(missing)
        for directory in directories:
            if check_dir(directory):
                continue
            try:
                directory.mkdir()
            except FileExistsError:  # another process's first append made it: what is it?
                check_dir(directory)
                continue
            created.append(directory)
        if pending is not None:
            # Only once checked: a directory found to be a symlink is met again by the next write.
            with pending.guard:
                pending.checked.update(str(d) for d in directories)
        return created

    def _fsync_parents(self, created: list[Path], site: str) -> None:
        if self._unflushed is not None:
            if created:
                self._written([], _parents(created))
        elif self.fsync:
            # New directories must survive a power loss too: fsync each one's parent.
            for directory in dict.fromkeys(path.parent for path in created):
                fsync_dir(directory, site=site)

    @contextlib.contextmanager
    def lock(self, sid: str) -> Iterator[_HeldLock | _WindowLock]:
        """Hold the session's lock (created with its directory if missing), across processes; in a bulk
        run, from the first call of a flush window to its flush."""
        pending = self._unflushed
        if pending is not None:
            with _refused_as_invalid(sid):
                held = self._window_lock(pending, sid)
            try:
                yield held
            finally:
                with pending.guard:
                    held.users -= 1
                    if held.users == 0 and held.release_when_idle and pending.locks.get(sid) is held:
                        del pending.locks[sid]
                        os.close(held.fd)
            return
        base = self.root / sid
        with _refused_as_invalid(sid):
            self._fsync_parents(self._make_dirs([base]), "session")
            with exclusive_lock(base / _LOCK) as fd:
                yield _HeldLock(fd)

    def _window_lock(self, pending: _Unflushed, sid: str) -> _WindowLock:
        with pending.guard:
            held = pending.locks.get(sid)
            if held is not None and not held.release_when_idle:
                held.users += 1
                return held
        base = self.root / sid
        self._fsync_parents(self._make_dirs([base]), "session")
        fd = open_regular(base / _LOCK, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            made = _WindowLock(fd)
        except BaseException:
            os.close(fd)
            raise
        with pending.guard:
            old = pending.locks.get(sid)
            if old is not None and old.users == 0:
                os.close(old.fd)
            pending.locks[sid] = made
            made.users += 1
        return made

    def write(self, sid: str, items: list[tuple[str, bytes]], site: str, *, exclusive: bool = False) -> None:
        pending = self._unflushed
        if pending is not None and exclusive:
            self._create_unflushed(pending, sid, items, site)
            return
        base = self.root / sid
        with _refused_as_invalid(sid):
            parents = dict.fromkeys(posixpath.dirname(relpath) for relpath, _ in items)
            created: list[Path] = []
            if pending is None or not pending.checked.issuperset(
                f"{base}/{p}" if p else str(base) for p in parents
            ):
                # The session's directory, then each directory of the items (outermost first), once each.
                directories: dict[Path, None] = {base: None}
                for parent in parents:
                    parts = parent.split("/") if parent else []
                    directories.update((base.joinpath(*parts[: k + 1]), None) for k in range(len(parts)))
                created = self._make_dirs(list(directories))
            paths = [base / relpath for relpath, _ in items]
            atomic_write_many(
                [(path, data) for path, (_, data) in zip(paths, items, strict=True)],
                fsync=self.fsync and self._unflushed is None,
                site=site,
                exclusive=exclusive,
            )
            if self._unflushed is None:
                self._fsync_parents(created, site)
            else:  # the store calls `flush_if_due` between its calls (and turns), never inside one
                files = [str(path) for path in paths]
                self._written(files, [os.path.dirname(f) for f in files] + _parents(created))

    def _create_unflushed(
        self, pending: _Unflushed, sid: str, items: list[tuple[str, bytes]], site: str
    ) -> None:
        """A bulk run's new files (an import's nodes, one a call): on plain strings, their directories
        checked once per run; fsynced by the next flush."""
        base = f"{self.root_name}/{sid}"
        with _refused_as_invalid(sid):
            for relpath, data in items:
                parent, _, name = relpath.rpartition("/")
                directory = f"{base}/{parent}" if parent else base
                if directory not in pending.checked:
                    parts = parent.split("/") if parent else []
                    created = self._make_dirs([Path(base, *parts[:k]) for k in range(len(parts) + 1)])
                    if created:
                        self._written([], _parents(created))
                path = f"{directory}/{name}"
                create_unsynced(path, data, site=site)
                self._written([path], [directory])

    def remove(self, sid: str, relpath: str) -> None:
        """Undo a file this process just wrote (best effort: the caller raises its own error anyway)."""
        path = self.root / sid / relpath
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
            if self.fsync:
                fsync_dir(path.parent, site="remove")

    def commit(self, sid: str, relpaths: list[str], message: str) -> None:
        if self.git:
            repo = self._gits.get(sid)
            if repo is None:
                repo = self._gits.setdefault(sid, SessionGit(self.root / sid, fsync=self.fsync))
            repo.commit(relpaths, message)

    def sweep(self, sid: str) -> list[Path]:
        base = self.root / sid
        if self.unsafe(sid) is not None:
            return []  # never unlink through a symlink; `load` reports the session
        removed = sweep_temp(base)
        history = base / "history"
        removed.extend(sweep_temp(history))
        if history.is_dir():
            for shard in sorted(os.scandir(history), key=lambda entry: entry.name):
                if shard.is_dir(follow_symlinks=False) and not shard.name.startswith("."):
                    removed.extend(sweep_temp(Path(shard.path)))
        return removed


class FileSessionStore(SessionStore):
    """Sessions under `<home>/sessions/`, durable on disk; `git=True` commits each turn per session."""

    blocking = True

    def __init__(
        self,
        home: Path | str,
        *,
        git: bool = False,
        fsync: bool = True,
        clock: Clock = time.time,
        read_only: bool = False,
    ) -> None:
        """`read_only` (for `status` and `verify`): never sweep dead writers' temp files on first use."""
        self.home = Path(home)
        if not read_only:  # a writer refuses a symlinked sessions/ before anything (readers report it)
            with contextlib.suppress(NotADirectoryError):  # a home below a file: its first use says so
                check_dir(HomePaths(self.home).sessions)
        self._files = _FileBackend(self.home, git=git, fsync=fsync)
        super().__init__(self._files, clock=clock)
        self._read_only = read_only

    @contextlib.contextmanager
    def bulk(self, *, flush_every: int = 1000) -> Iterator[None]:
        """Inside the block, writes are not fsynced one by one: every `flush_every` files written, and
        when the block ends (however it ends, but a simulated death), every file written since the last
        flush is fsynced, then their directories. For a bulk load that can be run again (an import): a
        crash loses only the unflushed writes, never a durable one. It holds for every write through
        this store, from any thread: a store a runtime appends through must not be inside one. Nested
        blocks flush with the outer."""
        if not self._files.begin_bulk(flush_every, self.write_deferred_meta):
            yield
            return
        if not self._files.git:  # a commit per turn takes meta.json with it: git keeps it per turn
            self._deferred = {}
        flush = True
        try:
            yield
        except faults.InjectedCrash:
            flush = False  # a 'dead' process fsyncs nothing more
            raise
        finally:
            try:
                self._files.end_bulk(flush=flush)
            finally:
                self._deferred = None

    def append(self, session_id: str, role: Role | str, content: str, **kwargs: Any) -> Node:
        node = super().append(session_id, role, content, **kwargs)
        self._files.flush_if_due()  # between appends: no session's lock is held by this call
        return node

    def _between_turns(self) -> None:
        # Each turn of an `append_many` is whole here; the session's lock it holds stays held to its end.
        self._files.flush_if_due()
