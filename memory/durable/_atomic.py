"""Durable file primitives: atomic rewrites (temp + fsync + rename + directory fsync) and fsynced appends.

A batch of rewrites (`atomic_write_many`) writes all its temp files, fsyncs them at once from a small
thread pool (ext4 commits concurrent fsyncs together), renames them in order, then fsyncs each directory
once: no file is renamed before its new bytes are durable.

Every step passes a named fault site (`faults.hit`) so crash tests can stop the process between any two
of them. `fsync=False` is for the simulator's speed only; the order of operations stays the same.
Temp names are `.<name>.<pid>-<n>.tmp` (never `.json`/`.md`), so a reader globbing for data files never
sees one, and `sweep_temp` can tell a dead writer's leftover from a live writer's file in progress.

A failed step (an `OSError`, not a simulated death) puts things back as they were: a rewrite removes its
temp file, an append truncates what it added (or removes the file it created).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import itertools
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import faults
from ..errors import UnsafePath
from ._safe import open_regular

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = [
    "TMP_SUFFIX",
    "append_bytes",
    "atomic_write",
    "atomic_write_many",
    "create_unsynced",
    "fsync_all",
    "fsync_dir",
    "fsync_dirs",
    "fsync_paths",
    "is_temp_name",
    "pid_alive",
    "sweep_temp",
    "temp_owner",
]

log = logging.getLogger("dagmem.durable")

TMP_SUFFIX = ".tmp"
_counter = itertools.count()
# `.<name>.<pid>-<n>.tmp`; the workspace id's temp (wsid.py) has a hex token where `n` is.
_TEMP_NAME = re.compile(r"\..+\.([1-9][0-9]{0,9})-[0-9A-Za-z]+\.tmp")
_WINDOW = 128  # temp files open (and fsynced together) at once in one `atomic_write_many`
_FSYNC_THREADS = 16
_O_PATH: int | None = getattr(os, "O_PATH", None)  # Linux
_pool: ThreadPoolExecutor | None = None
_pool_guard = threading.Lock()


def is_temp_name(name: str) -> bool:
    return name.startswith(".") and name.endswith(TMP_SUFFIX)


def temp_owner(name: str) -> int | None:
    """The pid of the process that wrote the temp file `name`, or None if the name is not one of ours."""
    match = _TEMP_NAME.fullmatch(name)
    return None if match is None else int(match.group(1))


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (a zombie counts until it is reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    return True


def sweep_temp(directory: Path) -> list[Path]:
    """Remove the temp files in `directory` whose writer is dead; returns them. A live process's temp file
    (its name carries the pid) is never touched: that process may be between its write and its rename.
    Names that carry no pid are not ours and are left alone."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return removed
    for entry in entries:
        if not is_temp_name(entry.name):
            continue
        pid = temp_owner(entry.name)
        if pid is None or pid_alive(pid) or not entry.is_file(follow_symlinks=False):
            continue
        faults.hit("sweep:unlink")
        try:
            os.unlink(entry.path)
        except FileNotFoundError:
            continue
        removed.append(Path(entry.path))
    return removed


def _temp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}-{next(_counter)}{TMP_SUFFIX}")


def _write_all(fd: int, data: bytes, site: str) -> None:
    try:
        faults.hit(f"{site}:write")
    except faults.Tear as tear:
        os.write(fd, data[: tear.keep])
        raise
    done = os.write(fd, data)  # a node file's bytes go in one call; a short write goes on from there
    if done < len(data):
        view = memoryview(data)[done:]
        while view:
            view = view[os.write(fd, view) :]


def fsync_dir(directory: Path, *, site: str = "dir") -> None:
    fsync_dirs([directory], site=site)


def _write_temp(path: Path, data: bytes, *, site: str) -> tuple[Path, int]:
    """A new temp file beside `path` holding `data`, still open (not fsynced yet): (its path, its fd)."""
    tmp = _temp_path(path)
    return tmp, _new_file(tmp, data, site)


def _new_file(tmp: str | Path, data: bytes, site: str) -> int:
    """Create `tmp` (never an existing file) holding `data`: its fd, still open and not fsynced."""
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        _write_all(fd, data, site)
    except faults.InjectedCrash:
        os.close(fd)  # a 'dead' process leaves its temp file behind, as a real crash would
        raise
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return fd


def _executor() -> ThreadPoolExecutor:
    """The process's fsync threads, made on first use."""
    global _pool
    with _pool_guard:
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor  # here: a reader fsyncs nothing

            _pool = ThreadPoolExecutor(max_workers=_FSYNC_THREADS, thread_name_prefix="dagmem-fsync")
        return _pool


