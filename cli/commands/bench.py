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
        help=f"any of: {', '.join(bench_report.BENCHMARKS)} (default: all); or, on its own, locomo --data PATH, "
        "coding [--data DIR] [--set SET], beam [--data DIR] or currency --blind [--set SET]",
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
        "(default $DAGMEM_TRANSCRIPTS, else shared/data/transcripts beside the checkout); beam: BEAM's chats "
        "(<split>/<n>/chat.json below it; default $DAGMEM_BEAM, else shared/data/beam-dev beside the checkout)",
    )
    parser.add_argument(
        "--blind",
        action="store_true",
        help="currency: the hand-written updates and negatives of devsets/currency/ instead of the generated "
        "conversations",
    )
    parser.add_argument(
        "--set",
        default="dev",
        choices=("dev", "unseen", "all"),
        help="coding, currency --blind: the questions asked (all: dev and unseen, reported apart)",
    )
    parser.add_argument(
        "--distiller", default="extractive", choices=DISTILLERS, help="locomo, beam: how memory is distilled"
    )


def _run(args: argparse.Namespace) -> int:
    from .._errors import CommandError
    from .._paths import out_directory

    names = list(args.names)
    if "coding" in names:  # like locomo: an evaluation on data, not a figure of the full run
        if names != ["coding"]:
            raise CommandError("dagmem bench coding runs on its own: dagmem bench coding [--data DIR]")
        from ...bench import coding

        return coding.main(args, out_directory(Path(args.out)))
    if "beam" in names:  # like locomo: an evaluation on data, not a figure of the full run
        if names != ["beam"]:
            raise CommandError("dagmem bench beam runs on its own: dagmem bench beam [--data DIR]")
        from ...bench import beam

        return beam.main(args, out_directory(Path(args.out)))
    if args.blind:  # the hand-written currency sets: on their own, the generated `currency` unchanged
        if names != ["currency"]:
            raise CommandError(
                "--blind is for currency on its own: dagmem bench currency --blind [--set SET]"
            )
        from ...bench import blind

        return blind.main(args, out_directory(Path(args.out)))
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
