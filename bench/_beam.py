"""`dagmem bench beam [--data DIR] [--quick]`: evidence recall on BEAM's long chats (500K tokens each),
through memory and against raw-turn BM25, and whether recall puts an update before what it updated.

Each chat (`_beam_data`) is appended with the store's API into a home of its own, as `bench/_locomo.py`
appends LoCoMo: one session per dated stretch of the chat (a batch), each turn at its session's date (a
second apart within it), then written by `write_home(force=True)` with the chosen distiller (the default:
extractive). Each question whose evidence maps to turns goes through `search` asked with `k=25, floor=0`
(recall's ranking for nobody in particular: superseded blocks after current ones) and is counted at a **turn
budget**, as LoCoMo is: the turns the hits cite, in rank order, cut at k turns. all@k: every piece of
evidence within the first k turns; any@k: one. Beside it (the JSON's `hits_all@k`), the same over the
first k hits.

For knowledge_update and contradiction_resolution questions whose evidence comes in two parts (the older
and the newer statement): **stale-first**, the first of the first 10 hits citing either part cites only
the older one (current@1: it cites the newer); and whether a block citing the older statement is marked
`**Superseded**` in the topic files (and by a block citing the newer one).

The baseline is rank-bm25's `BM25Okapi` over the raw turns of the same chat, each indexed as `<date>
<role>: <text>` with recall's analyser, asked in the same run and judged the same way at the same k.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _beam_data as data
from . import _kit as kit
from ._currency import Outcome
from ._labels import read_blocks, superseded, superseded_by

__all__ = ["KS", "Asked", "ask", "main", "run", "summarise", "write_chat"]

KS = (1, 5, 10)
DEPTH = 25  # hits asked for: enough turns for the largest budget
QUICK_CHATS = 2
UPDATES = ("knowledge_update", "contradiction_resolution")


@dataclass(frozen=True)
class Asked:
    """One question, judged for memory and for the baseline."""

    chat: str
    category: str
    form: str
    every: tuple[bool, ...]  # memory, all@k for each of KS (turn budget)
    some: tuple[bool, ...]  # memory, any@k
    hits_every: tuple[bool, ...]  # memory, all evidence within the first k hits
    base_every: tuple[bool, ...]
    base_some: tuple[bool, ...]
    stale: Outcome | None = None  # knowledge_update / contradiction_resolution with an old and a new part
    base_stale: Outcome | None = None
    old_superseded: bool | None = None
    old_superseded_by_new: bool | None = None


def _first(ranked: Sequence[Sequence[str]], old: frozenset[str], new: frozenset[str]) -> Outcome:
    """As `bench/_currency.py`'s `first_citing`, on node ids: the first hit citing either statement cites
    the newer ("current"), only the older ("stale"); none cites either: "miss"."""
    for cited in ranked:
        if new.intersection(cited):
            return "current"
        if old.intersection(cited):
            return "stale"
    return "miss"


def _within(ranked: Sequence[str], groups: Sequence[frozenset[str]], k: int) -> tuple[bool, bool]:
    top = set(ranked[:k])
    found = [bool(group & top) for group in groups]
    return all(found), any(found)


def ask(
    chat: str,
    question: data.Question,
    hits: Sequence[Sequence[str]],
    baseline: Sequence[str],
    labels: tuple[bool, bool] | None,
) -> Asked:
    """Judge one question from its hits (each as the node ids it cites, in recall's order), the baseline's
    ranked node ids and, for an update, whether the older statement's block is superseded (and by a
    block citing the newer one)."""
    turns: list[str] = []
    for cited in hits:
        turns.extend(n for n in cited if n not in turns)
    memory = [_within(turns, question.groups, k) for k in KS]
    base = [_within(baseline, question.groups, k) for k in KS]
    hits_every = []
    for k in KS:
        top = {n for cited in hits[:k] for n in cited}
        hits_every.append(all(group & top for group in question.groups))
    stale = base_stale = None
    if question.old is not None and question.new is not None:
        stale = _first(hits[: KS[-1]], question.old, question.new)
        base_stale = _first([[n] for n in baseline[: KS[-1]]], question.old, question.new)
    return Asked(
        chat=chat,
        category=question.category,
        form=question.form,
        every=tuple(m[0] for m in memory),
        some=tuple(m[1] for m in memory),
        hits_every=tuple(hits_every),
        base_every=tuple(b[0] for b in base),
        base_some=tuple(b[1] for b in base),
        stale=stale,
        base_stale=base_stale,
        old_superseded=None if labels is None else labels[0],
        old_superseded_by_new=None if labels is None else labels[1],
    )


def write_chat(chat: data.Chat, home: Path, distiller_name: str) -> None:
    """Append the chat with the store's API (its turns dated) and write its memory."""
    from ..memory.store import FileSessionStore
    from ..memory.write import distiller_named
    from ..memory.writing import write_home

    now = [0.0]
    last = [0.0]

    def clock() -> float:  # the turn's date, a second apart within a session
        last[0] = max(now[0], last[0] + 1.0)
        return last[0]

    store = FileSessionStore(home, fsync=False, clock=clock)
    for turn in chat.turns:
        now[0] = turn.when
        store.append(turn.session, turn.role, turn.text, node_id=turn.node)
    write_home(home, force=True, distiller=distiller_named(distiller_name, home))


