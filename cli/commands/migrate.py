"""`dagmem migrate`."""

from __future__ import annotations

import argparse

from .._command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _run(args: argparse.Namespace) -> int:
    from .._migrate import command

    return command(args)


COMMAND = Command(
    name="migrate",
    help="adopt a home written by a position-cursor system (runtime.json cursors)",
    add_arguments=_arguments,
    run=_run,
    memory=True,
)
