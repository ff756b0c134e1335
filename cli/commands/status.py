"""`dagmem status [--session S] [--wait [SECONDS]]`."""

from __future__ import annotations

import argparse

from .._arguments import seconds
from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", action="append", help="only this session's records owed (repeatable)")
    parser.add_argument(
        "--wait",
        nargs="?",
        type=seconds,
        const=60.0,  # seconds: a worker's run over a long transcript takes a few
        default=None,
        metavar="SECONDS",
        help="wait until the hooks' queue is empty and their worker idle, at most SECONDS (default 60); "
        "exit 0 when done, 75 when the time ran out",
    )


def _run(args: argparse.Namespace) -> int:
    from .._status import status_command

    return status_command(args)


COMMAND = Command(
    name="status",
    help="the writer's last outcome, what is still owed, the hooks' queue and worker",
    add_arguments=_arguments,
    run=_run,
    home=Home.EXISTING,
)
