"""`dagmem bench [NAME ...] [--quick] [--json] [--out DIR]`: every figure beside its baseline and its goal.

No NAME runs them all. The results go to `DIR/bench.json` and `DIR/bench.md` (a Markdown table) (and a plot, `DIR/bench.png`, when matplotlib
is installed; without it one line on stderr says how to get it), then to the terminal as a table, or with
`--json` as one object whose `results` is a list of `{"name", "value", "unit", "baseline", "ratio",
"goal", "met"}`, and `skipped` names each benchmark left out for an extra that is not installed (a
benchmark named on the command line whose extra is missing is refused in one line, exit 2, before anything
runs). A progress bar runs on stderr (a terminal only, not with `--json`). Exit status 0 whatever
the figures (a report, not a test); 1 when a benchmark broke: the others still ran, and `errors` says why.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..bench import report
from ..sim import report as sim_report

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    from ._errors import CommandError

    if "locomo" in args.names:  # an evaluation on a data file, not a figure of the report: on its own
        if list(args.names) != ["locomo"]:
            raise CommandError("dagmem bench locomo runs on its own: dagmem bench locomo --data PATH")
        missing = report.missing_extra("locomo")
        if missing is not None:
            raise CommandError(missing, code="EXTRA_MISSING")
        from ..bench import locomo as _locomo

        return _locomo.main(args)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ._console import console as human_console

    names: list[str] = list(args.names) or list(report.BENCHMARKS)
    unknown = [name for name in names if name not in report.BENCHMARKS]
    if unknown:
        raise CommandError(f"no benchmark {unknown[0]!r}: choose among {', '.join(report.BENCHMARKS)}")
    chosen = [name for name in report.BENCHMARKS if name in names]
    # A benchmark whose extra is missing: named, it is a mistake (one line, exit 2, nothing run); in a
    # run of them all, it is left out, saying why (in `skipped`, and one line on stderr).
    skipped = {name: why for name in chosen if (why := report.missing_extra(name)) is not None}
    if skipped and args.names:
        raise CommandError(next(iter(skipped.values())), code="EXTRA_MISSING")
    for why in skipped.values():
        print(f"{why}; left out", file=sys.stderr)
    chosen = [name for name in chosen if name not in skipped]
    from ._paths import out_directory

    out = out_directory(Path(args.out))
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("[dim]{task.fields[note]}"),
        console=human_console(stderr=True),
        disable=args.json or not sys.stderr.isatty(),
        transient=False,
    )
    task = progress.add_task("dagmem bench", total=len(chosen), note="")
    done: list[str] = []

    def step(name: str) -> None:
        if done:
            progress.advance(task)
        done.append(name)
        progress.update(task, description=f"bench {name}", note="")

    def say(message: str) -> None:
        progress.update(task, note=message[:70])

    with progress:
        result: dict[str, Any] = report.measure(chosen, bool(args.quick), say, step=step)
        result["skipped"] = skipped  # benchmark -> the extra it needs, not installed here
        progress.update(task, completed=len(chosen), description="dagmem bench", note="done")
    json_path, plot_path = out / "bench.json", out / "bench.png"
    result["json_path"] = str(json_path)
    result["markdown_path"] = str(out / "bench.md")
    result["plot_path"] = str(plot_path) if sim_report.can_plot() else None
    json_path.write_text(
        json.dumps(result, indent=1) + "\n", encoding="utf-8"
    )  # first: a plot cannot lose it
    (out / "bench.md").write_text(report.markdown(result), encoding="utf-8")
    if args.json:
        print(json.dumps(result))
    else:
        report.print_results(result)
    if sim_report.can_plot():
        report.plot(result, plot_path)
    else:
        plot_path.unlink(missing_ok=True)  # an earlier run's plot is not this run's
        print(report.NO_PLOT, file=sys.stderr)
    return 1 if result["errors"] else 0
