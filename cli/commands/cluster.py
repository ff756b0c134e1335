"""`dagmem cluster status`."""

from __future__ import annotations

import argparse

from .._command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["status"], help="status: each home, its node, pid, path and debt")
    parser.add_argument(
        "--address", default="auto", help="the Ray cluster (default auto: the one started on this machine)"
    )


def _run(args: argparse.Namespace) -> int:
    from .._cluster import command

    return command(args)


COMMAND = Command(
    name="cluster",
    help="homes served by Ray actors (extra 'ray'): where each lives and what it owes",
    description="Ask a running Ray cluster about its dagmem homes. --home is not used.",
    add_arguments=_arguments,
    run=_run,
)
