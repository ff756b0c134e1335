"""The `dagmem` command line: parses arguments, checks `--home`, runs one command and shows its errors.

The parser and the dispatch are built from one table of command records (`commands/`); each command's
implementation is imported only when it runs (so `dagmem --help` stays fast). A user's mistake (a
`DagmemError`, a bad `--home`, an unreadable file) prints one line and exits 2 (`--json`: an object
`{"error", "code"}` on stdout); anything else is a bug and says so."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from .._version import __version__
from ..memory.errors import DagmemError, MemoryOff
from ..memory.format import HomePaths
from ..memory.outcomes import ReasonCode, WriteFailure, classify
from ..memory.switch import memory_off
from . import commands
from ._command import Command, Home
from ._errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_RETRY, EXIT_USAGE, CommandError
from .commands import NAMES, by_name

__all__ = ["CommandError", "main"]  # CommandError: re-exported, commands imported it from here

DEFAULT_HOME = Path(".dagmem")


def default_home() -> Path:
    """`--home` when it is not given: `DAGMEM_HOME`, else `./.dagmem`, except in a linked git worktree
    without one of its own: its repository's main worktree's, as the hooks choose (`hooks.project_home`)."""
    if os.environ.get("DAGMEM_HOME"):
        return Path(os.environ["DAGMEM_HOME"])
    if DEFAULT_HOME.exists() or DEFAULT_HOME.is_symlink():
        return DEFAULT_HOME
    from ..hooks import project_home  # a few small reads: `.git` and the worktree's `commondir`

    try:
        shared = project_home(os.getcwd())
    except OSError:
        return DEFAULT_HOME
    return DEFAULT_HOME if shared.parent == Path(os.getcwd()) else shared


class _Parser(argparse.ArgumentParser):
    """argparse, but its refusals are a user's mistake like any other: one line, not the usage text
    (a JSON object with `--json`), exit 2. Its subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        raise CommandError(f"{self.prog}: {message} (see {self.prog} --help)")


# The options every command takes, accepted before the command's name too (`dagmem --home H status`);
# those that take a value, so that the value is not read as the command's name.
_VALUED = frozenset({"--home"})


def _command_at(argv: Sequence[str]) -> int | None:
    """Where the command's name is in `argv`: the first word that is neither an option nor an option's
    value (`--home H`); None when there is none."""
    skip = False
    for i, word in enumerate(argv):
        if skip:
            skip = False
        elif word in _VALUED:
            skip = True
        elif not word.startswith("-"):
            return i
    return None


def _parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of `argv`: every command is listed (for `--help` and a mistaken name), and only the
    one `argv` names gets its arguments, so a command loads no other command's choices (the names of
    the benchmarks load the benchmarks' report). Without `argv`, every command gets them."""
    at = None if argv is None else _command_at(argv)
    chosen = None if argv is None else ("" if at is None else argv[at])
    parser = _Parser(
        prog="dagmem", description="Long-term memory for branching agent sessions.", parents=[_common()]
    )
    parser.add_argument("--version", action="version", version=f"dagmem {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # A known command's name: only its record is loaded and its parser built (each costs a millisecond
    # of argparse's message look-ups, paid by every fresh process); any other word gets them all, to list
    # or refuse.
    table = (by_name(chosen),) if chosen is not None and chosen in NAMES else commands.COMMANDS
    for command in table:
        # A parent of its own each: argparse shares a parent's option objects with every child, so a
        # change to one command's (a default) would change every other command's.
        child = sub.add_parser(
            command.name, parents=[_common()], help=command.help, description=command.description
        )
        if chosen is None or command.name == chosen:
            command.add_arguments(child)
    return parser


def _common() -> _Parser:
    """The options every command takes, before its name or after it. No defaults here (argparse copies a
    command's defaults over what was given before its name): `_defaults` fills them in after parsing."""
    common = _Parser(add_help=False)
    common.add_argument(
        "--home",
        type=Path,
        default=argparse.SUPPRESS,
        help="the dagmem home (default $DAGMEM_HOME, else ./.dagmem)",
    )
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON object instead of text"
    )
    common.add_argument(
        "-v", "--verbose", action="count", default=argparse.SUPPRESS, help="log more (-vv for debug)"
    )
    return common


