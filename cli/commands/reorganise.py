"""`dagmem reorganise`."""

from __future__ import annotations

import argparse

from ...memory.write import DISTILLERS
from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--distiller",
        default="extractive",
        choices=DISTILLERS,
        help="extractive: identical claims and rule-found supersessions; openai: also what a model judges so",
    )


def _run(args: argparse.Namespace) -> int:
    from .._reorganise import command

    return command(args)


COMMAND = Command(
    name="reorganise",
    help="merge duplicate blocks and mark superseded ones, in one transaction",
    add_arguments=_arguments,
    run=_run,
    home=Home.EXISTING,
    memory=True,
)
