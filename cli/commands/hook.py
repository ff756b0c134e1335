"""`dagmem hook HOST EVENT`: what an agent host runs on its events (`dagmem install` writes the entries).
`dagmem hook ...` never reaches this record's `run`: `__main__` and `cli.main` hand it to
`dagmem.hooks.hook_main` first, so a hook loads no command modules. The record makes it a command like
the others in `dagmem --help`."""

from __future__ import annotations

import argparse

from .._command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    from ...hooks import add_hook_arguments

    add_hook_arguments(parser)


def _run(args: argparse.Namespace) -> int:
    from ...hooks import run_hook

    return run_hook(args)


COMMAND = Command(
    name="hook",
    help="serve one event of an agent host (claude-code, codex, pi): context in, transcripts to memory",
    add_arguments=_arguments,
    run=_run,
    description="Read the host's event (JSON on stdin; codex: the last argument) and answer as the host "
    "documents. Never blocks or breaks the host: on any problem it exits 0, prints nothing and logs one "
    "line to <home>/hooks/hooks.log. Home: --home, $DAGMEM_HOME, else <project>/.dagmem.",
)
