"""`dagmem verify`."""

from __future__ import annotations

import argparse

from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strict", action="store_true", help="records owed but not yet due are violations too"
    )
    parser.add_argument(
        "--repair",
        action="store_true",
        help="rebuild the index cache; drop markers whose record was never consumed",
    )
    parser.add_argument(
        "--forgotten",
        action="store_true",
        help="also scan every byte under the home (git objects decompressed) for each forgotten text",
    )


def _run(args: argparse.Namespace) -> int:
    from .._verify import command

    return command(args)


COMMAND = Command(
    name="verify",
    help="check a home with the independent oracle",
    add_arguments=_arguments,
    run=_run,
    home=Home.EXISTING,
)
