"""One line per event a hook could not serve, in `<home>/hooks/hooks.log`: the host shows a hook's
stderr to its user (or nowhere), so the reason goes to a file under the home instead. Never raises: a
log that cannot be written is given up on, the host must carry on."""

from __future__ import annotations

import os
import time
from pathlib import Path

from ._home import state_dir

__all__ = ["LOG_NAME", "log_line"]

LOG_NAME = "hooks.log"
_ROTATE_AT = 1 << 20  # bytes: the log is kept to about 2 MiB (this file and one older)
_MAX_LINE = 2000  # characters of one message


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
