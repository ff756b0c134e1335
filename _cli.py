"""The `dagmem` command line. Each command lives with its domain; this module only parses arguments."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]

DEFAULT_HOME = Path(".dagmem")


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
        "demo", parents=[common], help="append, fork and show a small branching conversation"
    )
    demo.add_argument("--session", default="demo", help="session id to use (default: demo)")
    bench = sub.add_parser(
        "bench", parents=[common], help="run a benchmark and print ratios measured side by side"
    )
    bench.add_argument("name", choices=sorted(BENCHMARKS), help="which benchmark")
    bench.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    return parser


# name -> "module:function"; each function takes (args: argparse.Namespace) and returns an exit status.
BENCHMARKS = {
    "store": "dagmem.sim.bench_store:main",
}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=[logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)],
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.command == "demo":
        from .memory.demo import run_demo

        return run_demo(args.home, args.session, as_json=args.json)
    if args.command == "bench":
        import importlib

        module, function = BENCHMARKS[args.name].split(":")
        status: int = getattr(importlib.import_module(module), function)(args)
        return status
    raise AssertionError(args.command)  # argparse refuses unknown commands


if __name__ == "__main__":
    sys.exit(main())