def _forget_pool() -> None:
    """In a forked child (the crash load's fork server forks its workers): the parent's threads do not
    exist there, and its lock may have been held at the fork; the child makes its own on first use."""
    global _pool, _pool_guard
    _pool, _pool_guard = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)

_pid = os.getpid()  # in temp names; a forked child's is its own


def _new_pid() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_new_pid)


def fsync_all(fds: list[int]) -> None:
    """fsync these open files, at once when there are several: ext4 folds concurrent fsyncs into one
    journal commit (FACTS: 64 files 10.6 ms one after another, 5.0 ms from 8 threads). Returns only when
    every fsync has finished (the caller closes the fds next), raising the first error."""
    _each_at_once(os.fsync, fds)


def _each_at_once(call: Callable[[int], None], fds: list[int]) -> None:
    """`call(fd)` for each fd, from the pool's threads; one task per thread (a slice of the fds each), not
    one per fd, as every task handed over costs the caller the GIL. Waits for all, raises the first error."""
    if len(fds) == 1:
        call(fds[0])
        return
    width = min(_FSYNC_THREADS, len(fds))
    pool = _executor()
    futures = [pool.submit(_each, call, fds[k::width]) for k in range(width)]
    errors = [future.exception() for future in futures]  # waits for each
    for error in errors:
        if error is not None:
            raise error


def _each(call: Callable[[int], None], fds: list[int]) -> None:
    first: BaseException | None = None
    for fd in fds:
        try:
            call(fd)
        except OSError as exc:  # the others still run: no fd is closed while a call on it is under way
            first = first or exc
    if first is not None:
        raise first


def fsync_dirs(directories: Iterable[str | Path], *, site: str = "dir") -> None:
    """One fsync per directory, at once; the fault sites are passed in order first."""
    found = list(directories)
    for _ in found:
        faults.hit(f"{site}:dirsync")
    fds: list[int] = []
    try:
        for directory in found:
            fds.append(os.open(directory, os.O_RDONLY | os.O_DIRECTORY))
        if fds:
            fsync_all(fds)
    finally:
        for fd in fds:
            os.close(fd)


def fsync_paths(files: Iterable[str | Path], dirs: Iterable[str | Path] = (), *, site: str = "flush") -> None:
    """Make files written with `fsync=False` durable after the fact: fsync each file (by its name, so
    the bytes under that name now), `_WINDOW` open at once, then each directory (the names themselves).
    A file no longer there (or no longer a regular file) is skipped: whoever replaced it made that change,
    not this flush.

    From `SYNCFS_AT` files on, one syncfs(2) per filesystem instead (`sync_filesystems`): it writes back
    every dirty file and directory entry of the filesystem in one journal commit, 4-5x faster than a
    thousand fsyncs from the pool (measured here), whatever else is dirty on it too."""
    todo = list(files)
    parents = dict.fromkeys(os.path.dirname(path) for path in todo)
    if len(todo) >= SYNCFS_AT and sync_filesystems([*parents, *dirs], site=site):
        return
    for start in range(0, len(todo), _WINDOW):
        fds: list[int] = []
        try:
            for path in todo[start : start + _WINDOW]:
                try:
                    fds.append(open_regular(Path(path), os.O_RDONLY))
                except (FileNotFoundError, UnsafePath):
                    continue
            for _ in fds:
                faults.hit(f"{site}:fsync")
            if fds:
                fsync_all(fds)
        finally:
            for fd in fds:
                os.close(fd)
    fsync_dirs(dict.fromkeys(dirs), site=site)


SYNCFS_AT = 64  # files in one flush from which `fsync_paths` syncs the filesystem instead


def sync_filesystems(directories: Iterable[str | Path], *, site: str = "flush") -> bool:
    """syncfs(2) once for each filesystem these directories are on (fault site `<site>:syncfs`, once per
    filesystem); False, having synced nothing, where there is no syncfs (not Linux, an old libc) or a
    directory cannot be opened, so that the caller fsyncs file by file."""
    call = _syncfs()
    if call is None:
        return False
    fds: dict[int, int] = {}  # st_dev -> a directory on it
    try:
        for directory in dict.fromkeys(directories):
            try:
                fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                return False
            device = os.fstat(fd).st_dev
            if device in fds:
                os.close(fd)
            else:
                fds[device] = fd
        for fd in fds.values():
            faults.hit(f"{site}:syncfs")
            if call(fd) != 0:
                error = ctypes.get_errno()
                raise OSError(error, f"syncfs: {os.strerror(error)}")
    finally:
        for fd in fds.values():
            os.close(fd)
    return True


