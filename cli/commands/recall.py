"""`dagmem recall QUERY`."""

from __future__ import annotations

import argparse

from .._arguments import positive_int
from .._command import Command, Home


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="what to look for")
    parser.add_argument("--session", help="rank relative to this session's branch (its head by default)")
    parser.add_argument(
        "--tip", help="with --session: the branch tip the reader is on (an id or a unique prefix of one)"
    )
    parser.add_argument("-k", type=positive_int, default=5, help="how many hits (default 5)")
    parser.add_argument(
        "--siblings",
        choices=["demote", "exclude", "include"],
        default="demote",
        help="blocks only from other branches of the session: below on-branch hits (default), dropped, "
        "or ranked as any other",
    )
    parser.add_argument(
        "--history",
        action="store_true",
        help="rank superseded and left blocks by relevance too (what was once true), each labelled; by "
        "default they come after every current one",
    )
    parser.add_argument(
        "--context", action="store_true", help="print one <memory-context> block (core first), to inject"
    )
    parser.add_argument(
        "--checkout",
        metavar="DIR",
        help="the reader's git checkout: label and rank hits by git branch (said on a branch not merged "
        "into its HEAD, or in another repository) and check the files they cite",
    )


def _run(args: argparse.Namespace) -> int:
    from .._blas import one_blas_thread

    one_blas_thread()  # before the search loads numpy
    from .._recall import recall_command

    return recall_command(args)


COMMAND = Command(
    name="recall",
    help="search memory (branch-aware with --session)",
    add_arguments=_arguments,
    run=_run,
    home=Home.EXISTING,
    memory=True,
)
