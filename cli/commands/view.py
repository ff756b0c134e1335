"""`dagmem view`."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", action="append", help="only this session (repeatable)")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("dagmem-view.html"),
        help="the page (default ./dagmem-view.html; - for stdout)",
    )
    parser.add_argument("--open", action="store_true", help="open the page in a web browser")


def _run(args: argparse.Namespace) -> int:
    from .._view import command

    return command(args)


COMMAND = Command(
    name="view",
    help="draw the home's sessions as one self-contained HTML page",
    add_arguments=_arguments,
    run=_run,
    home=Home.EXISTING,
)