@functools.cache
def _libc(name: str, *argtypes: Any) -> Any:
    """The C library's `name` (Linux only), typed, looked up once; None where there is none (not Linux, or
    a libc too old to have it)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        call = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (AttributeError, OSError):
        return None
    call.argtypes = list(argtypes)
    call.restype = ctypes.c_int
    return call


def _syncfs() -> Any:
    return _libc("syncfs", ctypes.c_int)


def atomic_write(path: Path, data: bytes, *, fsync: bool = True, site: str = "file") -> None:
    """Replace `path` with `data` so that a reader sees the old bytes or the new, never a mix."""
    atomic_write_many([(path, data)], fsync=fsync, site=site)


def atomic_write_many(
    items: Iterable[tuple[Path, bytes]],
    *,
    fsync: bool = True,
    site: str = "file",
    exclusive: bool = False,
    dirs: Iterable[Path] = (),
) -> None:
    """Atomically replace several files; each is atomic on its own, and each directory is fsynced once.

    In windows of `_WINDOW` files: every temp file of the window is written, then all are fsynced at
    once, then each is renamed over its file in order; the directories are fsynced once at the end. No
    file is renamed before its bytes are durable, so a crash leaves each file old or new, never torn or
    empty; the temp files of the files not renamed yet stay behind for `sweep_temp`.

    `exclusive`: create each file, never replace one. The complete temp file is renamed to its name with
    `RENAME_NOREPLACE` (`rename_noreplace`; where the kernel lacks it, hard-linked, then unlinked), which
    fails with `FileExistsError` if the name is taken, by anyone, at any moment before: a reader never sees
    a partial file and an existing file is never overwritten. The items
    before a collision stay written; callers create one file per call.

    `dirs`: more directories to fsync with the files' (the parent of a directory made for them)."""
    todo = list(items)
    directories: dict[Path, None] = {}
    if exclusive and not fsync:
        for path, data in todo:  # nothing to fsync before the renames: one file after another
            create_unsynced(path, data, site=site)
            directories[path.parent] = None
        todo = []
    for start in range(0, len(todo), _WINDOW):
        written = _write_window(todo[start : start + _WINDOW], fsync=fsync, site=site)
        pins = Pins()
        try:
            for i, (path, tmp) in enumerate(written):
                renamed = False
                try:
                    faults.hit(f"{site}:rename")
                    if exclusive:
                        renamed = rename_noreplace(tmp, path)
                        if not renamed:
                            os.link(tmp, path)
                    else:
                        if len(written) > 1:
                            pins.hold(path)
                        os.replace(tmp, path)
                except faults.InjectedCrash:
                    raise  # a 'dead' process leaves its temp files behind
                except BaseException:
                    for _path, left in written[i:]:
                        left.unlink(missing_ok=True)
                    raise
                if exclusive and not renamed:
                    _drop_temp(tmp, site)
                directories[path.parent] = None
        finally:
            pins.release()
    directories.update(dict.fromkeys(dirs))
    if fsync and directories:
        fsync_dirs(directories, site=site)


def create_unsynced(path: str | Path, data: bytes, *, site: str = "file") -> None:
    """Create `path` holding `data` without an fsync (the caller makes it durable later, as a bulk run's
    flush does), never replacing a file: the complete temp file is renamed to its name with
    `RENAME_NOREPLACE` (or linked, then unlinked), `FileExistsError` if the name is taken. A reader never
    sees a partial file. On plain strings, no `Path` per file: an import creates thousands."""
    path = os.fspath(path)
    directory, slash, name = path.rpartition("/")
    tmp = f"{directory}{slash}.{name}.{_pid}-{next(_counter)}{TMP_SUFFIX}"
    os.close(_new_file(tmp, data, site))
    try:
        faults.hit(f"{site}:rename")
        renamed = rename_noreplace(tmp, path)
        if not renamed:
            os.link(tmp, path)
    except faults.InjectedCrash:
        raise  # a 'dead' process leaves its temp file behind
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if not renamed:
        _drop_temp(tmp, site)


