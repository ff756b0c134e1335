"""`dagmem hook HOST EVENT`: what an agent host runs on its events (`dagmem install` writes the entries).
`dagmem hook ...` is handed its arguments unparsed (`own_argv`): `__main__` runs `dagmem.hooks.hook_main`
before the command line loads, and `cli.main` does the same. The record lists it in `dagmem --help`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .._command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    from ...hooks import add_hook_arguments

    add_hook_arguments(parser)


def _own_argv(argv: Sequence[str]) -> int:
    from ...hooks import hook_main

    return hook_main(argv)


def _run(args: argparse.Namespace) -> int:
    from .._blas import one_blas_thread

    one_blas_thread()  # before a prompt's search loads numpy
    from ...hooks import run_hook

    return run_hook(args)


COMMAND = Command(
    name="hook",
    help="serve one event of an agent host (claude-code, codex, pi): context in, transcripts to memory",
    add_arguments=_arguments,
    run=_run,
    own_argv=_own_argv,
    description="Read the host's event (JSON on stdin; codex: the last argument) and answer as the host "
    "documents. Never blocks or breaks the host: on any problem it exits 0, prints nothing and logs one "
    "line to <home>/hooks/hooks.log. Home: --home, $DAGMEM_HOME, else <project>/.dagmem.",
)