def _chat(
    chat: data.Chat, home: Path, distiller_name: str, say: kit.Progress
) -> tuple[list[Asked], dict[str, Any]]:
    from rank_bm25 import BM25Okapi

    from ..memory.format import HomePaths
    from ..memory.recall import RecallIndex, RecallQuery, analyse, date_words, search
    from ._shape import shape

    started = time.perf_counter()
    write_chat(chat, home, distiller_name)
    written = time.perf_counter() - started
    memory = HomePaths(home).memory
    index = RecallIndex.open(memory)
    blocks = read_blocks(memory, [(t.session, t.node) for t in chat.turns])
    session_of = {t.node: t.session for t in chat.turns}
    ids = [t.node for t in chat.turns]
    bm25 = BM25Okapi([analyse(f"{date_words(t.when)} {t.role}: {t.text}") for t in chat.turns])
    asked: list[Asked] = []
    say(f"beam {chat.name}: {len(chat.questions)} questions")
    for question in chat.questions:
        if not question.groups:
            continue
        found = search(index, RecallQuery(question.text, k=DEPTH, floor=0.0))
        hits = [[e.node for e in hit.evidence if e.node is not None] for hit in found]  # recall's order
        scores = bm25.get_scores(analyse(question.text))
        ranked = [ids[i] for i in sorted(range(len(ids)), key=lambda i: -scores[i])[:DEPTH]]
        labels = None
        if question.old is not None and question.new is not None:
            old = {(session_of[n], n) for n in question.old}
            new = {(session_of[n], n) for n in question.new}
            labels = (superseded(blocks, old), superseded_by(blocks, old, new))
        asked.append(ask(chat.name, question, hits, ranked, labels))
    form = shape(memory)
    form.pop("sizes", None)
    info = {"turns": len(chat.turns), "sessions": len(set(session_of.values())), "questions": len(chat.questions),
            "write_s": round(written, 1), "marked_superseded": sum(b.successor is not None for b in blocks),
            "marked_partly": sum(b.partly is not None for b in blocks), "blocks": len(blocks), "shape": form,
            # The project brief's pages (topics/brief*.md) are written for coding sessions; what lands there:
            "brief_blocks": sum(b.topic.startswith("topics/brief") for b in blocks),
            "brief_superseded": sum(b.topic.startswith("topics/brief") and b.successor is not None for b in blocks)}  # fmt: skip
    return asked, info


