"""`dagmem import FORMAT PATH...` (the module's name ends in `_`: `import` is a Python keyword)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._arguments import seconds
from .._command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "format", choices=["claude-code", "pi", "codex", "openai"], help="the transcript format"
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="transcript files or directories")
    parser.add_argument("--session", help="import everything into this session id")
    parser.add_argument(
        "--follow", action="store_true", help="keep watching the files and feed new lines to a runtime"
    )
    parser.add_argument("--interval", type=seconds, default=1.0, help="with --follow: seconds between polls")


def _run(args: argparse.Namespace) -> int:
    from .._import import command

    return command(args)


COMMAND = Command(
    name="import",
    help="import agent transcripts (claude-code, pi, codex, openai) as sessions",
    add_arguments=_arguments,
    run=_run,
    memory=True,
)
