"""The table of the command line's commands, in the order `dagmem --help` lists them. Each module here
exports one `Command` record (`COMMAND`) and imports its implementation (a `cli/_*.py` module) only when it
runs, so building the parser stays cheap."""

from __future__ import annotations

import importlib

from .._command import Command

__all__ = ["COMMANDS", "NAMES", "by_name"]

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
_MODULE_OF = {module.removesuffix("_"): module for module in _MODULES}
NAMES: tuple[str, ...] = tuple(_MODULE_OF)  # the commands' names, in the table's order

COMMANDS: tuple[Command, ...]  # every record, in the table's order: built on first use (`__getattr__`)


def by_name(name: str) -> Command:
    """The command named `name` (one of `NAMES`): only its module is imported, so a fresh process running
    one command loads no other command's record."""
    record: Command = importlib.import_module(f".{_MODULE_OF[name]}", __name__).COMMAND
    return record


def __getattr__(name: str) -> tuple[Command, ...]:
    if name != "COMMANDS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    table = globals()["COMMANDS"] = tuple(by_name(command) for command in NAMES)
    return table
