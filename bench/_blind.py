"""`dagmem bench currency --blind [--set dev|unseen|all]`: updates and hard negatives written by people who
never read dagmem's rules (`devsets/currency/`, in English, German, Spanish, Chinese, French and Japanese).

Each item gets a fresh home, appended through the public API: `Runtime.open(home)` with the runtime's
defaults and a `FileSessionStore` on the benchmark's clock (so the turns are dated: each session a day
after the previous one, from 2026-01-01, its turns a second apart; the runtime's `epoch` alone dates
its own files, not the turns), one session per item session (`s1`, `s2`, ...), each turn `rt.append(session, role, content, origin=...)` with the item's origin
(`"tool"` for pasted text in a user-role row), `end_session` after each session, then `flush(force=True)`.
Then, on that home:

- **supersession**: is a block citing the `first` statement marked `**Superseded**` in the topic files
  (all of them, the core's master included)? Precision and recall with the updates as positives and the
  negatives as negatives (`_blind_score`); beside it, how often the successor cites `second`;
- **current@1** and **stale-first**: `rt.recall(question, k=10)`'s first hit citing either statement
  cites the current one / only the stale one (a hit citing both is current; no hit citing either: a miss);
- **stale core**: `rt.core()` still cites the stale statement in a block that does not cite the current
  one (of the updates: for a negative, `second` is a distractor that may well be true);
- each by set (dev and unseen apart), language, kind and kind/category.

The baseline is rank-bm25's `BM25Okapi` over the raw turns of the same home (every role, recall's
analyser), asked the same question in the same run and judged the same way, each turn a hit; a turn
sharing no word with the question is no hit.
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from . import _blind_data as data
from . import _kit as kit
from ._blind_score import GOALS, Scored, summarise
from ._currency import core_blocks, first_citing
from ._currency_data import Truth
from ._labels import Node, filed, read_blocks, superseded, superseded_by

__all__ = ["K", "main", "measure", "results", "score_item"]

K = 10
EPOCH = 1_767_225_600.0  # 2026-01-01 UTC, as bench/_currency.py; each session a day after the previous
QUICK_PER = 1  # --quick: the first item of each set, language and kind


async def _append(item: data.Item, home: Path) -> tuple[dict[tuple[int, int], Node], list[Any], str]:
    """Append `item` to a fresh home through the runtime; returns its nodes by place, the hits of its
    question and the core."""
    from ..actors import Runtime
    from ..memory.store import FakeClock, FileSessionStore

    clock = FakeClock(EPOCH)
    nodes: dict[tuple[int, int], Node] = {}
    # The store gets the clock too: `epoch` alone dates the runtime's own files, not the turns.
    async with Runtime.open(home, epoch=clock, store=FileSessionStore(home, clock=clock)) as rt:
        for s, session in enumerate(item.sessions):
            sid = f"s{s + 1}"
            clock.now = EPOCH + 86_400.0 * s
            for t, turn in enumerate(session):
                node = await rt.append(sid, turn.role, turn.content, origin=turn.origin)
                nodes[(s, t)] = (sid, node)
            await rt.end_session(sid)
        await rt.flush(force=True)
        hits = await rt.recall(item.question, k=K)
        core = await rt.core_async()
    return nodes, list(hits), core


def score_item(
    item: data.Item,
    nodes: dict[tuple[int, int], Node],
    hits: Sequence[Any],
    core: str,
    memory: Path,
) -> Scored:
    """Judge one written item from its home's files, its question's hits and its core."""
    from rank_bm25 import BM25Okapi

    from ..memory.format import anchor_of
    from ..memory.recall import analyse

    first, second = nodes[item.first], nodes[item.second]
    current, stale = nodes[item.current_at], nodes[item.stale_at]
    truth = Truth(frozenset({current}), frozenset({stale}), item.kind)
    blocks = read_blocks(memory, nodes.values())
    cites = [{(e.session, e.node) for e in hit.evidence if e.node is not None} for hit in hits]
    turns = [(nodes[(s, t)], turn.content) for s, session in enumerate(item.sessions)
             for t, turn in enumerate(session)]  # fmt: skip
    query = analyse(item.question)
    bm25 = BM25Okapi([analyse(text) or [""] for _, text in turns])
    scores = bm25.get_scores(query)
    words = set(query)
    ranked = sorted(
        (i for i, (_, text) in enumerate(turns) if words & set(analyse(text))), key=lambda i: -scores[i]
    )
    anchors = {anchor_of(f"{s}/{n}"): (s, n) for s, n in nodes.values()}
    in_core = [cited for _, cited in core_blocks(core, anchors)]
    return Scored(
        id=item.id,
        set=item.set,
        lang=item.lang,
        kind=item.kind,
        category=item.category,
        filed=filed(blocks, {first}),
        superseded=superseded(blocks, {first}),
        by_second=superseded_by(blocks, {first}, {second}),
        memory=first_citing(cites, truth),
        baseline=first_citing([{turns[i][0]} for i in ranked[:K]], truth),
        current_in_k=any(current in cited for cited in cites),
        core_stale=any(stale in cited and current not in cited for cited in in_core),
        core_current=any(current in cited for cited in in_core),
    )


def measure(items: Sequence[data.Item], progress: kit.Progress) -> dict[str, Any]:
    """Write and ask every item, each in a home of its own; the summary, with every item's row."""
    import anyio

    started = time.perf_counter()
    rows: list[Scored] = []
    with tempfile.TemporaryDirectory(prefix="dagmem-bench-blind-") as scratch:
        for number, item in enumerate(items, 1):
            progress(f"currency --blind: item {number}/{len(items)} ({item.id})")
            home = Path(scratch) / re.sub(r"[^A-Za-z0-9_-]", "-", f"{item.set}-{item.id}")
            nodes, hits, core = anyio.run(_append, item, home)
            rows.append(score_item(item, nodes, hits, core, home / "memory"))
    summary = summarise(rows)
    summary["rows"] = [asdict(row) for row in rows]
    summary["wall_s"] = round(time.perf_counter() - started, 1)
    return summary


