"""The `dagmem` command line: parses arguments, checks `--home`, runs one command and shows its errors.

Each command lives in its own module, imported when it runs (so `dagmem --help` stays fast). A user's
mistake (a `DagmemError`, a bad `--home`, an unreadable file) prints one line and exits 2 (`--json`: an
object `{"error", "code"}` on stdout); anything else is a bug and says so."""

from __future__ import annotations

import argparse
import json
import logging
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from .. import __version__
from ..memory.errors import DagmemError
from ..memory.format import HomePaths
from ..memory.outcomes import ReasonCode, WriteFailure, classify
from ..memory.settings import DEFAULTS, check_seconds
from ..memory.write import DISTILLERS
from ._errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_RETRY, EXIT_USAGE, CommandError

__all__ = ["CommandError", "main"]  # CommandError: re-exported, commands imported it from here

DEFAULT_HOME = Path(".dagmem")

BENCHMARKS = ("runtime", "store", "write", "walk", "tokens", "recall", "sim", "cluster", "cold")


class _Parser(argparse.ArgumentParser):
    """argparse, but its refusals are a user's mistake like any other: one line, not the usage text
    (a JSON object with `--json`), exit 2. Its subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        raise CommandError(f"{self.prog}: {message} (see {self.prog} --help)")


def _parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument("--home", type=Path, default=DEFAULT_HOME, help="the dagmem home (default ./.dagmem)")
    common.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    common.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv for debug)")

    parser = _Parser(prog="dagmem", description="Long-term memory for branching agent sessions.")
    parser.add_argument("--version", action="version", version=f"dagmem {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo", parents=[common], help="append, fork, write and show a branching conversation"
    )
    demo.add_argument("--session", default="demo", help="session id to use (default: demo)")

    write = sub.add_parser(
        "write",
        parents=[common],
        help="write what the sessions of a home owe: full batches, and everything of idle sessions",
    )
    write.add_argument("--session", action="append", help="only this session (repeatable)")
    write.add_argument(
        "--force", action="store_true", help="boundary-write every session: nothing stays owed"
    )
    write.add_argument(
        "--distiller",
        default="extractive",
        choices=DISTILLERS,
        help="how topics are distilled: extractive (offline) or openai (a model server: DAGMEM_LLM_*)",
    )
    write.add_argument(
        "--threshold",
        type=_positive_int,
        default=DEFAULTS.token_threshold,
        help=f"batch size in tokens (default {DEFAULTS.token_threshold})",
    )
    write.add_argument(
        "--idle-after",
        type=_seconds,
        default=DEFAULTS.idle_after,
        help=f"seconds of quiet that end a session (default {DEFAULTS.idle_after:g})",
    )

    sub.add_parser("status", parents=[common], help="the writer's last outcome and what is still owed")

    reorganise = sub.add_parser(
        "reorganise",
        parents=[common],
        help="merge duplicate blocks of the topic files in one transaction",
    )
    reorganise.add_argument(
        "--distiller",
        default="extractive",
        choices=DISTILLERS,
        help="extractive: identical claims only; openai: also the duplicates a model judges so",
    )

    recall = sub.add_parser("recall", parents=[common], help="search memory (branch-aware with --session)")
    recall.add_argument("query", help="what to look for")
    recall.add_argument("--session", help="rank relative to this session's branch (its head by default)")
    recall.add_argument(
        "--tip", help="with --session: the branch tip the reader is on (an id or a unique prefix of one)"
    )
    recall.add_argument("-k", type=_positive_int, default=5, help="how many hits (default 5)")
    recall.add_argument(
        "--siblings",
        choices=["demote", "exclude", "include"],
        default="demote",
        help="blocks only from other branches of the session: below on-branch hits (default), dropped, "
        "or ranked as any other",
    )
    recall.add_argument(
        "--context", action="store_true", help="print one <memory-context> block (core first), to inject"
    )

    sub.add_parser("core", parents=[common], help="print the core facts as plain claims with their dates")

    sub.add_parser(
        "sessions",
        parents=[common],
        help="each session: its nodes, head, tips (with their last turn) and debt",
    )
    show = sub.add_parser("show", parents=[common], help="print one branch of a session as text, root first")
    show.add_argument("session", help="the session id")
    show.add_argument(
        "--tip", help="the branch's last node: an id or any unique prefix of one (default: head)"
    )

    verify = sub.add_parser("verify", parents=[common], help="check a home with the independent oracle")
    verify.add_argument(
        "--strict", action="store_true", help="records owed but not yet due are violations too"
    )
    verify.add_argument(
        "--repair",
        action="store_true",
        help="rebuild the index cache; drop markers whose record was never consumed",
    )

    sub.add_parser(
        "migrate",
        parents=[common],
        help="adopt a home written by a position-cursor system (runtime.json cursors)",
    )

    imp = sub.add_parser(
        "import",
        parents=[common],
        help="import agent transcripts (claude-code, pi, codex, openai) as sessions",
    )
    imp.add_argument("format", choices=["claude-code", "pi", "codex", "openai"], help="the transcript format")
    imp.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="transcript files or directories")
    imp.add_argument("--session", help="import everything into this session id")
    imp.add_argument(
        "--follow", action="store_true", help="keep watching the files and feed new lines to a runtime"
    )
    imp.add_argument("--interval", type=_seconds, default=1.0, help="with --follow: seconds between polls")

    bench = sub.add_parser(
        "bench",
        parents=[common],
        help="measure every figure beside its baseline and goal, side by side in one run",
        description="Run the benchmarks (all of them without NAME) and report each figure beside its "
        "baseline measured in the same run, its goal and whether it is met. --home is not used.",
    )
    bench.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"any of: {', '.join(BENCHMARKS)} (default: all); or locomo --data PATH, on its own",
    )
    bench.add_argument("--quick", action="store_true", help="small sizes, same code paths (under 2 minutes)")
    bench.add_argument(
        "--out",
        type=Path,
        default=Path("bench-out"),
        metavar="DIR",
        help="where bench.json, bench.md and bench.png go (default ./bench-out)",
    )
    bench.add_argument(
        "--data", type=Path, metavar="LOCOMO_JSON", help="locomo: the LoCoMo-format file to evaluate on"
    )
    bench.add_argument(
        "--distiller", default="extractive", choices=DISTILLERS, help="locomo: how memory is distilled"
    )

    view = sub.add_parser(
        "view", parents=[common], help="draw the home's sessions as one self-contained HTML page"
    )
    view.add_argument("--session", action="append", help="only this session (repeatable)")
    view.add_argument(
        "--out",
        type=Path,
        default=Path("dagmem-view.html"),
        help="the page (default ./dagmem-view.html; - for stdout)",
    )
    view.add_argument("--open", action="store_true", help="open the page in a web browser")

    mcp = sub.add_parser(
        "mcp",
        parents=[common],
        help="serve memory to an agent over MCP (stdio): recall, core, status, sessions, append_turn, set_head",
    )
    mcp.add_argument(
        "--threshold",
        type=_positive_int,
        default=DEFAULTS.token_threshold,
        help=f"batch size in tokens (default {DEFAULTS.token_threshold})",
    )
    mcp.add_argument(
        "--idle-after",
        type=_seconds,
        default=DEFAULTS.idle_after,
        help=f"seconds of quiet that end a session (default {DEFAULTS.idle_after:g})",
    )

    clus = sub.add_parser(
        "cluster",
        parents=[common],
        help="homes served by Ray actors (extra 'ray'): where each lives and what it owes",
        description="Ask a running Ray cluster about its dagmem homes. --home is not used.",
    )
    clus.add_argument("action", choices=["status"], help="status: each home, its node, pid, path and debt")
    clus.add_argument(
        "--address", default="auto", help="the Ray cluster (default auto: the one started on this machine)"
    )

    sim = sub.add_parser(
        "sim",
        parents=[common],
        help="drive thousands of branching sessions through the actors in virtual time, then check them",
        description="Simulate branching sessions through the real runtime in deterministic virtual time, "
        "with optional fault injection; check the result with the independent oracle; measure git growth. "
        "--home is not used: the home is a scratch directory, or OUT/home with --real-fs.",
    )
    sim.add_argument(
        "--sessions", type=_positive_int, default=2_000, help="sessions to simulate (default 2000)"
    )
    sim.add_argument("--seed", type=int, default=1, help="the same seed (and version) gives the same trace")
    sim.add_argument(
        "--homes",
        type=_positive_int,
        default=1,
        metavar="H",
        help="deal the sessions round-robin into H homes, each with a runtime of its own; the homes run in "
        "parallel (default 1)",
    )
    sim.add_argument(
        "--workers",
        type=_positive_int,
        metavar="W",
        help="processes that run the homes (default: one per core, at most one per home); the trace "
        "hash does not depend on it",
    )
    sim.add_argument(
        "--faults",
        type=_rate,
        nargs="?",
        const=0.02,
        default=0.0,
        metavar="RATE",
        help="inject faults with this probability per fault-site hit: actor and writer crashes, torn "
        "writes, lock contention, retryable and permanent failures (0.02 without a value; default 0)",
    )
    sim.add_argument(
        "--threshold", type=_positive_int, default=1_500, help="batch size in tokens (default 1500)"
    )
    sim.add_argument(
        "--content",
        type=Path,
        metavar="LOCOMO_JSON",
        help="take turn text from a LoCoMo-format JSON file, read at run time (default: synthetic text)",
    )
    sim.add_argument(
        "--real-fs",
        action="store_true",
        help="keep the sessions on disk too (FileSessionStore); the home is left at OUT/home",
    )
    sim.add_argument("--fsync", action="store_true", help="with --real-fs: fsync every durable write")
    sim.add_argument(
        "--git-sample",
        type=_count,
        default=2,
        metavar="K",
        help="replay the K longest sessions into real git to measure its growth (default 2; 0: none)",
    )
    sim.add_argument(
        "--out",
        type=Path,
        default=Path("sim-out"),
        metavar="DIR",
        help="where report.json and report.png go (trace.jsonl, home/ too) (default ./sim-out)",
    )
    sim.add_argument("--trace", action="store_true", help="also write the event trace to OUT/trace.jsonl")
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:  # NaN fails this too
        raise argparse.ArgumentTypeError(f"a probability from 0 to 1, not {text}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    try:
        return check_seconds("the value", value, zero_ok=False)
    except DagmemError:  # the one check of a number of seconds; argparse names the option
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, not {text}") from None


# Failures that name a damaged or mistaken file for the user to fix: exit 2, like any mistake.
_DAMAGE = frozenset({ReasonCode.INVALID_INPUT, ReasonCode.WORKSPACE_INVALID, ReasonCode.ARCHIVE_CORRUPT})

# Commands that read a home and must never create one; `write` needs its sessions/ too.
_READS_HOME = {"status", "verify", "view", "write", "reorganise", "recall", "core", "sessions", "show"}


def _check_home(command: str, home: Path) -> None:
    if command not in _READS_HOME:
        return
    if home.is_symlink() and not home.exists():
        raise CommandError(f"--home {home}: a broken symbolic link")
    if home.exists() and not home.is_dir():
        raise CommandError(f"--home {home}: not a directory")
    if command == "write" and not HomePaths(home).sessions.is_dir():
        raise CommandError(
            f"--home {home}: no sessions/ directory, so not a dagmem home (nothing was created)"
        )
    if command in ("status", "verify", "view", "reorganise", "recall", "core", "sessions", "show") and (
        not home.is_dir()
    ):
        raise CommandError(f"--home {home}: no such directory")


def _run(args: argparse.Namespace) -> int:
    """Dispatch to the command's module, imported only now (each pulls in what it needs)."""
    command: str = args.command
    if command == "write":
        from ._write import write_command

        return write_command(args)
    if command == "status":
        from ._write import status_command

        return status_command(args)
    if command == "verify":
        from ._verify import command as verify_command

        return verify_command(args)
    if command == "reorganise":
        from ._reorganise import command as reorganise_command

        return reorganise_command(args)
    if command == "demo":
        from ._demo import command as demo_command

        return demo_command(args)
    if command == "migrate":
        from ._migrate import command as migrate_command

        return migrate_command(args)
    if command == "import":
        from ._import import command as import_command

        return import_command(args)
    if command == "mcp":
        from ._mcp import command as mcp_command

        return mcp_command(args)
    if command == "view":
        from ._view import command as view_command

        return view_command(args)
    if command == "cluster":
        from ._cluster import command as cluster_command

        return cluster_command(args)
    if command == "sim":
        from ._sim import command as sim_command

        return sim_command(args)
    if command == "recall":
        from ._recall import recall_command

        return recall_command(args)
    if command == "core":
        from ._recall import core_command

        return core_command(args)
    if command == "sessions":
        from ._sessions import sessions_command

        return sessions_command(args)
    if command == "show":
        from ._sessions import show_command

        return show_command(args)
    from ._bench import command as bench_command

    return bench_command(args)


def _error(args: argparse.Namespace, message: str, code: str, status: int = EXIT_USAGE) -> int:
    message = " ".join(message.split())  # one line, whatever the cause carried
    if getattr(args, "json", False):
        print(json.dumps({"error": message, "code": code}))
    else:
        print(f"error: {message}", file=sys.stderr)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parser().parse_args(argv)
    except CommandError as exc:  # refused by argparse; before parsing, `--json` is a word of the command line
        return _error(argparse.Namespace(json="--json" in argv), str(exc), exc.code)
    # -v and -vv are for dagmem's own loggers: the libraries below it (httpx, mcp, ray, asyncio) stay at
    # WARNING, or their DEBUG lines would drown ours on stderr.
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("dagmem").setLevel([logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)])
    try:
        _check_home(args.command, args.home)
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
