"""Opening files without being led astray: never through a symbolic link, never a FIFO or a device.

A home is the user's, but what is inside it may be planted (a hostile tester, a bad sync tool): a symlinked
directory would take dagmem's writes out of the home, and a FIFO would hang every reader that opens it. So
the last component is opened with `O_NOFOLLOW | O_NONBLOCK` and checked with `fstat` (a FIFO opens at once
and is then refused), and directories are checked with `lstat` before anything is written under them.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from ..errors import UnsafePath

__all__ = ["check_dir", "check_file", "exclusive_lock", "open_regular", "read_below", "read_regular"]

_SYMLINK = "is a symbolic link: dagmem never follows one"


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return _SYMLINK
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    if stat.S_ISFIFO(mode):
        return "is a FIFO, not a regular file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file"
    return "is a device, not a regular file"


def open_regular(path: Path, flags: int, mode: int = 0o644) -> int:
    """`os.open` that refuses a symlink (as the last component) and anything but a regular file; the fd
    is blocking again when it is returned. Raises `UnsafePath`, or the `OSError` of the open."""
    fd, _info = _open_file(path, flags, mode)
    try:
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_file(path: Path | str, flags: int, mode: int = 0o644) -> tuple[int, os.stat_result]:
    """`open_regular`'s fd, still non-blocking (a regular file's reads and writes never wait for it
    anyway), and the `fstat` that found it a regular file."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(Path(path), _SYMLINK) from None
        if exc.errno == errno.ENXIO:  # a FIFO opened for writing with no reader
            raise UnsafePath(Path(path), "is a FIFO, not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(Path(path), _kind(info.st_mode))
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_regular(path: Path | str) -> bytes | None:
    """The bytes of a regular file, or None if it does not exist; `UnsafePath` for anything else (a
    hot caller passes a string: no `Path` per file)."""
    try:
        fd, before = _open_file(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        # The whole file in one read (plus a byte, to see its end): `os.read(fd, n)` allocates n bytes first,
        # so a fixed 1 MiB buffer cost an mmap and munmap per small file.
        chunks = []
        want = before.st_size + 1
        while chunk := os.read(fd, want):
            chunks.append(chunk)
            if len(chunk) < want:
                break  # a short read of a regular file is its end
            want = 1 << 16  # the file grew while it was read: read on
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_below(root: Path, relpath: str) -> bytes | None:
    """`read_regular(root / relpath)` with every directory below `root` checked too: a planted
    `topics -> /etc` is refused as a symlinked `topics/x.md` is. None if a part does not exist."""
    *directories, name = relpath.split("/")
    where = root
    for part in directories:
        where = where / part
        if not check_dir(where):
            return None
    return read_regular(where / name)


def check_dir(path: Path) -> bool:
    """Whether `path` is a real directory (False: it does not exist); `UnsafePath` if it is a symlink
    or something else."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(info.st_mode):
        return True
    raise UnsafePath(path, _SYMLINK if stat.S_ISLNK(info.st_mode) else "is not a directory")


def check_file(path: Path) -> bool:
    """Whether `path` is a regular file (False: it does not exist); `UnsafePath` if it is anything else."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISREG(info.st_mode):
        return True
    raise UnsafePath(path, _kind(info.st_mode))


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[int]:
    """Hold an `flock` on `path` (created if missing; the kernel releases it when the process dies);
    yields the lock file's fd. Waits in the kernel (not by polling, which a holder that takes the lock
    again at once would starve), so it is for locks held briefly."""
    fd = open_regular(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # releases the lock
