"""`dagmem mcp`."""

from __future__ import annotations

import argparse

from .._arguments import add_knobs
from .._command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_knobs(parser)


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