def _rate(rows: Sequence[Asked], test: Callable[[Asked], bool]) -> float | None:
    return round(sum(1 for r in rows if test(r)) / len(rows), 4) if rows else None


def _share(rows: Sequence[Asked], field: str, i: int) -> float | None:
    return round(sum(1 for r in rows if getattr(r, field)[i]) / len(rows), 4) if rows else None


def figures(rows: Sequence[Asked]) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(rows)}
    for i, k in enumerate(KS):
        for name, field in (("all", "every"), ("any", "some"), ("hits_all", "hits_every"),
                            ("baseline_all", "base_every"), ("baseline_any", "base_some")):  # fmt: skip
            out[f"{name}@{k}"] = _share(rows, field, i)
    judged = [r for r in rows if r.stale is not None]
    if judged:
        out["judged"] = len(judged)
        out["stale_first"] = _rate(judged, lambda r: r.stale == "stale")
        out["current_at_1"] = _rate(judged, lambda r: r.stale == "current")
        out["baseline_stale_first"] = _rate(judged, lambda r: r.base_stale == "stale")
        out["baseline_current_at_1"] = _rate(judged, lambda r: r.base_stale == "current")
        out["old_superseded"] = _rate(judged, lambda r: bool(r.old_superseded))
        out["old_superseded_by_new"] = _rate(judged, lambda r: bool(r.old_superseded_by_new))
    return out


def summarise(rows: Sequence[Asked], questions: Sequence[data.Question]) -> dict[str, Any]:
    """All mapped questions' figures, each category's, and what could not be mapped."""
    out = figures(rows)
    out["per_category"] = {
        c: figures([r for r in rows if r.category == c]) for c in sorted({r.category for r in rows})
    }
    unmapped = Counter(q.category for q in questions if not q.groups)
    out["unmapped"] = dict(sorted(unmapped.items()))
    out["unmapped_total"] = sum(unmapped.values())
    out["forms"] = dict(sorted(Counter(q.form for q in questions).items()))
    updates = [q for q in questions if q.category in UPDATES and q.groups]
    out["updates_not_judged"] = sum(1 for q in updates if q.old is None)  # one part only, or both the same
    checked = [q.agrees for q in questions if q.agrees is not None]
    out["references_agree_with_ids"] = {"checked": len(checked), "agree": sum(checked)}
    return out


def run(root: Path, dirs: Sequence[Path], distiller_name: str, progress: kit.Progress) -> dict[str, Any]:
    started = time.perf_counter()
    rows: list[Asked] = []
    questions: list[data.Question] = []
    chats: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="dagmem-bench-beam-") as scratch:
        for number, directory in enumerate(dirs, 1):
            chat = data.load_chat(directory, root)
            progress(
                f"beam: chat {number}/{len(dirs)} ({chat.name}, {len(chat.turns)} turns): writing memory"
            )
            asked, chats[chat.name] = _chat(chat, Path(scratch) / chat.name, distiller_name, progress)
            rows.extend(asked)
            questions.extend(chat.questions)
    out = summarise(rows, questions)
    out.update(data=str(root), distiller=distiller_name, chats=chats, questions_total=len(questions),
               wall_s=round(time.perf_counter() - started, 1))  # fmt: skip
    return out


