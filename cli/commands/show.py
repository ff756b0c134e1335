"""`dagmem show SESSION`."""

from __future__ import annotations

import argparse

from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", help="the session id")
    parser.add_argument(
        "--tip", help="the branch's last node: an id or any unique prefix of one (default: head)"
    )


def _run(args: argparse.Namespace) -> int:
    from .._sessions import show_command

    return show_command(args)


COMMAND = Command(
    name="show",
    help="print one branch of a session as text, root first",
    add_arguments=_arguments,
    run=_run,
    home=Home.EXISTING,
)
