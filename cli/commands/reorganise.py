"""`dagmem reorganise`."""

from __future__ import annotations

import argparse

from ...memory.settings import DEFAULTS
from ...memory.write import DISTILLERS
from .._arguments import positive_int
from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--distiller",
        default="extractive",
        choices=DISTILLERS,
        help="extractive: identical claims and rule-found supersessions; openai: also what a model judges so",
    )
    parser.add_argument(
        "--backfill",
        action="store_true",
        help="instead: distil the archived turns no block cites (after a migration), in batches, each once",
    )
    parser.add_argument(
        "--threshold",
        type=positive_int,
        default=DEFAULTS.token_threshold,
        help=f"with --backfill: batch size in tokens (default {DEFAULTS.token_threshold})",
    )


def _run(args: argparse.Namespace) -> int:
    if args.backfill:
        from .._backfill import command as backfill

        return backfill(args)
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
