"""The serving lock: at most one live `Runtime` serves a home (DESIGN §5: one writer per workspace).

The workspace lock is held for an install only (two writers take turns), so it cannot say that a home is
already being served: a second runtime would simply wait its turn and interleave with the first. The
serving lock is a separate `flock` on `memory/.dagmem/runtime.lock`, taken without waiting when a runtime
opens and held until it closes; the kernel releases it when the process dies, so a runtime restarted after
a crash (or by Ray, on another worker) takes it at once. Its holder's pid and host are written into it, for
the message that names who serves the home."""

from __future__ import annotations

import errno
import fcntl
import os
import socket
from pathlib import Path

from ..durable import open_regular
from ..errors import DagmemError

__all__ = ["HomeBusy", "ServingLock"]


class HomeBusy(DagmemError):
    """Another live runtime (another process, or another `Runtime.open` here) serves this home."""

    code = "HOME_BUSY"

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(
            f"the home of {path.parent.parent} is already served by another dagmem runtime ({holder}); "
            "one home has one runtime at a time"
        )
        self.path = path
        self.holder = holder


class ServingLock:
    """Held from `acquire` to `release` (or the process's death)."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self.path = path

    @classmethod
    def acquire(cls, path: Path) -> ServingLock:
        """Take the serving lock file `path` (`WorkspacePaths.serving_lock`) without waiting; `HomeBusy`
        when another holds it."""
        fd = open_regular(path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _holder(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise HomeBusy(path, holder) from None
            raise
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, path)

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # releases the flock


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "holder unknown"
