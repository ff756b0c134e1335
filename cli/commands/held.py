"""`dagmem held`."""

from __future__ import annotations

import argparse

from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=("list", "approve", "reject"),
        default="list",
        help="list (default) the held items; approve ID moves one to the core; reject ID sets it aside",
    )
    parser.add_argument("block_id", nargs="?", metavar="ID", help="the held item's block id (b-<8 hex>)")


def _run(args: argparse.Namespace) -> int:
    from .._held import command

    return command(args)


COMMAND = Command(
    name="held",
    help="the candidate core facts held for review (not typed by the person): list, approve or reject",
    add_arguments=_arguments,
    run=_run,
    home=Home.EXISTING,
)
