"""The output of a benchmark run on its own (`dagmem bench currency --blind`, `dagmem bench beam`): the
report's shape (`{"results": [{name, value, unit, baseline, ratio, goal, met}, ...], "raw": {...}}`, as the
full run's), written to `DIR/bench.json`, `DIR/bench.md` (and `DIR/bench.png` when matplotlib is there), then printed as a table with the benchmark's
own breakdowns after it, or with `--json` as one object on stdout.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import _kit as kit

__all__ = ["emit", "number", "progress_printer"]


def progress_printer() -> kit.Progress:
    """Progress lines on stderr, each after the seconds since this call."""
    from .._console import console

    err = console(stderr=True)
    started = time.perf_counter()

    def progress(message: str) -> None:
        err.print(f"[dim]{time.perf_counter() - started:6.1f} s  {message}[/dim]", highlight=False)

    return progress


def emit(
    *,
    name: str,
    title: str,
    lines: list[dict[str, Any]],
    raw: dict[str, Any],
    quick: bool,
    wall: float,
    out: Path,
    as_json: bool,
    breakdowns: Callable[[dict[str, Any]], None],
) -> dict[str, Any]:
    """Write and print the report of one benchmark (`breakdowns(raw)` prints its own tables); returns it."""
    from ..sim import report as sim_report
    from ._report import NO_PLOT, markdown, plot

    judged = [r for r in lines if r["met"] is not None]
    report: dict[str, Any] = {
        "title": title,
        "results": lines,
        "quick": quick,
        "benchmarks": [name],
        "goals": {"judged": len(judged), "met": sum(1 for r in judged if r["met"])},
        "seconds": {name: wall},
        "errors": {},
        "wall_seconds": wall,
        "raw": {name: raw},
        "json_path": str(out / "bench.json"),
        "markdown_path": str(out / "bench.md"),
        "plot_path": str(out / "bench.png") if sim_report.can_plot() else None,
    }
    (out / "bench.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "bench.md").write_text(f"# {title}\n\n" + markdown(report), encoding="utf-8")
    if sim_report.can_plot():
        plot(report, out / "bench.png")
    else:
        (out / "bench.png").unlink(missing_ok=True)  # an earlier run's plot is not this run's
        print(NO_PLOT, file=sys.stderr)
    if as_json:
        print(json.dumps(report, ensure_ascii=False))
        return report
    console = kit.report_console(140)
    table = kit.table(
        title + (" --quick" if quick else ""), "figure", "value", "baseline", "ratio", "goal", "met"
    )
    for r in lines:
        met = {True: "[green]yes[/green]", False: "[red]NO[/red]", None: ""}[r["met"]]
        table.add_row(
            r["name"], number(r["value"]), number(r["baseline"]), number(r["ratio"]), r["goal"] or "", met
        )
    console.print(table)
    breakdowns(raw)
    console.print(f"{report['goals']['met']} of {report['goals']['judged']} goals met; {wall:.0f} s")
    return report


def number(value: float | None, digits: int = 3) -> str:
    """A rate to `digits` decimals, a count (a whole number from 2 up) with thousands separators."""
    if value is None:
        return "—"
    return f"{value:,.0f}" if value == int(value) and abs(value) >= 2 else f"{value:.{digits}f}"
