"""`dagmem bench coding [--set dev|unseen|all] [--data DIR] [--quick]`: memory for a coding agent, measured
through the real hooks.

Each project's real Claude Code transcripts are replayed through the hooks `dagmem install claude-code`
writes, exactly as Claude Code calls them (`_coding_replay`, `_coding_plan`, `_coding_hooks`); then new
sessions of the project ask the questions of `devsets/coding/` (`_coding_data`), and what the hooks
inject is scored judge-free (`_coding_score`) beside rank-bm25 over the project's raw turns, measured in
the same run (`_coding_baseline`). The home's shape after the replay comes from its files
(`_coding_shape`). Results are the bench report's lines (`{name, value, unit, baseline, ratio, goal,
met}`); the breakdowns by project, kind and where are in `raw.coding`, and every question's injected
contexts in `DIR/coding-contexts.jsonl`, so that a miss can be read.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..memory.format import HomePaths
from . import _kit as kit
from ._coding_baseline import Baseline, project_turns
from ._coding_data import OURS, SETS, Question, load_questions, sessions_of, transcripts_root
from ._coding_git import OFF, ON, run_git
from ._coding_hooks import Timings
from ._coding_replay import ProjectRun, replay_project
from ._coding_score import AFTER, METHODS, Row, answered, breakdown, compacted_context, summary
from ._coding_shape import shape
from ._report import Result, markdown, print_results, result

__all__ = ["BUDGET", "main", "results", "run"]

BUDGET = 12_000  # characters of the fixed-budget baselines
_SHOWN = 20  # problems and log lines kept per project in the report


def _scopes(rows: Sequence[Row]) -> dict[str, list[Row]]:
    """dev and unseen apart (each that was asked), and both together when both were."""
    out = {name: [r for r in rows if r.question.set == name] for name in SETS}
    out = {name: group for name, group in out.items() if group}
    if len(out) > 1:
        out["overall"] = list(rows)
    return out


def _score(
    question: Question, run: ProjectRun, texts: Baseline, tools: Baseline, root: Path | None
) -> tuple[Row, dict[str, Any]]:
    memory = run.answers.get(question.id, "")
    contexts = {
        "memory": memory,
        "memory+start": f"{run.start}\n{memory}",
        "start": run.start,
        "bm25_same": texts.context(question.question, len(memory)),
        "bm25_12000": texts.context(question.question, BUDGET),
        "bm25_tools_12000": tools.context(question.question, BUDGET),
    }
    hits = {method: answered(contexts[method], question.keys) for method in METHODS}
    after = compacted_context(question, run, root)
    if after is not None:
        hits[AFTER] = answered(after, question.keys)
    record = {
        "id": question.id,
        "set": question.set,
        "project": question.project,
        "kind": question.kind,
        "where": question.where,
        "question": question.question,
        "keys": list(question.keys),
        "hit": hits,
        "contexts": {"session_start": run.start, "user_prompt_submit": memory, AFTER: after},
    }
    return Row(question, hits, len(memory)), record


def run(
    root: Path | None, sets: Sequence[str], quick: bool, progress: kit.Progress, scratch: Path | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The figures (`raw.coding` of the report) and one record per question (its contexts, its hits)."""
    questions = load_questions(sets, OURS if quick else None)
    projects: dict[str, list[Question]] = {}
    for question in questions:
        projects.setdefault(question.project, []).append(question)
    timings = Timings()
    rows: list[Row] = []
    records: list[dict[str, Any]] = []
    per_project: dict[str, Any] = {}
    prompt_chars: list[int] = []
    start_chars: list[int] = []
    started = time.perf_counter()
    with kit.scratch("coding", scratch) as folder:
        for number, (name, asked) in enumerate(projects.items(), 1):
            sessions = sessions_of(name, root)
            progress(
                f"project {number}/{len(projects)}: {name}, {len(sessions)} sessions, {len(asked)} questions"
            )
            begun = time.perf_counter()
            played = replay_project(name, sessions, asked, folder, timings=timings, progress=progress)
            texts = Baseline(project_turns(sessions, tools=False))
            tools = Baseline(project_turns(sessions, tools=True))
            for question in asked:
                row, record = _score(question, played, texts, tools, root)
                rows.append(row)
                records.append(record)
            assert played.home is not None
            prompt_chars += [len(played.answers.get(q.id, "")) for q in asked]
            start_chars += [len(c) for c in played.start_contexts]
            per_project[name] = {
                "sessions": played.sessions,
                "lines": played.lines,
                "events": played.events,
                "turns": len(texts.turns),
                "turns_with_tools": len(tools.turns),
                "compactions": sum(len(c) for c in played.compactions.values()),
                "compactions_answered_while_writing": played.compactions_busy,
                "shape": shape(HomePaths(played.home).memory),
                "problems": len(played.problems),
                "problems_first": played.problems[:_SHOWN],
                "log_lines": len(played.log),
                "log_first": played.log[:_SHOWN],
                "seconds": round(time.perf_counter() - begun, 1),
            }
            progress(f"project {number}/{len(projects)}: {name} done in {per_project[name]['seconds']} s")
        begun = time.perf_counter()
        git_timings = Timings()  # apart: the git scenario's prompts are not the questions' own figures
        git = run_git(folder, git_timings, progress)
        git["hooks_ms"] = {event: _quantiles(ms) for event, ms in sorted(git_timings.hooks.items())}
        git["seconds"] = round(time.perf_counter() - begun, 1)
    scored = {
        scope: {
            "summary": summary(group),
            "project": breakdown(group, "project"),
            "kind": breakdown(group, "kind"),
            "where": breakdown(group, "where"),
        }
        for scope, group in _scopes(rows).items()
    }
    return {
        "quick": quick,
        "sets": list(sets),
        "questions": len(rows),
        "scored": scored,
        "chars": {"user_prompt_submit": _quantiles(prompt_chars), "session_start": _quantiles(start_chars)},
        "hooks_ms": {event: _quantiles(ms) for event, ms in sorted(timings.hooks.items())},
        "pass_ms": _quantiles(timings.baseline),
        "worker_wait_ms": _quantiles(timings.worker),
        "shape": _total_shape([p["shape"] for p in per_project.values()]),
        "projects": per_project,
        "compactions": sum(p["compactions"] for p in per_project.values()),
        "compactions_answered_while_writing": sum(
            p["compactions_answered_while_writing"] for p in per_project.values()
        ),
        "git": git,
        "problems": sum(p["problems"] for p in per_project.values()) + len(git["problems"]),
        "log_lines": sum(p["log_lines"] for p in per_project.values()),
        "wall_s": round(time.perf_counter() - started, 1),
    }, records


