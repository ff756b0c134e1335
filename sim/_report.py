"""What `dagmem sim` shows: one JSON object, a summary table, and a plot (PNG).

The JSON holds at least `seed`, `sessions`, `turns`, `records`, `violations`, `trace_sha256`, `wall_s`,
`turns_per_s`, `peak_rss_bytes`, `faults_injected` and `git`, plus the command that replays the run. The
plot has four panels: git loose bytes per turn against session length (and per turn after `git gc`),
node files written per turn against session length, and the writer's transaction latency, as a histogram
and along the run (a write that grew with the workspace would show as a rising line). The plot needs
matplotlib, the optional extra `sim`; the JSON and the table do not.
"""

from __future__ import annotations

import math
from pathlib import Path
from statistics import fmean, median
from typing import Any

from .._version import __version__
from ._gitgrowth import GOAL_RATIO, SessionGrowth, file_rewrites
from ._runner import SimResult

__all__ = ["NO_PLOT", "build", "can_plot", "plot", "print_summary"]

# matplotlib is the optional extra `sim`: without it the run, its JSON and its table are all there.
NO_PLOT = "dagmem sim: no plot (matplotlib is not installed); pip install 'dagmem[sim]' adds it"


def _percentile(ordered: list[float], q: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _latency(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    ms = {f"p{round(q * 100)}": round(_percentile(ordered, q) * 1e3, 2) for q in (0.5, 0.9, 0.99)}
    return {"count": len(values), **ms, "max": round(ordered[-1] * 1e3, 2) if ordered else 0.0}


def build(
    result: SimResult,
    growth: list[SessionGrowth],
    *,
    wall_s: float,
    git_s: float,
    replay: str,
    paths: dict[str, str | None],
) -> dict[str, Any]:
    """The run as one JSON-ready object."""
    config = result.config
    turns = result.events.get("turn", 0)
    files = file_rewrites(result.file_counts, result.batch_sizes)
    files.pop("points")
    summaries = [g.summary() for g in growth]
    ratios = [s["last_shard_over_first"] for s in summaries if s["last_shard_over_first"] is not None]
    return {
        "seed": config.seed,
        "sessions": config.sessions,
        "turns": turns,
        "records": result.oracle.records,
        "violations": [{"kind": v.kind, "subject": v.subject, "detail": v.detail} for v in result.violations],
        "ok": not result.violations,
        "trace_sha256": result.trace_sha256,
        "wall_s": round(wall_s, 2),
        "turns_per_s": round(turns / result.run_s, 1) if result.run_s else None,
        "peak_rss_bytes": result.peak_rss_bytes,
        "faults_injected": {**result.faults_injected, "total": sum(result.faults_injected.values())},
        "git": {
            "sample": summaries,
            "goal": f"loose bytes per turn of the last full shard within {GOAL_RATIO:g}x of the first",
            "flat": all(r <= GOAL_RATIO for r in ratios) if ratios else None,
            "node_files": files,
            "seconds": round(git_s, 1),
        },
        "replay": replay,
        "version": __version__,
        "config": {
            "faults": config.faults,
            "threshold": config.threshold,
            "real_fs": config.real_fs,
            "fsync": config.fsync,
            "content": None if config.content is None else str(config.content),
            "git_sample": config.git_sample,
            "homes": config.homes,
            "idle_after": config.params.idle_after,
        },
        "sessions_by_kind": result.sessions_by_kind,
        "virtual_s": round(result.virtual_s, 1),
        "run_s": round(result.run_s, 2),
        "oracle_s": round(result.oracle_s, 2),
        "oracle": result.oracle.as_json(),
        "events": result.events,
        "trace_events": result.trace_events,
        "writes": result.writes,
        "write_latency_ms": _latency(result.write_latency_s),
        "batch_records_mean": round(fmean(result.batch_sizes), 2) if result.batch_sizes else None,
        "supervision": result.supervision,
        "host_retries": result.host_retries,
        "faults_by_site": result.faults_by_site,
        "workspace_id": result.workspace_id,
        "home": None if result.home is None else str(result.home),
        # Several homes: each one's own figures (its trace hash, its process's peak memory).
        "homes": [home.summary() for home in result.homes],
        **paths,
    }


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} GiB"


def print_summary(report: dict[str, Any]) -> None:
    from rich.table import Table

    from .._console import console as human_console

    console = human_console()
    table = Table(title=f"dagmem sim — seed {report['seed']}", show_header=False)
    table.add_column("figure", no_wrap=True)
    table.add_column("value", overflow="fold")
    kinds = ", ".join(f"{k} {v:,}" for k, v in report["sessions_by_kind"].items())
    table.add_row("sessions", f"{report['sessions']:,} ({kinds})")
    oracle = report["oracle"]
    # `records` counts the record nodes there are now; the txlog also holds records rewound after their
    # write, so the written count may be the larger one.
    table.add_row(
        "turns appended / records now (not rewound)", f"{report['turns']:,} / {report['records']:,}"
    )
    table.add_row(
        "records written (txlog) / cited",
        f"{oracle['consumed']:,} (incl. {oracle['consumed_rewound']:,} rewound since) / {oracle['cited']:,}",
    )
    writes = report["writes"]
    failed = sum(v for k, v in writes.items() if k != "ok")
    table.add_row("transactions ok / failed", f"{writes.get('ok', 0):,} / {failed:,}")
    table.add_row("records per batch (mean)", f"{report['batch_records_mean'] or 0:.1f}")
    faults = report["faults_injected"]
    detail = ", ".join(f"{k} {v}" for k, v in faults.items() if k != "total")
    table.add_row("faults injected", f"{faults['total']:,}" + (f" ({detail})" if detail else ""))
    sup = report["supervision"]
    table.add_row("actor crashes / restarts", f"{sup.get('crashed', 0):,} / {sup.get('restarting', 0):,}")
    table.add_row("virtual time", f"{report['virtual_s'] / 3600:,.1f} h")
    if report["homes"]:  # the homes ran their oracles inside the parallel phase
        table.add_row(
            "wall time (homes, oracles included / git)",
            f"{report['wall_s']:.1f} s ({report['run_s']:.1f} / {report['git']['seconds']:.1f}); "
            f"oracle {report['oracle_s']:.1f} s summed over the homes",
        )
    else:
        table.add_row(
            "wall time (run / oracle / git)",
            f"{report['wall_s']:.1f} s ({report['run_s']:.1f} / "
            f"{report['oracle_s']:.1f} / {report['git']['seconds']:.1f})",
        )
    table.add_row("turns per second", f"{report['turns_per_s']:,.0f}")
    if report["homes"]:
        workers = len({home["pid"] for home in report["homes"]})
        largest = max(home["peak_rss_bytes"] for home in report["homes"])
        table.add_row("homes / worker processes", f"{len(report['homes']):,} / {workers}")
        table.add_row(
            "peak memory (RSS, all processes)",
            f"{_bytes(report['peak_rss_bytes'])} (largest worker {_bytes(largest)})",
        )
    else:
        table.add_row("peak memory (RSS)", _bytes(report["peak_rss_bytes"]))
    latency = report["write_latency_ms"]
    table.add_row(
        "write latency p50 / p99 / max", f"{latency['p50']} / {latency['p99']} / {latency['max']} ms"
    )
    files = report["git"]["node_files"]
    table.add_row(
        "node files written per turn",
        f"{files['per_turn']:.2f} (most in one rewrite {files['most_in_one_rewrite']}, "
        f"largest batch {files['largest_batch']})",
    )
    for sample in report["git"]["sample"]:
        shards = sample["loose_bytes_per_turn_by_shard"]
        ratio = sample["last_shard_over_first"]
        growth = f"{_bytes(sample['loose_bytes_per_turn'])}/turn"
        if shards:
            growth += f"; by shard {' → '.join(_bytes(x) for x in shards)}"
        if ratio is not None:
            growth += f" (×{ratio})"
        table.add_row(f"git {sample['session']} ({sample['turns']:,} turns), loose", growth)
        if sample["packed_bytes_per_turn"] is not None:
            table.add_row("  after git gc", f"{_bytes(sample['packed_bytes_per_turn'])}/turn")
    violations = report["violations"]
    table.add_row(
        "oracle violations", "[green]0[/green]" if not violations else f"[red]{len(violations)}[/red]"
    )
    table.add_row("trace sha256", report["trace_sha256"])
    console.print(table)
    if violations:
        console.print(f"[red]seed {report['seed']}: {len(violations)} violation(s)[/red]")
        for v in violations[:20]:
            console.print(f"  {v['kind']}: {v['subject']}" + (f" ({v['detail']})" if v["detail"] else ""))
        if len(violations) > 20:
            console.print(f"  … and {len(violations) - 20} more (see the JSON report)")
    console.print(f"replay: {report['replay']}")
    for key in ("report_path", "plot_path", "trace_path"):
        if report.get(key):
            console.print(f"{key.replace('_path', '')}: {report[key]}")
    if report.get("home"):
        console.print(f"home: {report['home']}")


def _moving_mean(values: list[int], width: int) -> list[float]:
    out: list[float] = []
    total = 0.0
    for i, value in enumerate(values):
        total += value
        if i >= width:
            total -= values[i - width]
        out.append(total / min(i + 1, width))
    return out


def can_plot() -> bool:
    """Whether matplotlib can be imported here."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def plot(result: SimResult, growth: list[SessionGrowth], path: Path) -> None:
    """Four panels in one PNG (matplotlib, headless)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    def plain_log(axis: Any) -> None:
        """A log axis labelled in plain numbers at 1, 2, 5 × 10^k (matplotlib's default crowds them)."""
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))
        axis.set_minor_formatter(NullFormatter())

    fig, axes = plt.subplots(2, 2, figsize=(13, 9), constrained_layout=True)
    fig.suptitle(
        f"dagmem sim — seed {result.config.seed}, {result.config.sessions:,} sessions, "
        f"{result.events.get('turn', 0):,} turns, faults {result.config.faults:g}"
    )

    ax = axes[0][0]
    for g in growth:
        turns = list(range(1, len(g.per_turn) + 1))
        (line,) = ax.plot(turns, _moving_mean(g.per_turn, 32), label=f"{g.session} loose (mean of 32 turns)")
        ax.scatter(turns, g.per_turn, s=2, alpha=0.15, color=line.get_color())
        marginal = [
            ((ta + tb) / 2, (b - a) / (tb - ta))
            for (ta, a), (tb, b) in zip(g.packed, g.packed[1:], strict=False)
        ]
        if marginal:
            xs, ys = zip(*marginal, strict=True)
            ax.plot(xs, ys, "o--", color=line.get_color(), label=f"{g.session} after git gc")
    ax.set_yscale("log")
    ax.set_xlabel("session length (turns)")
    ax.set_ylabel("git bytes added per turn")
    ax.set_title("git growth per turn (real git, sampled sessions)")
    if growth:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no git sample (--git-sample 0)", ha="center", transform=ax.transAxes)

    ax = axes[0][1]
    points = file_rewrites(result.file_counts, result.batch_sizes)["points"]
    if points:
        xs, ys = zip(*points, strict=True)
        ax.scatter(xs, ys, s=4, alpha=0.3, label="one session")
        buckets: dict[int, list[float]] = {}
        for x, y in points:
            buckets.setdefault(1 << (x.bit_length() - 1), []).append(y)
        lows = sorted(buckets)
        ax.plot([b * 1.4 for b in lows], [fmean(buckets[b]) for b in lows], "o-", color="black", label="mean")
        ax.set_xscale("log")
        ax.legend(fontsize=8)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("session length (turns)")
    ax.set_ylabel("node files written per turn")
    ax.set_title("node files written per turn (append + markers + rewinds)")

    latency_ms = [s * 1e3 for s in result.write_latency_s]
    ax = axes[1][0]
    if latency_ms:
        low, high = max(min(latency_ms), 0.01), max(latency_ms)
        bins = [low * (high / low) ** (i / 60) for i in range(61)] if high > low else 20
        ax.hist(latency_ms, bins=bins)
        ax.set_xscale("log")
        plain_log(ax.xaxis)
        ordered = sorted(latency_ms)
        for q, style in ((0.5, "--"), (0.99, ":")):
            value = _percentile(ordered, q)
            ax.axvline(value, color="black", linestyle=style, label=f"p{round(q * 100)} {value:.1f} ms")
        ax.legend(fontsize=8)
    ax.set_xlabel("write latency (ms, wall clock)")
    ax.set_ylabel("transactions")
    ax.set_title("writer transaction latency (archive → distil → install)")

    ax = axes[1][1]
    if latency_ms:
        ax.scatter(range(len(latency_ms)), latency_ms, s=2, alpha=0.2)
        width = max(1, len(latency_ms) // 50)
        blocks = [
            (i + width / 2, median(latency_ms[i : i + width])) for i in range(0, len(latency_ms), width)
        ]
        bx, by = zip(*blocks, strict=True)
        ax.plot(bx, by, color="black", label=f"median of each {width}")
        ax.set_yscale("log")
        plain_log(ax.yaxis)
        ax.legend(fontsize=8)
    ax.set_xlabel("transaction number (as the workspace grows)")
    ax.set_ylabel("write latency (ms)")
    ax.set_title("write latency along the run")

    fig.savefig(path, dpi=110)
    plt.close(fig)
