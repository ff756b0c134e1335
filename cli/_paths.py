"""Checks of the paths a command is given to write into: a mistake there is the user's (exit 2), not a
machine problem to retry."""

from __future__ import annotations

import errno
from pathlib import Path

from ._errors import CommandError

__all__ = ["out_directory"]


def out_directory(path: Path, flag: str = "--out") -> Path:
    """`path` as a directory to write into, made if missing; refused in one line if it cannot be."""
    if path.exists() and not path.is_dir():
        raise CommandError(f"{flag} {path}: not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise  # a full disk: the machine's problem, retryable (exit 75)
        raise CommandError(f"{flag} {path}: cannot be made a directory ({exc.strerror or exc})") from None
    return path
