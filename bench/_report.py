"""`dagmem bench [NAME ...]`: every figure of the benchmarks in one report, each beside its baseline
measured in the same run, its goal, and whether it is met.

The figures come from the benchmarks themselves (`_runtime`, `_store`, `_write`: their `run`, at their own
sizes or `--quick` ones), from `dagmem sim` run in a child process (its peak RSS is its own and its workers'), and from the
small measurements of `_figures`. A result is `{"name", "value", "unit", "baseline", "ratio", "goal",
"met"}`: `ratio` is value / baseline, `goal` says what is asked (`"ratio <= 1.5"`, `"value >= 1500"`; None
for a figure shown for comparison only) and `met` whether this run meets it (None: no goal, or not
measured). Recall's lines come from `bench/_recall.py` when it exists (its `results(quick, progress)`).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..memory.errors import ExtraMissing
from ..memory.settings import DEFAULTS
from . import _figures as figures
from . import _kit as kit

log = logging.getLogger("dagmem.bench")

__all__ = ["BENCHMARKS", "EXTRAS", "NO_PLOT", "measure", "missing_extra", "plot", "print_results"]

BENCHMARKS = (
    "runtime",
    "store",
    "import",
    "write",
    "walk",
    "tokens",
    "recall",
    "sim",
    "cluster",
    "cold",
    "currency",
    "hooks",
    "forget",
)
NO_PLOT = "dagmem bench: no plot (matplotlib is not installed); pip install 'dagmem[sim]' adds it"

# The benchmarks that cannot run without an optional extra: (the extra, the module it brings). Checked
# before anything runs (`missing_extra`), so a missing one is named in one line, not met halfway through.
EXTRAS: dict[str, tuple[str, str]] = {
    "currency": ("bench", "rank_bm25"),  # its baseline: rank-bm25 over the raw turns
    "locomo": ("bench", "rank_bm25"),
    "cluster": ("ray", "ray"),
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules (blocked)
        return False


def missing_extra(name: str) -> str | None:
    """Why benchmark `name` cannot run here (the extra it needs, and how to add it); None when it can."""
    needed = EXTRAS.get(name)
    if needed is None or _installed(needed[1]):
        return None
    extra, module = needed
    return (
        f"dagmem bench {name} needs the {extra!r} extra ({module} is not installed): "
        f"pip install 'dagmem[{extra}]'"
    )


Result = dict[str, Any]
Say = Callable[[str], None]


def result(
    name: str, value: float | None, unit: str, baseline: float | None, goal: str | None, *, digits: int = 3
) -> Result:
    """One line of the report; `goal` is `"ratio <= X"`, `"ratio >= X"`, `"value <= X"` or `"value >= X"`."""
    ratio = None
    if value is not None and baseline is not None and baseline > 0:
        ratio = float(f"{value / baseline:.4g}")
    met: bool | None = None
    if goal is not None and value is not None:
        what, op, bound = goal.split()
        subject = ratio if what == "ratio" else value
        if subject is not None:
            met = bool(subject <= float(bound)) if op == "<=" else bool(subject >= float(bound))
    return {
        "name": name,
        # Significant digits, not decimals: a sub-microsecond figure keeps its ratio to its baseline.
        "value": None if value is None else float(f"{value:.{max(digits, 4)}g}"),
        "unit": unit,
        "baseline": None if baseline is None else float(f"{baseline:.{max(digits, 4)}g}"),
        "ratio": ratio,
        "goal": goal,
        "met": met,
    }


# -- each benchmark, as results ---------------------------------------------------------------------------


def _runtime(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    from . import _runtime as bench

    raw = bench.run(
        large_live=bench.QUICK_LARGE_LIVE if quick else bench.LARGE_LIVE,
        long_turns=bench.QUICK_LONG_TURNS if quick else bench.LONG_TURNS,
        samples=bench.QUICK_SAMPLES if quick else bench.SAMPLES,
        warmup=bench.QUICK_WARMUP if quick else bench.WARMUP,
        profile_appends=bench.QUICK_PROFILE_APPENDS if quick else bench.PROFILE_APPENDS,
        start_samples=bench.QUICK_START_SAMPLES if quick else bench.START_SAMPLES,
        throughput_sessions=bench.QUICK_THROUGHPUT_SESSIONS if quick else bench.THROUGHPUT_SESSIONS,
        throughput_turns=bench.QUICK_THROUGHPUT_TURNS if quick else bench.THROUGHPUT_TURNS,
        modes=("appends_only",) if quick else bench.MODES,
        scratch=scratch,
        progress=say,
    )
    mode = raw["modes"]["appends_only"]["setups"]
    small = mode["small"]["append_ms"]
    out: list[Result] = []
    goal = f"ratio <= {bench.GOAL_RATIO}"
    for setup, label in (("many", f"{raw['large_live']:,} vs {raw['small_live']} live sessions"),
                         ("long", f"a {raw['long_turns']:,}- vs {raw['short_turns']}-turn session")):  # fmt: skip
        for q in ("p50", "p99"):
            out.append(result(f"append {q}, {label}", mode[setup]["append_ms"][q], "ms", small[q], goal))
    limit = figures.durable_replace(scratch / "durable", 100 if quick else 400)
    for run_ in raw["throughput"].get("runs", []):
        threshold = run_["threshold"]
        out.append(
            result(
                f"writer throughput at threshold {threshold:,} (fsync on; baseline: durable replaces/s here)",
                run_["records_per_s"],
                "turns/s",
                limit["per_s"],
                "value >= 1500" if threshold == DEFAULTS.token_threshold else None,
                digits=1,
            )
        )
    raw["durable_replace"] = limit
    return out, raw


def _store(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    from . import _store as bench

    raw = bench.run(bench.QUICK_TURNS if quick else bench.TURNS, scratch=scratch, progress=say)
    early_turn, late_turn = raw["sharded"]["early"]["turns"], raw["sharded"]["late"]["turns"]
    where = f"turns {late_turn[0]:,}-{late_turn[1]:,} vs {early_turn[0]}-{early_turn[1]}"
    out: list[Result] = []
    for subject, label, goal in (
        ("sharded", "sharded", "ratio <= 1.3"),
        ("flat", "flat history/ control", None),
    ):
        e, late = raw[subject]["early"], raw[subject]["late"]
        out.append(result(f"git bytes per turn, {where} ({label})", late["bytes_per_turn"], "B",
                          e["bytes_per_turn"], goal, digits=1))  # fmt: skip
    # The commit alone: the git commit call of each append, timed around it, in the same windows.
    git_ms = {p: raw["sharded"][p]["commit_ms_median"] for p in ("early", "late")}
    out.append(
        result(
            f"git ms per turn (the commit), {where}", git_ms["late"], "ms", git_ms["early"], "ratio <= 1.3"
        )
    )
    flat = raw["flat"]
    out.append(result(f"git ms per turn (the commit), {where} (flat history/ control)",
                      flat["late"]["commit_ms_median"], "ms", flat["early"]["commit_ms_median"], None))  # fmt: skip
    out.append(
        result(
            f"git ms per turn (the commit), {where.split(' vs', maxsplit=1)[0]}",
            git_ms["late"],
            "ms",
            None,
            "value <= 5",
        )
    )
    return out, raw


def _import(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    """`dagmem import` beside an fsync per node, then a year imported and written (bench/_import.py)."""
    from . import _import as bench

    raw = bench.run(quick, scratch, say)
    lines, year = raw["lines"], raw["year"]
    bulk, each = raw["bulk"], raw["fsync_per_node"]
    at = f"{year['sessions']:,} sessions, {year['nodes']:,} turns"
    probe = raw["file_creation_us"]
    return [
        result(f"import turns/s, a {lines:,}-line Claude Code transcript, the median of {len(raw['rounds']['bulk'])} "
               "rounds (baseline: an fsync per node, the best round)", bulk["turns_per_s"], "turns/s",
               each["turns_per_s"], "value >= 5000", digits=1),
        result("  CPU of that round, user + system (baseline: the baseline's round)", bulk["cpu_s"], "s",
               each["cpu_s"], None, digits=2),
        result("  an empty file's creation in a fresh directory, before the rounds (baseline: before the "
               "baseline's)", probe["before_bulk"], "µs", probe["before_baseline"], None, digits=1),
        result(f"import + write --force of a year ({at})", year["total_s"], "s", None, "value <= 300", digits=1),
        result(f"  of it the import ({year['import']['turns_per_s']:,.0f} turns/s)", year["import_s"], "s", None,
               None, digits=1),
        result(f"  of it the write ({year['records']:,} records)", year["write_s"], "s", None, None, digits=1),
    ], raw  # fmt: skip


def _write(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    from . import _write as bench

    large = bench.QUICK_LARGE if quick else bench.LARGE
    raw = bench.run(
        bench.SMALL,
        large,
        bench.QUICK_REPS if quick else bench.REPS,
        bench.QUICK_COLD_REPS if quick else bench.COLD_REPS,
        bench.QUICK_PROFILE_REPS if quick else bench.PROFILE_REPS,
        scratch=scratch,
        progress=say,
    )
    setups = raw["setups"]
    small = setups["small"]["warm"]["total"]["median"]
    goal = f"ratio <= {bench.GOAL_RATIO}"
    out = [
        result(f"one write, {large:,} vs {bench.SMALL} topic files", setups["large_workspace"]["warm"]["total"]["median"], "ms", small, goal),
        result(f"archive append (one write), a {large:,}- vs {bench.SMALL}-turn archive", setups["long_archive"]["warm"]["total"]["median"], "ms", small, goal),
    ]  # fmt: skip
    say(f"control: staging a copy of a {large:,}-topic workspace")
    copy = figures.workspace_copy(scratch / "copy", large, 3)
    out.append(
        result(
            f"one write with {large:,} topic files vs staging a copy of the workspace (the peer's way)",
            setups["large_workspace"]["warm"]["total"]["median"],
            "ms",
            copy["ms"],
            "ratio <= 1",
        )
    )
    raw["workspace_copy"] = copy
    return out, raw


def _walk(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    small, large = 10, 1_000 if quick else 10_000
    raw = figures.unwritten_walk(small, large)
    walk, scan = raw[f"walk_us_{large}"], raw[f"scan_us_{large}"]
    return [
        result(f"'anything owed?' walk, {large:,}- vs {small}-turn branch", walk, "µs", raw[f"walk_us_{small}"], "ratio <= 1.5"),
        result(f"'anything owed?' walk vs a full-branch scan, {large:,} turns", walk, "µs", scan, "ratio <= 0.01"),
    ], raw  # fmt: skip


def _tokens(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    raw = figures.token_counting(500 if quick else 5_000)
    return [
        result("token counting (cl100k_base), new texts (baseline: tiktoken alone)", raw["tokens_per_s"],
               "tokens/s", raw["tiktoken_tokens_per_s"], "value >= 1000000", digits=0),
    ], raw  # fmt: skip


def _recall(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    """The hook for recall's figures (p50/p95 at 1k/10k/100k blocks): `bench/_recall.py`'s `results`."""
    try:
        module = importlib.import_module(f"{__package__}._recall")
    except ModuleNotFoundError:
        names = [
            f"recall {q}, {n} blocks (bench/_recall.py, issue 8)"
            for n in ("1k", "10k", "100k")
            for q in ("p50", "p95")
        ]
        return [result(name, None, "ms", None, None) for name in names], {"missing": "bench/_recall.py"}
    lines: list[Result] = module.results(quick, say)
    return lines, {"results": lines}


def _sim_run(sessions: int, homes: int, git_sample: int, scratch: Path) -> dict[str, Any]:
    out = scratch / f"sim-{sessions}-{homes}"
    args = [sys.executable, "-m", "dagmem", "sim", "--sessions", str(sessions), "--homes", str(homes)]
    args += ["--json", "--git-sample", str(git_sample), "--out", str(out)]
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(args[2:])} failed: {done.stderr.strip()[-500:]}")
    report: dict[str, Any] = json.loads(done.stdout)
    report["end_to_end_s"] = wall
    report["largest_process_rss_bytes"] = max(
        (home["peak_rss_bytes"] for home in report["homes"]), default=report["peak_rss_bytes"]
    )
    return report


# Sessions per home in the simulator's figures: a home is the shard (DESIGN §11), and its homes run in
# parallel, one worker process per core.
HOME_SESSIONS = 500
QUICK_HOME_SESSIONS = 25


def at(sessions: int, homes: int) -> str:
    return f"{sessions:,} sessions in {homes:,} home{'s' if homes > 1 else ''}"


def _sim(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    small, large = (50, 200) if quick else (1_000, 10_000)
    per_home = QUICK_HOME_SESSIONS if quick else HOME_SESSIONS
    small_homes, large_homes = max(1, small // per_home), max(1, large // per_home)
    say(f"dagmem sim --sessions {small:,} (one home)")
    one = _sim_run(small, 1, 0, scratch)
    say(f"dagmem sim --sessions {small:,} --homes {small_homes}")
    a = _sim_run(small, small_homes, 0, scratch)
    say(f"dagmem sim --sessions {large:,} --homes {large_homes} (run, oracle, git sample of 2)")
    b = _sim_run(large, large_homes, 2, scratch)
    mib = 1 << 20
    out = [
        result(f"simulator turns/s, {at(small, small_homes)} vs {at(small, 1)}", a["turns_per_s"], "turns/s", one["turns_per_s"], "value >= 2000", digits=1),
        result(f"simulator turns/s, {at(large, large_homes)} vs {at(small, small_homes)}", b["turns_per_s"], "turns/s", a["turns_per_s"], "value >= 2000", digits=1),
        result(f"simulator peak RSS (all its processes), {at(large, large_homes)} vs {at(small, small_homes)}", b["peak_rss_bytes"] / mib, "MiB", a["peak_rss_bytes"] / mib, "value <= 400", digits=1),
        result(f"simulator peak RSS of its largest process, {at(large, large_homes)} vs {at(small, 1)}", b["largest_process_rss_bytes"] / mib, "MiB", one["peak_rss_bytes"] / mib, None, digits=1),
        result(f"simulator end to end (run, oracle, git sample), {at(large, large_homes)}", b["end_to_end_s"], "s", a["end_to_end_s"], "value <= 300", digits=1),
    ]  # fmt: skip
    runs = {"one_home": one, "small": a, "large": b}
    for report in runs.values():
        if not report["ok"]:
            out.append(
                result(
                    f"simulator oracle violations, {at(report['sessions'], report['config']['homes'])}",
                    len(report["violations"]),
                    "",
                    None,
                    "value <= 0",
                )
            )
    keep = (
        "sessions",
        "turns",
        "ok",
        "trace_sha256",
        "wall_s",
        "turns_per_s",
        "peak_rss_bytes",
        "largest_process_rss_bytes",
        "end_to_end_s",
        "homes",
    )
    return out, {name: {k: r.get(k) for k in keep} for name, r in runs.items()}


def _cluster(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    """Turns/s through 1, 2 and 4 home actors beside the in-process runtime (bench/_cluster.py)."""
    from . import _cluster as bench

    counts = bench.HOME_COUNTS
    try:
        raw = bench.run(quick, say)
    except ExtraMissing as exc:  # Ray is not installed (RayMissing says how to add it)
        names = [f"cluster turns/s, {n} home actor(s) (baseline: in-process runtime)" for n in counts]
        names += ["append latency through the cluster, p50 (baseline: in-process)"]
        return [result(name, None, "turns/s", None, None) for name in names], {"missing": str(exc)}
    out: list[Result] = []
    for count in counts:
        config = raw["configs"][str(count)]
        remote, local = config["cluster"], config["in_process"]
        out.append(
            result(
                f"cluster turns/s, {count} home actor(s), appends and forced flush (baseline: in-process runtime)",
                remote["turns_per_s"],
                "turns/s",
                local["turns_per_s"],
                None,
                digits=1,
            )
        )
        out.append(
            result(
                f"cluster appends/s, {count} home actor(s), appends alone (baseline: in-process runtime)",
                remote["turns"] / remote["append_s"],
                "turns/s",
                local["turns"] / local["append_s"],
                None,
                digits=1,
            )
        )
    first = raw["configs"][str(counts[0])]
    out.append(result("home actor's first call (make the actor, start its process, open the runtime)",
                      first["cluster"]["first_call_s"], "s", None, None))  # fmt: skip
    out.append(
        result("home actor process, PSS", first["cluster"]["actor_pss_mib"], "MiB", None, None, digits=1)
    )
    for q in ("p50", "p99"):
        remote, local = raw["latency"]["cluster"][f"{q}_ms"], raw["latency"]["in_process"][f"{q}_ms"]
        out.append(
            result(
                f"append latency through the cluster, {q} (baseline: in-process)", remote, "ms", local, None
            )
        )
        out.append(result(f"added latency per append, {q}", remote - local, "ms", None, None))
    pool = raw["pool"]
    n, actors = pool["homes"], pool["actors"]
    verified = pool["verified"]
    memory = pool["memory"]
    lat = pool["latency_ms"]
    out += [
        result(f"homes written and verified (verify --strict), {n:,} homes through {actors} actors", verified["homes"],
               "homes", n, "ratio >= 1", digits=0),
        result(f"  turns lost or consumed twice, {n:,} homes", verified["lost"] + verified["consumed_twice"], "", None,
               "value <= 0", digits=0),
        result(f"memory per open home (actor PSS with {n // actors:,} open, over one)", memory["per_open_home_kib"] / 1024,
               "MiB", None, "value <= 5", digits=2),
        result("memory a closed home keeps in its actor (PSS after closing all, over one open)",
               memory["retained_per_closed_home_kib"] / 1024, "MiB", memory["per_open_home_kib"] / 1024, None, digits=2),
        result("cold home: open it and answer its first append, p50", pool["cold_first_append_ms"]["p50"], "ms", None,
               "value <= 100"),
        result("append latency p50, a home in a pool (baseline: one home per actor)", lat["pool"]["p50"], "ms",
               lat["one_home_per_actor"]["p50"], "ratio <= 1.5"),
        result("append latency p99, a home in a pool (baseline: one home per actor)", lat["pool"]["p99"], "ms",
               lat["one_home_per_actor"]["p99"], None),
    ]  # fmt: skip
    fault = pool.get("fault")
    if fault is not None:
        bad = (
            fault["lost"]
            + fault["consumed_twice"]
            + fault["verify_failures"]
            + pool["served_once"]["served_by_another"]
        )
        out.append(result(f"actors SIGKILLed {fault['kills']}x under {n:,} homes: lost, doubled, unverified or "
                          "doubly served", bad, "", None, "value <= 0", digits=0))  # fmt: skip
    return out, raw


def _cold(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    """A fresh process: `dagmem --version`, `import dagmem` and `dagmem recall --context` beside `python -c
    pass`; `rt.recall` in a non-live session beside one without a session (bench/_cold.py)."""
    from . import _cold as bench

    raw = bench.run(5 if quick else 7)
    base50, base95 = raw["pass_p50_ms"], raw["pass_p95_ms"]
    cold = bench.run_recall(scratch, 1_000 if quick else 100_000, 3 if quick else 7, say)
    session = bench.run_session(scratch, 200 if quick else 1_000, 50 if quick else 200, say)
    raw |= {"recall": cold, "session": session}
    n, turns = cold["blocks"], session["turns"]
    return [
        result(f"fresh `dagmem recall --context` p50, {n:,} blocks (baseline: python -c pass)", cold["recall_p50_ms"],
               "ms", cold["pass_p50_ms"], "value <= 250", digits=1),
        result(f"fresh `dagmem recall --context` p95, {n:,} blocks (baseline: python -c pass)", cold["recall_p95_ms"],
               "ms", cold["pass_p95_ms"], None, digits=1),
        result("fresh `python -c \"import numpy\"` p50, the search's one library (baseline: python -c pass)",
               cold["numpy_p50_ms"], "ms", cold["pass_p50_ms"], None, digits=1),
        result(f"fresh `dagmem recall --context` p50, {n:,} blocks, loaded as before (WordLlama's loader, "
               "every snapshot file checksummed)", cold["recall_before_p50_ms"], "ms", cold["pass_p50_ms"], None,
               digits=1),
        result(f"fresh `dagmem recall --context` CPU time p50, {n:,} blocks (baseline: python -c pass)",
               cold["recall_cpu_p50_ms"], "ms", cold["pass_cpu_p50_ms"], None, digits=1),
        result(f"fresh `dagmem recall --context` CPU time p50, {n:,} blocks, loaded as before (baseline: "
               "python -c pass)", cold["recall_before_cpu_p50_ms"], "ms", cold["pass_cpu_p50_ms"], None, digits=1),
        result(f"rt.recall(q, session_id=S) p50, S not live, {turns:,} turns (baseline: rt.recall(q))",
               session["session_p50_ms"], "ms", session["alone_p50_ms"], "value <= 5"),
        result("rt.recall(q, session_id=S) p50, S's files read on every call as before (baseline: rt.recall(q))",
               session["before_p50_ms"], "ms", session["alone_p50_ms"], None),
        result("fresh `dagmem --version` p50 (baseline: python -c pass)", raw["version_p50_ms"], "ms", base50,
               "value <= 150", digits=1),
        result("fresh `dagmem --version` p95 (baseline: python -c pass)", raw["version_p95_ms"], "ms", base95,
               "value <= 150", digits=1),
        result("fresh `import dagmem` p50 (baseline: python -c pass)", raw["import_p50_ms"], "ms", base50, None,
               digits=1),
        result("fresh `import dagmem` p95 (baseline: python -c pass)", raw["import_p95_ms"], "ms", base95, None,
               digits=1),
    ], raw  # fmt: skip


def _currency(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    """current@1, stale-first, wrong labels and the core's staleness beside rank-bm25 (bench/_currency.py)."""
    from . import _currency as bench

    return bench.results(quick, say)


