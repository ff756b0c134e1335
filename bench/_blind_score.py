"""`dagmem bench currency --blind`: how one item is judged, and the figures of many.

Per item (`Scored`): whether a block citing the `first` statement is marked superseded (and whether its
successor cites `second`); how recall's first hit citing either statement and rank-bm25's first raw turn
citing either judge (current / stale / miss, as `bench/_currency.py`'s `first_citing`); whether the
current statement is anywhere in the k hits; and whether `core.md` still cites the stale statement (in a
block that does not also cite the current one).

Supersession is scored as a detector: the updates are the positives, the negatives the negatives. Recall
is the updates whose `first` block is marked superseded, over the updates; precision those updates over
every item whose `first` block is marked (a negative that got superseded counts against it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ._currency import Outcome

__all__ = ["GOALS", "Scored", "figures", "summarise", "supersession"]

GOALS = {"supersession_recall": 0.70, "supersession_precision": 0.95, "stale_first": 0.20, "core_stale": 0.03}


@dataclass(frozen=True)
class Scored:
    id: str
    set: str
    lang: str
    kind: str  # update / negative
    category: str
    filed: bool  # some block cites the `first` statement
    superseded: bool  # a block citing `first` is marked superseded
    by_second: bool  # ... and its successor cites `second`
    memory: Outcome  # recall's first hit citing either statement
    baseline: Outcome  # rank-bm25's first raw turn citing either
    current_in_k: bool  # some hit of the k cites the current statement
    core_stale: bool  # a core block cites the stale statement and not the current one
    core_current: bool  # a core block cites the current statement


def _rate(rows: Sequence[Scored], test: Callable[[Scored], bool]) -> float | None:
    return round(sum(1 for r in rows if test(r)) / len(rows), 4) if rows else None


def supersession(rows: Sequence[Scored]) -> dict[str, Any]:
    """The detector's counts and rates: updates are positives, negatives negatives."""
    updates = [r for r in rows if r.kind == "update"]
    negatives = [r for r in rows if r.kind != "update"]
    tp = sum(r.superseded for r in updates)
    fp = sum(r.superseded for r in negatives)
    return {
        "updates": len(updates),
        "negatives": len(negatives),
        "true_positives": tp,
        "false_positives": fp,
        "recall": round(tp / len(updates), 4) if updates else None,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall_by_second": _rate(updates, lambda r: r.by_second),
        "false_positive_rate": round(fp / len(negatives), 4) if negatives else None,
        "first_unfiled": sum(not r.filed for r in rows),
    }


def figures(rows: Sequence[Scored]) -> dict[str, Any]:
    """Every figure of a group of items (a set, a language, a category)."""
    updates = [r for r in rows if r.kind == "update"]
    return {
        "items": len(rows),
        "current_at_1": _rate(rows, lambda r: r.memory == "current"),
        "stale_first": _rate(rows, lambda r: r.memory == "stale"),
        "miss": _rate(rows, lambda r: r.memory == "miss"),
        "current_in_k": _rate(rows, lambda r: r.current_in_k),
        "baseline_current_at_1": _rate(rows, lambda r: r.baseline == "current"),
        "baseline_stale_first": _rate(rows, lambda r: r.baseline == "stale"),
        "superseded": _rate(rows, lambda r: r.superseded),  # updates: recall; negatives: false positives
        "core_stale_updates": _rate(updates, lambda r: r.core_stale),
        "core_stale_update_count": sum(r.core_stale for r in updates),
        "core_current": _rate(rows, lambda r: r.core_current),
        "supersession": supersession(rows),
    }


def summarise(rows: Sequence[Scored]) -> dict[str, Any]:
    """The figures of all `rows`, then of each set, language, kind and kind/category."""
    out = figures(rows)
    groups: dict[str, Callable[[Scored], str]] = {
        "set": lambda r: r.set,
        "lang": lambda r: r.lang,
        "kind": lambda r: r.kind,
        "category": lambda r: f"{r.kind}/{r.category}",
    }
    for name, key in groups.items():
        out[f"by_{name}"] = {
            g: figures([r for r in rows if key(r) == g]) for g in sorted({key(r) for r in rows})
        }
    return out
