"""The `dagmem` command line. This module only parses arguments; each command lives with its domain
and is imported when it runs (so `dagmem --help` stays fast)."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]

DEFAULT_HOME = Path(".dagmem")

# command -> "module:function"; the function takes the parsed arguments and returns the exit status.
COMMANDS = {
    "demo": "dagmem.memory.demo:command",
    "write": "dagmem.memory.commands:write_command",
    "status": "dagmem.memory.commands:status_command",
    "verify": "dagmem.sim.verify:command",
    "bench": "dagmem.sim.bench:command",
    "sim": "dagmem.sim.command:command",
}
BENCHMARKS = ("runtime", "store", "write")


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--home", type=Path, default=DEFAULT_HOME, help="the dagmem home (default ./.dagmem)")
    common.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    common.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv for debug)")

    parser = argparse.ArgumentParser(
        prog="dagmem", description="Long-term memory for branching agent sessions."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo", parents=[common], help="append, fork, write and show a branching conversation"
    )
    demo.add_argument("--session", default="demo", help="session id to use (default: demo)")

    write = sub.add_parser(
        "write", parents=[common], help="write what the sessions of a home owe (DESIGN §3)"
    )
    write.add_argument("--session", action="append", help="only this session (repeatable)")
    write.add_argument(
        "--force", action="store_true", help="boundary-write every session: nothing stays owed"
    )
    write.add_argument(
        "--distiller", default="extractive", choices=["extractive"], help="how topics are distilled"
    )
    write.add_argument("--threshold", type=int, default=16_000, help="batch size in tokens (default 16000)")
    write.add_argument("--idle-after", type=float, default=1800.0, help="seconds of quiet that end a session")

    sub.add_parser("status", parents=[common], help="the writer's last outcome and what is still owed")

    verify = sub.add_parser("verify", parents=[common], help="check a home with the independent oracle")
    verify.add_argument(
        "--strict", action="store_true", help="records owed but not yet due are violations too"
    )
    verify.add_argument("--repair", action="store_true", help="drop markers whose record was never consumed")

    bench = sub.add_parser(
        "bench", parents=[common], help="run a benchmark; prints ratios measured side by side"
    )
    bench.add_argument("name", choices=BENCHMARKS, help="which benchmark")
    bench.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")

    sim = sub.add_parser(
        "sim",
        parents=[common],
        help="drive thousands of branching sessions through the actors in virtual time, then check them",
        description="Simulate branching sessions through the real runtime in deterministic virtual time, "
        "with optional fault injection; check the result with the independent oracle; measure git growth. "
        "--home is not used: the home is a scratch directory, or OUT/home with --real-fs.",
    )
    sim.add_argument("--sessions", type=int, default=2_000, help="sessions to simulate (default 2000)")
    sim.add_argument("--seed", type=int, default=1, help="the same seed (and version) gives the same trace")
    sim.add_argument(
        "--faults",
        type=float,
        nargs="?",
        const=0.02,
        default=0.0,
        metavar="RATE",
        help="inject faults with this probability per fault-site hit: actor and writer crashes, torn "
        "writes, lock contention, retryable and permanent failures (0.02 without a value; default 0)",
    )
    sim.add_argument("--threshold", type=int, default=1_500, help="batch size in tokens (default 1500)")
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
        type=int,
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


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=[logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)],
        format="%(levelname)s %(name)s: %(message)s",
    )
    module, function = COMMANDS[args.command].split(":")
    status: int = getattr(importlib.import_module(module), function)(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
