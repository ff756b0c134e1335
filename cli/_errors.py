"""The command line's error and its exit statuses: a module of its own, so every command can import
`CommandError` without importing `_main` (which imports the commands)."""

from __future__ import annotations

from typing import Final

from ..memory.errors import DagmemError

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_RETRY", "EXIT_USAGE", "CommandError"]

# Exit statuses: done; a permanent failure; a user's mistake (as argparse uses it); retry later (sysexits'
# EX_TEMPFAIL); stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_RETRY: Final = 75
EXIT_INTERRUPTED: Final = 130


class CommandError(DagmemError):
    """A user's mistake found by the command line itself; `code` is its reason code."""

    def __init__(self, message: str, code: str = "INVALID_INPUT") -> None:
        super().__init__(message)
        self.code = code
