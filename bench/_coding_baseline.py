"""`dagmem bench coding`: the baseline, rank-bm25's `BM25Okapi` over a project's raw turns.

A turn is one transcript line's raw text (`_coding_lines.text_turn`): the person's typed prompts and the
assistant's text blocks of the main and sub-agent files (a sub-agent's task too), and, for the second
baseline, tool calls and their output as well. Each is analysed as recall analyses text (stopwords,
stems, CJK bigrams), as `dagmem bench locomo`'s baseline does, so the difference is what memory adds and
not a tokenizer. A query's context is the matching turns, best first, joined until a character budget,
the last one cut there: the same characters memory injected, or a fixed 12,000.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..memory.recall import analyse
from ._coding_data import Session
from ._coding_lines import parse, text_turn

__all__ = ["SEPARATOR", "Baseline", "budgeted", "project_turns"]

SEPARATOR = "\n\n"


def project_turns(sessions: Iterable[Session], *, tools: bool) -> list[str]:
    """Every raw text turn of the sessions' transcripts and sub-agent files, in file order."""
    out: list[str] = []
    for session in sessions:
        for path in (session.path, *session.subagents):
            out += _turns(path, tools)
    return out


def _turns(path: Path, tools: bool) -> list[str]:
    found = []
    with path.open(encoding="utf-8") as f:
        for raw in f:
            line = parse(raw)
            text = text_turn(line, tools=tools) if line is not None else ""
            if text.strip():
                found.append(text)
    return found


def budgeted(ranked: Sequence[str], budget: int) -> str:
    """`ranked` joined best first until `budget` characters, the last turn cut to fit."""
    out = ""
    for turn in ranked:
        piece = turn if not out else SEPARATOR + turn
        if len(out) + len(piece) >= budget:
            return out + piece[: budget - len(out)]
        out += piece
    return out


class Baseline:
    """BM25 over one project's turns."""

    def __init__(self, turns: Sequence[str]) -> None:
        from rank_bm25 import BM25Okapi  # the `bench` extra: loaded only when a baseline is built

        self.turns = list(turns)
        self._bm25: Any = BM25Okapi([analyse(t) for t in self.turns]) if self.turns else None

    def ranked(self, query: str) -> list[str]:
        """The turns that match `query`, best first (ties in file order)."""
        if self._bm25 is None:
            return []
        scores = self._bm25.get_scores(analyse(query))
        order = sorted(range(len(self.turns)), key=lambda i: (-scores[i], i))
        return [self.turns[i] for i in order if scores[i] > 0]

    def context(self, query: str, budget: int) -> str:
        return budgeted(self.ranked(query), budget)
