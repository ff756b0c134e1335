"""`dagmem mcp`."""

from __future__ import annotations

import argparse

from ...memory.settings import DEFAULTS
from .._arguments import positive_int, seconds
from .._command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--threshold",
        type=positive_int,
        default=DEFAULTS.token_threshold,
        help=f"batch size in tokens (default {DEFAULTS.token_threshold})",
    )
    parser.add_argument(
        "--idle-after",
        type=seconds,
        default=DEFAULTS.idle_after,
        help=f"seconds of quiet that end a session (default {DEFAULTS.idle_after:g})",
    )


def _run(args: argparse.Namespace) -> int:
    from .._mcp import command

    return command(args)


COMMAND = Command(
    name="mcp",
    help="serve memory to an agent over MCP (stdio): recall, core, status, sessions, append_turn, set_head",
    add_arguments=_arguments,
    run=_run,
)
