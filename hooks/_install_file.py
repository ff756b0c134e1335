"""Reading and writing a host's configuration file for `dagmem install`, safely beside the host itself.

The host (Claude Code, Codex) may rewrite its own file at any moment, and takes no lock we could share:
an install reads the file, merges, and writes it only if the file still holds exactly the bytes it read,
checked under a lock (another `dagmem install`) and again just before the file is replaced. A file that
changed meanwhile is read and merged again (`Changed`), so the host's change is never lost.

A file is replaced whole (a temp file beside it, fsynced, renamed over it, its directory fsynced: never
half-written), keeping its mode. A file with more than one hard link is written in place instead (then
fsynced): a rename would give this name a new file and leave the other links holding the old one.

Every problem of the file system is `InvalidInput` naming the file, one line: a symbolic link loop, a
parent that is a file, a FIFO where the file should be, no permission."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from ..memory.errors import DagmemError, InvalidInput

__all__ = ["MAX_BYTES", "Changed", "read", "real_path", "write"]

MAX_BYTES = 16 << 20  # a settings file is a few KB: anything this large is not one
_TEMP = ".{name}.dagmem-install-{pid}.tmp"


class Changed(DagmemError):
    """The file no longer holds the bytes the change was planned from (its host wrote it meanwhile)."""


def real_path(path: Path) -> Path:
    """The file `path` names: a symbolic link's target (the link is kept, its target written)."""
    try:
        return path.resolve(strict=False) if path.is_symlink() else path
    except (RuntimeError, OSError) as exc:  # RuntimeError: 3.11's `resolve` of a symbolic link loop
        raise InvalidInput(
            f"{path}: a symbolic link that leads nowhere ({_why(exc)}); nothing changed"
        ) from None


def read(path: Path) -> bytes | None:
    """The file's bytes; None when it does not exist. Never opens a FIFO or a device (it would block)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InvalidInput(f"{path}: a directory, not a settings file; nothing changed") from None
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot be read ({_why(exc)}); nothing changed") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InvalidInput(f"{path}: a directory, not a settings file; nothing changed")
        if not stat.S_ISREG(info.st_mode):
            raise InvalidInput(f"{path}: not a regular file; nothing changed")
        if info.st_size > MAX_BYTES:
            raise InvalidInput(
                f"{path}: {info.st_size:,} bytes, too large for a settings file; nothing changed"
            )
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot be read ({_why(exc)}); nothing changed") from None
    finally:
        os.close(fd)


def write(path: Path, expected: bytes | None, after: bytes | None) -> None:
    """Make `path` hold `after` (None: remove it), provided it still holds `expected` (None: absent);
    `Changed` otherwise, and nothing is written."""
    try:
        if after is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path.parent):
            _check(path, expected)
            if after is None:
                if expected is not None:
                    path.unlink()
                return
            info = _stat(path)
            if info is not None and (info.st_mode & 0o222 == 0 or not os.access(path, os.W_OK)):
                # No write bit, or no permission: read-only (a rename would replace it all the same,
                # and root may write anything: the file's own mode says what its owner wants).
                raise InvalidInput(f"{path}: read-only; nothing changed")
            if info is not None and info.st_nlink > 1:
                _in_place(path, after)
            else:
                _replace(path, expected, after, None if info is None else stat.S_IMODE(info.st_mode))
    except (InvalidInput, Changed):
        raise
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot be written ({_why(exc)}); nothing changed") from None


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """The directory's flock: two `dagmem install`s never interleave their read-check-write (the
    directory, not a lock file of ours: nothing is left beside the user's settings)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except FileNotFoundError:
        return None


def _check(path: Path, expected: bytes | None) -> None:
    if read(path) != expected:
        raise Changed(str(path))


def _in_place(path: Path, data: bytes) -> None:
    """Overwrite the file's own inode (every hard link sees it), then fsync: not atomic, which is the
    price of keeping the links (a rename would split them)."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        view = memoryview(data)
        offset = 0
        while offset < len(view):
            offset += os.pwrite(fd, view[offset:], offset)
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)


def _replace(path: Path, expected: bytes | None, data: bytes, mode: int | None) -> None:
    tmp = path.with_name(_TEMP.format(name=path.name, pid=os.getpid()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        _check(path, expected)  # the host may have written it while the temp file was made
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    dfd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(dfd)
    except OSError as exc:  # some filesystems cannot fsync a directory: the rename itself is done
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(dfd)
