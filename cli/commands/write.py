"""`dagmem write`."""

from __future__ import annotations

import argparse

from ...memory.write import DISTILLERS
from .._arguments import add_knobs
from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", action="append", help="only this session (repeatable)")
    parser.add_argument(
        "--force", action="store_true", help="boundary-write every session: nothing stays owed"
    )
    parser.add_argument(
        "--distiller",
        default="extractive",
        choices=DISTILLERS,
        help="how topics are distilled: extractive (offline) or openai (a model server: DAGMEM_LLM_*)",
    )
    add_knobs(parser)


def _run(args: argparse.Namespace) -> int:
    from .._write import write_command

    return write_command(args)


COMMAND = Command(
    name="write",
    help="write what the sessions of a home owe: full batches, and everything of idle sessions",
    add_arguments=_arguments,
    run=_run,
    home=Home.SESSIONS,  # it writes into the home, so it must be one already: nothing is created
    memory=True,
)
