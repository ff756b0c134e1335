"""`dagmem bench [NAME ...]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    from ...bench import report as bench_report  # its table of names: only for this command's parser
    from ...memory.write import DISTILLERS

    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"any of: {', '.join(bench_report.BENCHMARKS)} (default: all); or, on its own, locomo --data "
        "PATH or coding [--data DIR] [--set SET]",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, same code paths (under 2 minutes)")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("bench-out"),
        metavar="DIR",
        help="where bench.json, bench.md and bench.png go (coding: and coding-contexts.jsonl; default "
        "./bench-out)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        metavar="PATH",
        help="locomo: the LoCoMo-format file to evaluate on; coding: the Claude Code transcripts folder "
        "(default $DAGMEM_TRANSCRIPTS, else shared/data/transcripts beside the checkout)",
    )
    parser.add_argument(
        "--set",
        default="dev",
        choices=("dev", "unseen", "all"),
        help="coding: the questions asked (all: dev and unseen, reported apart)",
    )
    parser.add_argument(
        "--distiller", default="extractive", choices=DISTILLERS, help="locomo: how memory is distilled"
    )


def _run(args: argparse.Namespace) -> int:
    if "coding" in args.names:  # like locomo: an evaluation on data, not a figure of the full run
        from .._errors import CommandError

        if list(args.names) != ["coding"]:
            raise CommandError("dagmem bench coding runs on its own: dagmem bench coding [--data DIR]")
        from ...bench import coding
        from .._paths import out_directory

        return coding.main(args, out_directory(Path(args.out)))
    from .._bench import command

    return command(args)


COMMAND = Command(
    name="bench",
    help="measure every figure beside its baseline and goal, side by side in one run",
    description="Run the benchmarks (all of them without NAME) and report each figure beside its "
    "baseline measured in the same run, its goal and whether it is met. --home is not used.",
    add_arguments=_arguments,
    run=_run,
)
