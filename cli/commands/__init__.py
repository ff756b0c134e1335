"""The table of the command line's commands, in the order `dagmem --help` lists them. Each module here
exports one `Command` record (`COMMAND`) and imports its implementation (a `cli/_*.py` module) only when it
runs, so building the parser stays cheap."""

from __future__ import annotations

import importlib

from .._command import Command

__all__ = ["COMMANDS", "by_name"]

# The one list of the commands: each name is a module here (`import_`: `import` is a Python keyword).
_MODULES = (
    "demo",
    "write",
    "status",
    "reorganise",
    "recall",
    "core",
    "held",
    "sessions",
    "show",
    "verify",
    "forget",
    "migrate",
    "import_",
    "bench",
    "view",
    "mcp",
    "hook",
    "install",
    "cluster",
    "sim",
)

COMMANDS: tuple[Command, ...] = tuple(
    importlib.import_module(f".{name}", __name__).COMMAND for name in _MODULES
)


def by_name(name: str) -> Command:
    """The command named `name` (one the parser accepted)."""
    return next(command for command in COMMANDS if command.name == name)