def results(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's lines: for each set measured (dev and unseen apart), the goals' figures beside
    rank-bm25 where it has one; then each language's."""
    from ._report import result

    lines = []
    for name, row in raw["by_set"].items():
        sup = row["supersession"]
        n = row["items"]
        lines += [
            result(f"currency --blind {name}: supersession recall (updates whose old statement's block is marked "
                   f"superseded, of {sup['updates']})", sup["recall"], "", None,
                   f"value >= {GOALS['supersession_recall']}"),
            result(f"currency --blind {name}: supersession precision ({sup['true_positives']} updates, "
                   f"{sup['false_positives']} of {sup['negatives']} negatives marked)", sup["precision"], "", None,
                   f"value >= {GOALS['supersession_precision']}"),
            result(f"currency --blind {name}: updates superseded by the new statement's block",
                   sup["recall_by_second"], "", None, None),
            result(f"currency --blind {name}: stale-first rate ({n} questions; baseline: rank-bm25 over raw turns)",
                   row["stale_first"], "", row["baseline_stale_first"], f"value <= {GOALS['stale_first']}"),
            result(f"currency --blind {name}: current@1 ({n} questions; baseline: rank-bm25 over raw turns)",
                   row["current_at_1"], "", row["baseline_current_at_1"], None),
            result(f"currency --blind {name}: the current statement anywhere in the first {K} hits",
                   row["current_in_k"], "", None, None),
            result(f"currency --blind {name}: updates whose stale statement core.md still cites "
                   f"({row['core_stale_update_count']} of {sup['updates']})", row["core_stale_updates"], "", None,
                   f"value <= {GOALS['core_stale']}"),
        ]  # fmt: skip
    for lang, row in raw["by_lang"].items():
        sup = row["supersession"]
        lines.append(result(f"currency --blind, {lang}: stale-first ({row['items']} questions; supersession recall "
                            f"{_show(sup['recall'])}, precision {_show(sup['precision'])})", row["stale_first"], "",
                            row["baseline_stale_first"], None))  # fmt: skip
    return lines


def _show(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def print_breakdowns(raw: dict[str, Any]) -> None:
    from ._standalone import number

    console = kit.report_console(140)
    heads = ("items", "sup. recall", "by new", "false pos.", "current@1", "stale-first", "in k", "bm25 current@1",
             "bm25 stale-first", "core stale")  # fmt: skip
    for field, title in (
        ("set", "set"),
        ("lang", "language"),
        ("kind", "kind"),
        ("category", "kind/category"),
    ):
        table = kit.table(f"currency --blind by {title} (supersession recall and by the new statement: of the "
                          "updates; false positives: of the negatives; core stale: of the updates)", title, *heads)  # fmt: skip
        for group, row in raw[f"by_{field}"].items():
            sup = row["supersession"]
            table.add_row(group, str(row["items"]), number(sup["recall"]), number(sup["recall_by_second"]),
                          number(sup["false_positive_rate"]), number(row["current_at_1"]), number(row["stale_first"]),
                          number(row["current_in_k"]), number(row["baseline_current_at_1"]),
                          number(row["baseline_stale_first"]), number(row["core_stale_updates"]))  # fmt: skip
        console.print(table)


def main(args: argparse.Namespace, out: Path) -> int:
    """`dagmem bench currency --blind`: the run, `DIR/bench.json` and `bench.md`, then the report."""
    from ._standalone import emit, progress_printer

    quick = bool(getattr(args, "quick", False))
    which = getattr(args, "set", None) or "dev"
    items = data.load(data.SETS if which == "all" else (which,))
    if quick:
        items = data.quick_pick(items, QUICK_PER)
    raw = measure(items, progress_printer())
    raw["set"] = which
    emit(name="currency-blind", title="dagmem bench currency --blind", lines=results(raw), raw=raw, quick=quick,
         wall=raw["wall_s"], out=out, as_json=bool(getattr(args, "json", False)), breakdowns=print_breakdowns)  # fmt: skip
    return 0
