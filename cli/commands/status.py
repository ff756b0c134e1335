"""`dagmem status`."""

from __future__ import annotations

import argparse

from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _run(args: argparse.Namespace) -> int:
    from .._write import status_command

    return status_command(args)


COMMAND = Command(
    name="status",
    help="the writer's last outcome and what is still owed",
    add_arguments=_arguments,
    run=_run,
    home=Home.EXISTING,
)
