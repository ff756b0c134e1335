"""`dagmem core`."""

from __future__ import annotations

import argparse

from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _run(args: argparse.Namespace) -> int:
    from .._recall import core_command

    return core_command(args)


COMMAND = Command(
    name="core",
    help="print the core facts as plain claims with their dates",
    add_arguments=_arguments,
    run=_run,
    home=Home.EXISTING,
    memory=True,
)