class Pins:
    """Holds files about to be replaced (an `O_PATH` fd each), so that a rename does not free the old
    inode inline: freeing one costs ext4 ≈ 0.25 ms, one after another, and `release` frees them all at once
    from the pool (60 node files: 14 ms inline, 3.5 ms so; measured here). Only the time moves: the rename
    unlinks the old inode either way, and after a crash the filesystem's orphan cleanup frees it."""

    def __init__(self) -> None:
        self._fds: list[int] = []

    def hold(self, path: Path) -> None:
        if _O_PATH is None:
            return
        try:
            self._fds.append(os.open(path, _O_PATH | os.O_NOFOLLOW))
        except OSError:
            return  # nothing there yet (or not ours to hold): the rename goes ahead all the same

    def release(self) -> None:
        fds, self._fds = self._fds, []
        if fds:
            with contextlib.suppress(OSError):  # a close that fails has nothing to undo
                _each_at_once(os.close, fds)


def rename_noreplace(source: str | Path, target: str | Path) -> bool:
    """Rename `source` to `target` unless `target` exists (`FileExistsError`), in one step: renameat2(2)
    with `RENAME_NOREPLACE`. False (nothing done) where the kernel, libc or filesystem has no such call;
    the caller then links and unlinks, two directory updates instead of one (under a loaded disk the
    pair cost 1.5-2x the rename, measured here)."""
    call = _renameat2 or _find_renameat2()
    if call is None:
        return False
    if call(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), _RENAME_NOREPLACE) == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        _give_up_renameat2()  # this filesystem or kernel: link + unlink from now on
        return False
    raise OSError(error, os.strerror(error), str(source), None, str(target))


_AT_FDCWD, _RENAME_NOREPLACE = -100, 1
_renameat2_missing = False  # the kernel or filesystem refused it once: link + unlink from then on


_renameat2: Any = None  # the C function, once found (a node file each: no lookup per call)


def _give_up_renameat2() -> None:
    global _renameat2_missing, _renameat2
    _renameat2_missing, _renameat2 = True, None


def _find_renameat2() -> Any:
    global _renameat2
    if _renameat2_missing:
        return None
    _renameat2 = _libc(
        "renameat2", ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint
    )
    return _renameat2


def _write_window(items: list[tuple[Path, bytes]], *, fsync: bool, site: str) -> list[tuple[Path, Path]]:
    """Write each item's temp file and fsync them all: (path, temp path) for each, in order. On an error
    every temp file goes; on a simulated death they stay, as a real death leaves them."""
    written: list[tuple[Path, Path, int]] = []
    try:
        try:
            for path, data in items:
                tmp, fd = _write_temp(path, data, site=site)
                written.append((path, tmp, fd))
            if fsync:
                for _ in written:
                    faults.hit(f"{site}:fsync")
                fsync_all([fd for _path, _tmp, fd in written])
        finally:
            for _path, _tmp, fd in written:
                os.close(fd)
    except faults.InjectedCrash:
        raise
    except BaseException:
        for _path, tmp, _fd in written:
            tmp.unlink(missing_ok=True)
        raise
    return [(path, tmp) for path, tmp, _fd in written]


def _drop_temp(tmp: str | Path, site: str) -> None:
    """The file is in place under its name; its temp name goes (a death here leaves it to the sweep)."""
    faults.hit(f"{site}:unlink")
    try:
        os.unlink(tmp)
    except OSError as exc:
        log.warning("could not remove the temp file %s: %s", tmp, exc)


def append_bytes(path: Path, data: bytes, *, fsync: bool = True, site: str = "append") -> int:
    """Append `data` to `path` (created if missing) and fsync it; returns the offset it was written at.

    The caller serialises appends to `path` (a lock). If a step fails, the file is put back as it was
    (truncated to its old size, or removed if this call created it) before the error propagates, so a
    failed append never leaves a half record, nor a whole one its caller believes was not written."""
    created = not path.exists()
    fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)  # never through a symlink
    offset = os.lseek(fd, 0, os.SEEK_END)
    try:
        try:
            _write_all(fd, data, site)
            if fsync:
                faults.hit(f"{site}:fsync")
                os.fsync(fd)
        finally:
            os.close(fd)
        if created and fsync:
            fsync_dir(path.parent, site=site)
    except faults.InjectedCrash:
        raise  # a 'dead' process leaves what it wrote
    except BaseException:
        _undo_append(path, offset, created=created, fsync=fsync)
        raise
    return offset


def _undo_append(path: Path, offset: int, *, created: bool, fsync: bool) -> None:
    try:
        if created and offset == 0:
            path.unlink(missing_ok=True)
            return
        with path.open("r+b") as f:
            f.truncate(offset)
            if fsync:
                os.fsync(f.fileno())
    except OSError as exc:  # the original error is the one to report
        log.warning("could not undo a failed append to %s: %s", path, exc)
