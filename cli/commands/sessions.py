"""`dagmem sessions`."""

from __future__ import annotations

import argparse

from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _run(args: argparse.Namespace) -> int:
    from .._sessions import sessions_command

    return sessions_command(args)


COMMAND = Command(
    name="sessions",
    help="each session: its nodes, head, tips (with their last turn) and debt",
    add_arguments=_arguments,
    run=_run,
    home=Home.EXISTING,
)