def _hooks(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    """Each Claude Code hook from a fresh process beside `python -c pass` (bench/_hooks.py)."""
    from . import _hooks as bench

    say("hooks: a remembered session, then each hook as Claude Code runs it")
    raw = bench.run(scratch, runs=3 if quick else 9, turns=40 if quick else 300)
    base50, base95 = raw["pass_p50_ms"], raw["pass_p95_ms"]
    goals = {"SessionStart": "value <= 1000", "UserPromptSubmit": "value <= 1500", "Stop": "value <= 250"}
    out = []
    for event in bench.EVENTS:
        for q, base in (("p50", base50), ("p95", base95)):
            out.append(result(f"fresh `dagmem hook claude-code {event}` {q} (baseline: python -c pass)",
                              raw[f"{event}_{q}_ms"], "ms", base, goals[event] if q == "p50" else None, digits=1))  # fmt: skip
    out.append(result("fresh `python -c \"import numpy\"` p50, a prompt's search's one library (baseline: python -c "
                      "pass)", raw["numpy_p50_ms"], "ms", base50, None, digits=1))  # fmt: skip
    out.append(result("Stop's detached worker: import and write, p50 (the host does not wait for it)",
                      raw["worker_p50_ms"], "ms", None, None, digits=1))  # fmt: skip
    return out, raw


def _forget(quick: bool, say: Say, scratch: Path) -> tuple[list[Result], dict[str, Any]]:
    """Forget one turn of a long session with git on, and the whole session, beside one ordinary write."""
    from . import _forget as bench

    raw = bench.run(bench.QUICK_TURNS if quick else bench.TURNS)
    n, write_s = raw["turns"], raw["write_s"]
    return [
        result("one ordinary write (2 turns, git on)", write_s, "s", None, None),
        result(f"forget one turn of a {n:,}-turn session, git on (baseline: one ordinary write)",
               raw["forget_turn_s"], "s", write_s, None),
        result(f"forget a whole {n:,}-turn session, git on (baseline: one ordinary write)",
               raw["forget_session_s"], "s", write_s, None),
        result("no copy left after both forgets (1 = clean)", float(raw["clean"]), "", None, "value >= 1"),
    ], raw  # fmt: skip


_RUNNERS: dict[str, Callable[[bool, Say, Path], tuple[list[Result], dict[str, Any]]]] = {
    "runtime": _runtime,
    "store": _store,
    "import": _import,
    "write": _write,
    "walk": _walk,
    "tokens": _tokens,
    "recall": _recall,
    "sim": _sim,
    "cluster": _cluster,
    "cold": _cold,
    "currency": _currency,
    "hooks": _hooks,
    "forget": _forget,
}


def measure(
    names: list[str], quick: bool, say: Say, *, step: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Run the named benchmarks (in `BENCHMARKS` order) and return `{"results": [...], ...}`."""
    chosen = [name for name in BENCHMARKS if name in names]
    started = time.perf_counter()
    results: list[Result] = []
    raw: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    errors: dict[str, str] = {}
    for name in chosen:
        if step is not None:
            step(name)
        begun = time.perf_counter()
        try:
            with tempfile.TemporaryDirectory(prefix=f"dagmem-bench-{name}-") as scratch:
                lines, raw[name] = _RUNNERS[name](quick, say, Path(scratch))
        except Exception as exc:  # one benchmark that breaks never costs the others' figures
            log.error("bench %s failed", name, exc_info=True)
            errors[name] = f"{type(exc).__name__}: {exc}"
            lines = []
        seconds[name] = round(time.perf_counter() - begun, 1)
        results.extend(lines)
    judged = [r for r in results if r["met"] is not None]
    return {
        "results": results,
        "quick": quick,
        "benchmarks": chosen,
        "goals": {"judged": len(judged), "met": sum(1 for r in judged if r["met"])},
        "seconds": seconds,
        "errors": errors,  # benchmark -> why it has no figures
        "wall_seconds": round(time.perf_counter() - started, 1),
        "raw": raw,
    }


# -- output -----------------------------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:,.3g}" if abs(value) < 1 else f"{value:,.2f}"


def _title(report: dict[str, Any]) -> str:
    # A benchmark run on its own (`dagmem bench coding`) names itself; the full report is "dagmem bench".
    return str(report.get("title") or "dagmem bench") + (" --quick" if report["quick"] else "")


def print_results(report: dict[str, Any]) -> None:
    console = kit.report_console(140)
    table = kit.table(_title(report), "figure", "value", "baseline",
                      "ratio", "goal", "met")  # fmt: skip
    for r in report["results"]:
        met = {True: "[green]yes[/green]", False: "[red]NO[/red]", None: ""}[r["met"]]
        unit = f" {r['unit']}" if r["unit"] else ""
        value = "not measured" if r["value"] is None else _fmt(r["value"]) + unit
        table.add_row(r["name"], value, _fmt(r["baseline"]), _fmt(r["ratio"]), r["goal"] or "", met)
    console.print(table)
    goals = report["goals"]
    console.print(f"{goals['met']} of {goals['judged']} goals met; {report['wall_seconds']:.0f} s")
    for name, error in report["errors"].items():
        console.print(f"[red]bench {name} failed[/red] (no figures): {error}", markup=True, highlight=False)


def markdown(report: dict[str, Any]) -> str:
    """The results as a Markdown table (`DIR/bench.md`): what the README's figures are pasted from."""
    lines = [
        "| figure | value | baseline | ratio | goal | met |",
        "|---|---|---|---|---|---|",
    ]
    for r in report["results"]:
        unit = f" {r['unit']}" if r["unit"] else ""
        value = "not measured" if r["value"] is None else _fmt(r["value"]) + unit
        met = {True: "yes", False: "**no**", None: ""}[r["met"]]
        cells = [r["name"], value, _fmt(r["baseline"]), _fmt(r["ratio"]), r["goal"] or "", met]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    goals = report["goals"]
    lines.append("")
    lines.append(f"{goals['met']} of {goals['judged']} goals met; {report['wall_seconds']:.0f} s.")
    lines.extend(f"\nbench {name} failed (no figures): {error}" for name, error in report["errors"].items())
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    """Each judged figure as its distance to its goal (the bound = 1): under 1 is met."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []
    for r in report["results"]:
        if r["goal"] is None or r["value"] is None:
            continue
        what, op, bound = r["goal"].split()
        subject = r["ratio"] if what == "ratio" else r["value"]
        if subject is None or float(bound) == 0:
            continue
        score = subject / float(bound) if op == "<=" else (float(bound) / subject if subject else math.inf)
        rows.append((r["name"], score, r["met"]))
    fig, ax = plt.subplots(figsize=(11, 0.42 * len(rows) + 1.5))
    names = [name for name, _, _ in rows][::-1]
    scores = [min(score, 10.0) for _, score, _ in rows][::-1]
    colours = ["#2a9d8f" if met else "#e76f51" for _, _, met in rows][::-1]
    ax.barh(names, scores, color=colours)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xlabel("measured / goal (1 = the goal's bound; left of it is met; capped at 10)")
    ax.set_title(_title(report))
    ax.tick_params(axis="y", labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
