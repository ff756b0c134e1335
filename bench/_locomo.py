"""`dagmem bench locomo --data PATH`: evidence recall on LoCoMo, through memory and against raw-turn BM25.

Each conversation becomes one session in a home of its own (speaker A as the user, speaker B as the
assistant; a turn's text is `<speaker>: <text>`, with `[shares a photo: <caption>]` when it shares one, and
its time is its LoCoMo session's date). The write pass distils it with the chosen distiller; each question
then goes through `recall`. Both rankings are counted at a **turn budget**: the evidence turns cited by the
hits, in rank order (a hit's evidence in the order recall gives it), cut at k turns, so memory (which
returns blocks of a few turns) and the baseline (which returns turns) are compared on the same k.
all@k: every evidence turn of the question is within the first k turns; any@k: at least one; MRR: of the
first evidence turn, over the first 25 turns.

The baseline is rank-bm25's `BM25Okapi` over the raw turns of the same conversation, each indexed as
`<session date> <speaker>: <text>` with the same analyser as recall's (stopwords, stems, CJK bigrams),
built and queried in the same run: the difference is what memory adds, not a tokenizer.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..memory.errors import InvalidInput
from ..memory.format import HomePaths
from ..memory.recall import RecallIndex, RecallQuery, analyse, date_words, search
from ..memory.store import FileSessionStore
from ..memory.write import Distiller, distiller_named
from ..memory.writing import write_home
from . import _kit as kit
from ._shape import combine, shape

__all__ = ["Conversation", "evidence_ids", "load", "main", "run"]

KS = (1, 5, 10, 25)
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


class Conversation:
    """One LoCoMo conversation: its turns (dia id, speaker, text, epoch) in order, and its questions."""

    def __init__(self, raw: dict[str, Any]) -> None:
        conv = raw["conversation"]
        self.name = str(raw.get("sample_id", "conversation"))
        self.speaker_a = str(conv["speaker_a"])
        self.turns: list[tuple[str, str, str, float]] = []
        number = 1
        while f"session_{number}_date_time" in conv or f"session_{number}" in conv:
            when = _date(conv.get(f"session_{number}_date_time"))
            for turn in conv.get(f"session_{number}") or []:
                text = str(turn.get("text", ""))
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                self.turns.append((str(turn["dia_id"]), str(turn["speaker"]), text, when))
            number += 1
        self.questions: list[tuple[str, int, list[str]]] = []
        known = {dia for dia, *_ in self.turns}
        for qa in raw.get("qa", []):
            ids = [i for i in evidence_ids(qa.get("evidence", [])) if i in known]
            self.questions.append((str(qa["question"]), int(qa["category"]), ids))


def _date(text: object) -> float:
    """'1:56 pm on 8 May, 2023' -> epoch seconds (UTC); anything unreadable -> 0 (1970)."""
    try:
        return datetime.strptime(str(text).strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return 0.0


def evidence_ids(evidence: Sequence[object]) -> list[str]:
    """Evidence ids with LoCoMo's quirks mended: several in one string ('D8:6; D9:17'), 'D:11:26',
    zero-padded 'D30:05'; a bare 'D' is dropped."""
    out: list[str] = []
    for item in evidence:
        for part in re.split(r"[;,\s]+", str(item)):
            match = _EVIDENCE.fullmatch(part)
            if match is not None:
                ident = f"D{int(match[1])}:{int(match[2])}"
                if ident not in out:
                    out.append(ident)
    return out


def load(path: Path) -> list[Conversation]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"--data {path}: not a readable LoCoMo JSON file: {exc}") from None
    if not isinstance(raw, list):
        raise InvalidInput(f"--data {path}: expected a list of conversations")
    return [Conversation(item) for item in raw]


def _node_id(dia: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", dia)


def _write(conversation: Conversation, home: Path, distiller: Distiller) -> str:
    """Append the conversation as one session and write its memory; returns the session id."""
    session = _node_id(conversation.name)
    now = [0.0]
    last = [0.0]

    def clock() -> float:  # the turn's session date, a second apart within a session
        last[0] = max(now[0], last[0] + 1.0)
        return last[0]

    store = FileSessionStore(home, fsync=False, clock=clock)
    for dia, speaker, text, when in conversation.turns:
        now[0] = when
        role = "user" if speaker == conversation.speaker_a else "assistant"
        store.append(session, role, f"{speaker}: {text}", node_id=_node_id(dia))
    write_home(home, force=True, distiller=distiller)
    return session


_Row = tuple[int, list[bool], list[bool], float, int]  # category, all@k, any@k, reciprocal rank, half


class _Tally:
    def __init__(self) -> None:
        self.rows: list[_Row] = []
        self.seconds: list[float] = []

    def add(
        self, category: int, ranked: Sequence[str], evidence: Sequence[str], seconds: float, half: int
    ) -> None:
        wanted = set(evidence)
        every = [wanted <= set(ranked[:k]) for k in KS]
        some = [bool(wanted & set(ranked[:k])) for k in KS]
        rank = next((i for i, turn in enumerate(ranked[: KS[-1]]) if turn in wanted), None)
        self.rows.append((category, every, some, 0.0 if rank is None else 1.0 / (rank + 1), half))
        self.seconds.append(seconds)

    def summary(self) -> dict[str, Any]:
        def figures(rows: list[_Row]) -> dict[str, Any]:
            n = max(len(rows), 1)
            out: dict[str, Any] = {"questions": len(rows)}
            for i, k in enumerate(KS):
                out[f"recall_all@{k}"] = round(sum(r[1][i] for r in rows) / n, 3)
            for i, k in enumerate(KS):
                out[f"recall_any@{k}"] = round(sum(r[2][i] for r in rows) / n, 3)
            out["mrr"] = round(sum(r[3] for r in rows) / n, 3)
            return out

        def with_categories(rows: list[_Row]) -> dict[str, Any]:
            out = figures([r for r in rows if 1 <= r[0] <= 4])
            out["per_category"] = {
                str(c): figures([r for r in rows if r[0] == c]) for c in sorted({r[0] for r in rows})
            }
            return out

        main = with_categories(self.rows)
        # Each figure on each half of the conversations apart: a constant that helps only one half was
        # tuned to it, not found (what carries over holds on both).
        main["halves"] = [with_categories([r for r in self.rows if r[4] == half]) for half in (0, 1)]
        ordered = sorted(self.seconds)
        if ordered:
            main["query_ms_p50"] = round(kit.quantile(ordered, 0.5) * 1e3, 3)
            main["query_ms_p95"] = round(kit.quantile(ordered, 0.95) * 1e3, 3)
        return main


def run(data: Path, distiller_name: str, progress: kit.Progress, home: Path | None = None) -> dict[str, Any]:
    from rank_bm25 import BM25Okapi

    conversations = load(data)
    started = time.perf_counter()
    memory, baseline = _Tally(), _Tally()
    skipped = 0
    shapes: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="dagmem-bench-locomo-") as scratch:
        first_half = (len(conversations) + 1) // 2  # conversations 1..first_half, then the rest
        for number, conversation in enumerate(conversations, 1):
            half = 0 if number <= first_half else 1
            progress(f"conversation {number}/{len(conversations)} ({conversation.name}): writing memory")
            home = Path(scratch) / f"home-{number}"
            distiller = distiller_named(distiller_name, home)
            _write(conversation, home, distiller)
            shapes.append(shape(HomePaths(home).memory, _locomo_session))
            index = RecallIndex.open(HomePaths(home).memory)
            ids = [dia for dia, *_ in conversation.turns]
            bm25 = BM25Okapi(
                [analyse(f"{date_words(when)} {who}: {text}") for _dia, who, text, when in conversation.turns]
            )
            progress(f"conversation {number}/{len(conversations)}: {len(conversation.questions)} questions")
            for question, category, evidence in conversation.questions:
                if not evidence:
                    skipped += 1
                    continue
                clock = time.perf_counter()
                hits = search(
                    index, RecallQuery(question, k=KS[-1], floor=0.0)
                )  # evidence at k, as the baseline's
                memory_s = time.perf_counter() - clock
                turns: list[str] = []
                for hit in hits:
                    for source in hit.evidence:
                        if source.node is not None and source.node not in turns:
                            turns.append(source.node)
                memory.add(category, [_dia_of(t) for t in turns], evidence, memory_s, half)
                clock = time.perf_counter()
                scores = bm25.get_scores(analyse(question))
                ranked = sorted(range(len(ids)), key=lambda i: -scores[i])[: KS[-1]]
                baseline.add(category, [ids[i] for i in ranked], evidence, time.perf_counter() - clock, half)
    return {
        "data": str(data),
        "distiller": distiller_name,
        "conversations": len(conversations),
        "questions": sum(1 for r in memory.rows if 1 <= r[0] <= 4),
        "skipped_without_evidence": skipped,
        "memory": memory.summary(),
        "baseline": baseline.summary(),
        "shape": combine(shapes),
        "wall_s": round(time.perf_counter() - started, 1),
    }


def _locomo_session(_session: str, node_id: str) -> str:
    # A turn's LoCoMo session is its dia id's "D<n>" ("D3-5": session 3).
    return node_id.partition("-")[0]


def _dia_of(node_id: str) -> str:
    # Node ids are the dia ids with ':' made '-' ("D1:3" -> "D1-3").
    return node_id.replace("-", ":", 1) if node_id.startswith("D") else node_id


def print_report(result: dict[str, Any]) -> None:
    console = kit.report_console(120)
    heads = [f"all@{k}" for k in KS] + [f"any@{k}" for k in KS] + ["MRR", "p50 ms", "p95 ms"]
    out = kit.table(
        f"LoCoMo evidence recall at a turn budget ({result['questions']} questions, categories 1-4, "
        f"{result['conversations']} conversations, distiller {result['distiller']})",
        "method",
        *heads,
    )
    for name in ("memory", "baseline"):
        row = result[name]
        label = "dagmem recall (memory)" if name == "memory" else "rank-bm25 over raw turns"
        out.add_row(
            label,
            *(f"{row[f'recall_all@{k}']:.3f}" for k in KS),
            *(f"{row[f'recall_any@{k}']:.3f}" for k in KS),
            f"{row['mrr']:.3f}",
            f"{row.get('query_ms_p50', 0):.2f}",
            f"{row.get('query_ms_p95', 0):.2f}",
        )
    console.print(out)
    per = kit.table("per category (all@1 / all@10 / MRR)", "category", "questions", "memory", "baseline")
    for category, row in result["memory"]["per_category"].items():
        base = result["baseline"]["per_category"][category]
        per.add_row(
            category,
            str(row["questions"]),
            f"{row['recall_all@1']:.3f} / {row['recall_all@10']:.3f} / {row['mrr']:.3f}",
            f"{base['recall_all@1']:.3f} / {base['recall_all@10']:.3f} / {base['mrr']:.3f}",
        )
    console.print(per)
    halves = kit.table(
        "by halves of the conversations (all@1 / all@10; multi-hop all@10)", "half", "memory", "baseline"
    )
    for n, (mine, base) in enumerate(
        zip(result["memory"]["halves"], result["baseline"]["halves"], strict=True)
    ):
        halves.add_row(
            f"{'first' if n == 0 else 'second'} ({mine['questions']} questions)", *map(_half, (mine, base))
        )
    console.print(halves)
    form = result["shape"]
    table = kit.table("the shape of memory (topic files, as a person reads them)", "figure", "value", "goal")
    goals = {
        "blocks_per_file_median": ">= 3",
        "filler_named_files": "0",
        "blocks_across_sessions": "0",
        "turns_cut_in_index": "0",
    }
    for key, value in form.items():
        table.add_row(key.replace("_", " "), str(value), goals.get(key, ""))
    console.print(table)
    console.print(
        f"all@10 at a 10-turn budget: memory {result['memory']['recall_all@10']:.3f} vs baseline "
        f"{result['baseline']['recall_all@10']:.3f} (goal: at least the baseline, and >= 0.60 on the dev "
        f"split); all@1 {result['memory']['recall_all@1']:.3f} (goal >= 0.30). {result['wall_s']} s."
    )


def _half(row: dict[str, Any]) -> str:
    hop = row["per_category"].get("1", {}).get("recall_all@10")
    multi = "—" if hop is None else f"{hop:.3f}"
    return f"{row['recall_all@1']:.3f} / {row['recall_all@10']:.3f}; {multi}"


def main(args: argparse.Namespace) -> int:
    data = getattr(args, "data", None)
    if data is None:
        raise InvalidInput("dagmem bench locomo needs --data PATH (a LoCoMo-format JSON file)")
    name = getattr(args, "distiller", "extractive")
    distiller_named(name, args.home)  # a distiller's missing settings: one line before any work
    return kit.cli(args, lambda _quick, progress: run(Path(data), name, progress, args.home), print_report)