def _quantiles(values: Sequence[float]) -> dict[str, float | int | None]:
    ordered = sorted(values)
    if not ordered:
        return {"n": 0, "p50": None, "p95": None}
    return {
        "n": len(ordered),
        "p50": round(kit.quantile(ordered, 0.5), 1),
        "p95": round(kit.quantile(ordered, 0.95), 1),
    }


def _total_shape(shapes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    briefs = [s for s in shapes if s["brief_entries"] is not None]
    return {
        "topic_files": sum(s["topic_files"] for s in shapes),
        "blocks": sum(s["blocks"] for s in shapes),
        "narration_only_blocks": sum(s["narration_only_blocks"] for s in shapes),
        "brief_entries": sum(s["brief_entries"] for s in briefs) if briefs else None,
        "brief_entries_citing": sum(s["brief_entries_citing"] for s in briefs) if briefs else None,
    }


# -- the report's lines -----------------------------------------------------------------------------------


def results(coding: dict[str, Any]) -> list[Result]:
    out: list[Result] = []
    for scope, scored in coding["scored"].items():
        s = scored["summary"]
        at = f"{scope}, {s['questions']} questions"
        out += [
            result(f"coding: memory hit rate ({at}; baseline: rank-bm25 at {BUDGET:,} chars)", s["memory"], "",
                   s["bm25_12000"], "ratio >= 1"),
            result(f"coding: memory hit rate minus rank-bm25's at the characters memory injected ({at})",
                   s["memory"] - s["bm25_same"], "", None, "value >= 0.2"),
            result(f"coding: memory + SessionStart hit rate ({at}; baseline: rank-bm25 at {BUDGET:,} chars)",
                   s["memory+start"], "", s["bm25_12000"], None),
            result(f"coding: SessionStart alone hit rate ({at})", s["start"], "", None, "value >= 0.25"),
            result(f"coding: after compaction, the post-compaction SessionStart's hit rate ({scope}, "
                   f"{s[f'{AFTER}_questions']} questions said before a boundary)", s[AFTER], "", None, None),
            result(f"coding: rank-bm25 hit rate at the characters memory injected ({scope})", s["bm25_same"], "",
                   None, None),
            result(f"coding: rank-bm25 hit rate at {BUDGET:,} chars ({scope})", s["bm25_12000"], "", None, None),
            result(f"coding: rank-bm25 over turns with tool calls and output, hit rate at {BUDGET:,} chars "
                   f"({scope})", s["bm25_tools_12000"], "", None, None),
        ]  # fmt: skip
    chars = coding["chars"]
    out += [
        result("coding: injected chars p50, UserPromptSubmit (the questions)", chars["user_prompt_submit"]["p50"],
               "chars", None, "value <= 3000", digits=1),
        result("coding: injected chars p95, UserPromptSubmit (the questions)", chars["user_prompt_submit"]["p95"],
               "chars", None, None, digits=1),
        result("coding: injected chars p50, SessionStart (every one of the run)", chars["session_start"]["p50"],
               "chars", None, None, digits=1),
        result("coding: injected chars p95, SessionStart (every one of the run)", chars["session_start"]["p95"],
               "chars", None, None, digits=1),
    ]  # fmt: skip
    base = coding["pass_ms"]
    for event, ms in coding["hooks_ms"].items():
        for q in ("p50", "p95"):
            goal = "ratio <= 12" if event == "UserPromptSubmit" and q == "p50" else None
            out.append(result(f"coding: {event} hook wall time {q}, {ms['n']} runs (baseline: python -c pass "
                              "interleaved)", ms[q], "ms", base[q], goal, digits=1))  # fmt: skip
    worker = coding["worker_wait_ms"]
    out.append(result(f"coding: wait for the hooks' worker after an event that ends something, p50 ({worker['n']} "
                      "waits)", worker["p50"], "ms", None, None, digits=1))  # fmt: skip
    out.append(result("coding: post-compaction SessionStarts answered while the worker was still writing what "
                      "PreCompact handed over (baseline: compactions)", coding["compactions_answered_while_writing"],
                      "", coding["compactions"], None, digits=0))  # fmt: skip
    out += _git_results(coding["git"])
    form = coding["shape"]
    out += [
        result("coding: topic files after the replay (all projects)", form["topic_files"], "", None, None, digits=0),
        result("coding: topic blocks after the replay (all projects)", form["blocks"], "", None, None, digits=0),
        result("coding: narration-only blocks (every cited record a short 'Let me…'/'Done' assistant turn)",
               form["narration_only_blocks"], "", None, "value <= 0", digits=0),
        result("coding: topics/brief.md entries citing evidence (baseline: its entries)",
               form["brief_entries_citing"], "", form["brief_entries"], "ratio >= 1", digits=0),
        result("coding: hook runs that went wrong (exit status, timeout, an answer not in the documented shape, "
               "a worker that never went idle)", coding["problems"], "", None, None, digits=0),
        result("coding: lines in the homes' hooks/hooks.log", coding["log_lines"], "", None, None, digits=0),
    ]  # fmt: skip
    return out


def _git_results(git: dict[str, Any]) -> list[Result]:
    """The git scenarios' rates, each beside the plain ranking's (the same questions, the same run), and
    the check's cost."""

    def rate(figure: str, method: str) -> float | None:
        value = git[figure][method]["rate"]
        return None if value is None else float(value)

    def n(figure: str) -> int:
        return int(git[figure]["dagmem"]["n"])

    out = [
        result(f"coding git: asked on main before the merge, answering hits labelled with their unmerged branch "
               f"({n('unmerged_labelled')} questions; baseline: the plain ranking)", rate("unmerged_labelled", "dagmem"),
               "", rate("unmerged_labelled", "plain"), "value >= 1"),
        result(f"coding git: asked on main after the merge, answering hits given as the project's, unlabelled "
               f"({n('merged_unlabelled')} questions; baseline: the plain ranking)", rate("merged_unlabelled", "dagmem"),
               "", rate("merged_unlabelled", "plain"), "value >= 1"),
        result(f"coding git: asked from the other worktree, questions answered ({n('shared_answered')} questions; "
               "baseline: a home per worktree)", rate("shared_answered", "dagmem"), "", rate("shared_answered", "split"),
               None),
        result(f"coding git: a file renamed or rewritten since, hits citing it labelled 'the code changed since' "
               f"({n('code_labelled')} files; baseline: the check off)", rate("code_labelled", "dagmem"), "",
               rate("code_labelled", "plain"), "value >= 1"),
    ]  # fmt: skip
    ms = git["hooks_ms"]
    if ON in ms and OFF in ms:
        out.append(result(f"coding git: UserPromptSubmit hook wall time p50 with the code check on, {ms[ON]['n']} runs "
                          "(baseline: the check off, interleaved)", ms[ON]["p50"], "ms", ms[OFF]["p50"], "ratio <= 1.1",
                          digits=1))  # fmt: skip
    return out


# -- output -----------------------------------------------------------------------------------------------

_BREAKDOWN_COLUMNS = (
    "questions",
    "memory",
    "memory+start",
    "start",
    AFTER,
    "bm25_same",
    "bm25_12000",
    "bm25_tools_12000",
)
_HEADS = (
    "n",
    "memory",
    "memory+start",
    "start",
    "after compaction",
    "bm25 same chars",
    "bm25 12k",
    "bm25+tools 12k",
)


def _cell(value: Any, key: str, row: dict[str, Any]) -> str:
    if value is None:
        return "—"
    if key == AFTER:
        return f"{value:.2f} ({row[f'{AFTER}_questions']})"
    return str(value) if key == "questions" else f"{value:.2f}"


def breakdown_rows(coding: dict[str, Any]) -> list[tuple[str, list[tuple[str, list[str]]]]]:
    """(title, [(label, cells)]) for each scope's summary and its breakdowns: what both outputs show."""
    tables = []
    for scope, scored in coding["scored"].items():
        lines = [("all", scored["summary"])]
        for by in ("project", "kind", "where"):
            lines += [(f"{by}: {value}", row) for value, row in scored[by].items()]
        tables.append(
            (
                f"hit rates, {scope}",
                [(label, [_cell(row.get(k), k, row) for k in _BREAKDOWN_COLUMNS]) for label, row in lines],
            )
        )
    return tables


def print_report(report: dict[str, Any]) -> None:
    print_results(report)
    console = kit.report_console(140)
    for title, lines in breakdown_rows(report["raw"]["coding"]):
        table = kit.table(title, "questions", *_HEADS)
        for label, cells in lines:
            table.add_row(label, *cells)
        console.print(table)


def to_markdown(report: dict[str, Any]) -> str:
    parts = [markdown(report)]
    for title, lines in breakdown_rows(report["raw"]["coding"]):
        parts.append(f"\n### {title}\n\n| questions | {' | '.join(_HEADS)} |\n|---|{'---|' * len(_HEADS)}")
        parts += [f"| {label} | {' | '.join(cells)} |" for label, cells in lines]
    return "\n".join(parts) + "\n"


def main(args: argparse.Namespace, out: Path) -> int:
    """`dagmem bench coding`: the run, `DIR/bench.json`, `bench.md`, `coding-contexts.jsonl` (and
    `bench.png` when matplotlib is there), then the report on stdout (one JSON object with `--json`)."""
    from .._console import console
    from ..sim import report as sim_report
    from ._report import NO_PLOT, plot

    quick = bool(getattr(args, "quick", False))
    which = getattr(args, "set", None) or "dev"
    root = None if quick else transcripts_root(getattr(args, "data", None))
    err = console(stderr=True)
    started = time.perf_counter()

    def progress(message: str) -> None:
        err.print(f"[dim]{time.perf_counter() - started:6.1f} s  {message}[/dim]", highlight=False)

    coding, records = run(root, SETS if which == "all" else (which,), quick, progress)
    lines = results(coding)
    judged = [r for r in lines if r["met"] is not None]
    wall = round(time.perf_counter() - started, 1)
    report: dict[str, Any] = {
        "title": "dagmem bench coding",
        "results": lines,
        "quick": quick,
        "benchmarks": ["coding"],
        "goals": {"judged": len(judged), "met": sum(1 for r in judged if r["met"])},
        "seconds": {"coding": wall},
        "errors": {},
        "wall_seconds": wall,
        "raw": {"coding": coding},
        "json_path": str(out / "bench.json"),
        "markdown_path": str(out / "bench.md"),
        "contexts_path": str(out / "coding-contexts.jsonl"),
        "plot_path": str(out / "bench.png") if sim_report.can_plot() else None,
    }
    (out / "bench.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    (out / "bench.md").write_text(to_markdown(report), encoding="utf-8")
    with (out / "coding-contexts.jsonl").open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    if getattr(args, "json", False):
        print(json.dumps(report))
    else:
        print_report(report)
    if sim_report.can_plot():
        plot(report, out / "bench.png")
    else:
        (out / "bench.png").unlink(missing_ok=True)
        print(NO_PLOT, file=sys.stderr)
    return 0