def results(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's lines: all@10 and all@1 beside rank-bm25, each category's all@10, the updates'."""
    from ._report import result

    n, chats = raw["questions"], len(raw["chats"])
    where = f"{n} questions, {chats} chats; baseline: rank-bm25 over raw turns"
    lines = [
        result(f"beam: all@10 at a 10-turn budget ({where})", raw["all@10"], "", raw["baseline_all@10"], "ratio >= 1"),
        result(f"beam: all@1 ({where})", raw["all@1"], "", raw["baseline_all@1"], None),
        result(f"beam: any@10 ({where})", raw["any@10"], "", raw["baseline_any@10"], None),
        result(f"beam: questions whose evidence maps to no turn (of {raw['questions_total']}; abstention has none)",
               raw["unmapped_total"], "", None, None),
    ]  # fmt: skip
    for category, row in raw["per_category"].items():
        lines.append(result(f"beam {category}: all@10 ({row['questions']} questions)", row["all@10"], "",
                            row["baseline_all@10"], None))  # fmt: skip
    for category in UPDATES:
        row = raw["per_category"].get(category, {})
        if "judged" not in row:
            continue
        lines += [
            result(f"beam {category}: stale-first ({row['judged']} with an older and a newer statement)",
                   row["stale_first"], "", row["baseline_stale_first"], None),
            result(f"beam {category}: the older statement's block marked superseded", row["old_superseded"], "",
                   None, None),
        ]  # fmt: skip
    return lines


def print_breakdowns(raw: dict[str, Any]) -> None:
    from ._standalone import number

    console = kit.report_console(140)
    heads = [f"{m}@{k}" for m in ("all", "any") for k in KS]
    table = kit.table(
        "BEAM evidence recall at a turn budget (memory / rank-bm25)", "category", "questions", *heads
    )
    for name, row in [("all mapped", raw), *raw["per_category"].items()]:
        cells = [
            f"{number(row[f'{m}@{k}'])} / {number(row[f'baseline_{m}@{k}'])}"
            for m in ("all", "any")
            for k in KS
        ]
        table.add_row(name, str(row["questions"]), *cells)
    console.print(table)
    updates = kit.table("BEAM updates (memory / rank-bm25)", "category", "judged", "current@1", "stale-first",
                        "old marked superseded", "... by the new")  # fmt: skip
    for category in UPDATES:
        row = raw["per_category"].get(category, {})
        if "judged" in row:
            updates.add_row(category, str(row["judged"]),
                            f"{number(row['current_at_1'])} / {number(row['baseline_current_at_1'])}",
                            f"{number(row['stale_first'])} / {number(row['baseline_stale_first'])}",
                            number(row["old_superseded"]), number(row["old_superseded_by_new"]))  # fmt: skip
    console.print(updates)
    agree = raw["references_agree_with_ids"]
    console.print(f"unmapped: {raw['unmapped']}; evidence forms: {raw['forms']}; updates without an older and a "
                  f"newer part: {raw['updates_not_judged']}; references meeting the ids' turns: {agree['agree']} "
                  f"of {agree['checked']}")  # fmt: skip
    for name, chat in raw["chats"].items():
        form = chat["shape"]
        console.print(f"{name}: {chat['turns']} turns in {chat['sessions']} sessions, written in {chat['write_s']} s; "
                      f"{chat['blocks']} blocks ({chat['marked_superseded']} superseded) in {form['topic_files']} "
                      f"files, median {form['blocks_per_file_median']} per file; in the project brief's pages "
                      f"{chat['brief_blocks']} blocks ({chat['brief_superseded']} superseded)")  # fmt: skip


def main(args: argparse.Namespace, out: Path) -> int:
    """`dagmem bench beam`: the run, `DIR/bench.json` and `bench.md`, then the report."""
    from ..memory.write import distiller_named
    from ._standalone import emit, progress_printer

    quick = bool(getattr(args, "quick", False))
    root = data.beam_root(getattr(args, "data", None))
    dirs = data.chat_dirs(root)
    name = getattr(args, "distiller", None) or "extractive"
    distiller_named(name, args.home)  # a distiller's missing settings: one line before any work
    raw = run(root, dirs[:QUICK_CHATS] if quick else dirs, name, progress_printer())
    emit(name="beam", title="dagmem bench beam", lines=results(raw), raw=raw, quick=quick, wall=raw["wall_s"],
         out=out, as_json=bool(getattr(args, "json", False)), breakdowns=print_breakdowns)  # fmt: skip
    return 0
