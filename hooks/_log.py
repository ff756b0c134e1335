"""One line per event a hook could not serve, in `<home>/hooks/hooks.log`: the host shows a hook's
stderr to its user (or nowhere), so the reason goes to a file under the home instead. Never raises: a
log that cannot be written is given up on, the host must carry on."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ._home import state_dir

__all__ = ["LOG_NAME", "WORKER", "LogLine", "last_worker_line", "log_line"]

LOG_NAME = "hooks.log"
_ROTATE_AT = 1 << 20  # bytes: the log is kept to about 2 MiB (this file and one older)
_MAX_LINE = 2000  # characters of one message
_TAIL = 64 << 10  # bytes of the log's end a reader looks at for the worker's last line
WORKER = frozenset({"sync", "import", "write"})  # what the worker logs under (a hook: "HOST EVENT")


def log_line(home: Path, what: str, message: str) -> None:
    """Append `<ISO time> <pid> <what>: <message>` (one line, whatever the message held)."""
    text = " ".join(message.split())[:_MAX_LINE]
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    line = f"{stamp} {os.getpid()} {what}: {text}\n".encode("utf-8", "replace")
    try:
        directory = state_dir(home)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / LOG_NAME
        try:
            if path.stat().st_size > _ROTATE_AT:
                os.replace(path, path.with_name(LOG_NAME + ".1"))
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, line)  # one write of one line: lines of two hooks never interleave
        finally:
            os.close(fd)
    except OSError:
        pass


class LogLine:
    """One line of the log: when (ISO 8601, UTC), what logged it, and the message. A plain class: every
    hook loads this module, and `typing` (a NamedTuple's) costs a fresh process milliseconds."""

    __slots__ = ("at", "message", "what")

    def __init__(self, at: str, what: str, message: str) -> None:
        self.at, self.what, self.message = at, what, message


def last_worker_line(home: Path) -> LogLine | None:
    """The worker's last line in the log (what it could not do last), read from the log's end without
    creating anything; None when it has logged nothing (or the log cannot be read)."""
    path = state_dir(home) / LOG_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        tail = os.pread(fd, _TAIL, max(0, size - _TAIL)).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    for line in reversed(tail.splitlines()):
        parts = line.split(" ", 2)
        if len(parts) < 3:
            continue
        what, _, message = parts[2].partition(": ")
        if what in WORKER:
            return LogLine(parts[0], what, message)
    return None
