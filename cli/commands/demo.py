"""`dagmem demo`."""

from __future__ import annotations

import argparse

from .._command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", default="demo", help="session id to use (default: demo)")


def _run(args: argparse.Namespace) -> int:
    from .._demo import command

    return command(args)


COMMAND = Command(
    name="demo",
    help="append, fork, write and show a branching conversation",
    add_arguments=_arguments,
    run=_run,
    memory=True,
)