def parse_args(argv: Sequence[str], *, every_command: bool = False) -> argparse.Namespace:
    """`argv` parsed, the common options' defaults filled in (`every_command`: with a parser that has
    every command's arguments, as `dagmem --help` builds it)."""
    args = (_parser() if every_command else _parser(argv)).parse_args(argv)
    return _defaults(args, by_name(args.command))


def _defaults(args: argparse.Namespace, command: Command) -> argparse.Namespace:
    """The common options' defaults, for those given neither before the command's name nor after it."""
    if "home" not in args:
        args.home = default_home() if command.default_home else None
    if "json" not in args:
        args.json = False
    if "verbose" not in args:
        args.verbose = 0
    return args


# Failures that name a damaged or mistaken file for the user to fix: exit 2, like any mistake.
_DAMAGE = frozenset({ReasonCode.INVALID_INPUT, ReasonCode.WORKSPACE_INVALID, ReasonCode.ARCHIVE_CORRUPT})


def _check_home(command: Command, home: Path) -> None:
    """A command that reads a home never creates one: a missing or wrong `--home` is refused first."""
    if command.home is Home.ANY:
        return
    if home.is_symlink() and not home.exists():
        raise CommandError(f"--home {home}: a broken symbolic link")
    if home.exists() and not home.is_dir():
        raise CommandError(f"--home {home}: not a directory")
    if command.home is Home.SESSIONS and not HomePaths(home).sessions.is_dir():
        raise CommandError(
            f"--home {home}: no sessions/ directory, so not a dagmem home (nothing was created)"
        )
    if not home.is_dir():
        raise CommandError(f"--home {home}: no such directory")


def _run(args: argparse.Namespace) -> int:
    """Run the command the arguments name (its module imports its implementation only now)."""
    return by_name(args.command).run(args)


def _error(args: argparse.Namespace, message: str, code: str, status: int = EXIT_USAGE) -> int:
    message = " ".join(message.split())  # one line, whatever the cause carried
    if getattr(args, "json", False):
        print(json.dumps({"error": message, "code": code}))
    else:
        print(f"error: {message}", file=sys.stderr)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    at = _command_at(argv)
    own = by_name(argv[at]).own_argv if at is not None and argv[at] in NAMES else None
    if own is not None and at is not None:
        return own([*argv[:at], *argv[at + 1 :]])  # the options given before its name come first
    try:
        args = parse_args(argv)
    except CommandError as exc:  # refused by argparse; before parsing, `--json` is a word of the command line
        return _error(argparse.Namespace(json="--json" in argv), str(exc), exc.code)
    # -v and -vv are for dagmem's own loggers: the libraries below it (httpx, mcp, ray, asyncio) stay at
    # WARNING, or their DEBUG lines would drown ours on stderr.
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("dagmem").setLevel([logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)])
    try:
        command = by_name(args.command)
        if command.memory and memory_off():  # before the home is looked at: nothing is created
            raise MemoryOff(f"dagmem {command.name}")
        _check_home(command, args.home)
        return _run(args)
    except CommandError as exc:
        return _error(args, str(exc), exc.code)
    except (WriteFailure, OSError, sqlite3.Error) as exc:
        # The machine, not the user: a full disk (retryable: exit 75) or a file that cannot be written
        # (permanent: exit 1), as `dagmem write` reports them per session.
        failure = classify(exc)
        if failure.code in _DAMAGE:
            return _error(args, str(exc), str(failure.code))
        return _error(args, str(exc), str(failure.code), EXIT_RETRY if failure.retryable else EXIT_FAILED)
    except DagmemError as exc:
        return _error(args, str(exc), str(getattr(exc, "code", None) or classify(exc).code))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
