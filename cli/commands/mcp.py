"""`dagmem mcp`."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._arguments import add_knobs
from .._command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_knobs(parser)
    parser.add_argument(
        "--scope",
        type=Path,
        metavar="FILE",
        help="serve only what this JSON scope file allows (sessions, origins, held, core, read_only); "
        "default: the owner's full scope, every session and the core",
    )
    parser.add_argument(
        "--read-only", action="store_true", help="drop the tools that write (append_turn, set_head, flush)"
    )


def _run(args: argparse.Namespace) -> int:
    from .._mcp import command

    return command(args)


COMMAND = Command(
    name="mcp",
    help="serve memory to an agent over MCP (stdio): recall, core, status, sessions, append_turn, set_head",
    add_arguments=_arguments,
    run=_run,
    memory=True,
)
