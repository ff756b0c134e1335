"""`dagmem bench coding`: scoring, judge-free. A question is answered by a context when every one of its
keys occurs in it (case-insensitive); each method's hit rate is the share of questions it answers, over a
set, and broken down by project, kind and where the answer was said.

The methods: the prompt's context (`memory`), the session's start with it (`memory+start`), the start
alone, and rank-bm25 at memory's characters, at 12,000 and (with tool calls and output) at 12,000.
After compaction: of the questions whose evidence lies in a compacted session before its boundary, the
share the post-compaction `SessionStart` answers (`after_compaction`, None for the others).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._coding_data import Question, source_of
from ._coding_replay import ProjectRun

__all__ = ["AFTER", "METHODS", "Row", "answered", "breakdown", "compacted_context", "summary"]

METHODS = {
    "memory": "memory (UserPromptSubmit)",
    "memory+start": "memory + SessionStart",
    "start": "SessionStart alone",
    "bm25_same": "rank-bm25, memory's characters",
    "bm25_12000": "rank-bm25, 12,000 chars",
    "bm25_tools_12000": "rank-bm25 with tool calls and output, 12,000 chars",
}
AFTER = "after_compaction"


def answered(context: str, keys: Sequence[str]) -> bool:
    folded = context.casefold()
    return all(key.casefold() in folded for key in keys)


@dataclass(frozen=True)
class Row:
    question: Question
    hits: dict[str, bool]  # METHODS -> answered; AFTER only for a question it applies to
    chars: int  # what the prompt's hook injected


def compacted_context(question: Question, run: ProjectRun, root: Path | None) -> str | None:
    """The post-compaction `SessionStart` context of the session whose compaction came after every
    evidence line of the question; None when its evidence is not all before one session's boundary."""
    places = [run.written.get((source_of(file, root).resolve(), line)) for file, line in question.evidence]
    if not places or any(p is None for p in places):
        return None
    sessions = {p[0] for p in places if p is not None}
    if len(sessions) != 1:
        return None
    last = max(p[1] for p in places if p is not None)
    for boundary, context in run.compactions.get(sessions.pop(), []):
        if last < boundary:
            return context
    return None


def summary(rows: Sequence[Row]) -> dict[str, Any]:
    n = len(rows)
    out: dict[str, Any] = {"questions": n}
    for method in METHODS:
        out[method] = round(sum(r.hits[method] for r in rows) / n, 3) if n else None
    after = [r.hits[AFTER] for r in rows if AFTER in r.hits]
    out[AFTER] = round(sum(after) / len(after), 3) if after else None
    out[f"{AFTER}_questions"] = len(after)
    return out


def breakdown(rows: Sequence[Row], by: str) -> dict[str, dict[str, Any]]:
    """`summary` per value of the questions' `by` (project, kind, where), in sorted order."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(str(getattr(row.question, by)), []).append(row)
    return {value: summary(groups[value]) for value in sorted(groups)}
