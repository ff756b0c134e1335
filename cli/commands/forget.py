"""`dagmem forget`."""

from __future__ import annotations

import argparse

from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--node", metavar="S/N", help="forget one turn: node N of session S")
    what.add_argument("--session", metavar="S", help="forget every turn of session S")
    what.add_argument("--match", metavar="TEXT", help="forget every turn whose text contains TEXT")
    parser.add_argument("--regex", action="store_true", help="--match is a Python regular expression")
    parser.add_argument("--yes", action="store_true", help="act (without it, only show what would go)")


def _run(args: argparse.Namespace) -> int:
    from .._forget import command

    return command(args)


COMMAND = Command(
    name="forget",
    help="remove turns from every copy the home keeps (shows what first; acts with --yes)",
    add_arguments=_arguments,
    run=_run,
    home=Home.SESSIONS,
    description=(
        "Remove turns from memory for good: node files (tombstones), the evidence archive (tombstone "
        "frames), topic blocks and core.md, the SQLite and recall indexes, staged files and the sessions' "
        "git history; then scan every byte under the home for the forgotten text. Without --yes it only "
        "shows what it would remove. Exit 1 if a copy remains."
    ),
)
