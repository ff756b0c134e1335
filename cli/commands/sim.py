"""`dagmem sim`."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._arguments import count, positive_int, rate
from .._command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sessions", type=positive_int, default=2_000, help="sessions to simulate (default 2000)"
    )
    parser.add_argument(
        "--seed", type=int, default=1, help="the same seed (and version) gives the same trace"
    )
    parser.add_argument(
        "--homes",
        type=positive_int,
        default=1,
        metavar="H",
        help="deal the sessions round-robin into H homes, each with a runtime of its own; the homes run in "
        "parallel (default 1)",
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        metavar="W",
        help="processes that run the homes (default: one per core, at most one per home); the trace "
        "hash does not depend on it",
    )
    parser.add_argument(
        "--faults",
        type=rate,
        nargs="?",
        const=0.02,
        default=0.0,
        metavar="RATE",
        help="inject faults with this probability per fault-site hit: actor and writer crashes, torn "
        "writes, lock contention, retryable and permanent failures (0.02 without a value; default 0)",
    )
    parser.add_argument(
        "--threshold", type=positive_int, default=1_500, help="batch size in tokens (default 1500)"
    )
    parser.add_argument(
        "--content",
        type=Path,
        metavar="LOCOMO_JSON",
        help="take turn text from a LoCoMo-format JSON file, read at run time (default: synthetic text)",
    )
    parser.add_argument(
        "--real-fs",
        action="store_true",
        help="keep the sessions on disk too (FileSessionStore); the home is left at OUT/home",
    )
    parser.add_argument("--fsync", action="store_true", help="with --real-fs: fsync every durable write")
    parser.add_argument(
        "--git-sample",
        type=count,
        default=2,
        metavar="K",
        help="replay the K longest sessions into real git to measure its growth (default 2; 0: none)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("sim-out"),
        metavar="DIR",
        help="where report.json and report.png go (trace.jsonl, home/ too) (default ./sim-out)",
    )
    parser.add_argument("--trace", action="store_true", help="also write the event trace to OUT/trace.jsonl")


def _run(args: argparse.Namespace) -> int:
    from .._sim import command

    return command(args)


COMMAND = Command(
    name="sim",
    help="drive thousands of branching sessions through the actors in virtual time, then check them",
    description="Simulate branching sessions through the real runtime in deterministic virtual time, "
    "with optional fault injection; check the result with the independent oracle; measure git growth. "
    "--home is not used: the home is a scratch directory, or OUT/home with --real-fs.",
    add_arguments=_arguments,
    run=_run,
)
