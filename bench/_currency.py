"""`dagmem bench currency`: does recall put a fact's current value first, and does the core hold only that?

The conversations are `_currency_data`'s (seeded): facts about the user and about other people, explicit
and numeric updates, retractions, an edited prompt, a retry, a sub-agent side branch and a child session,
across sessions, in English and Chinese. Each home is appended through the real `Runtime` (the public API:
`append` with explicit predecessors and `spawned`/`spawned_from`, `end_session`, `flush(force=True)`), then
each fact is asked about from every reader of it: nobody in particular, another session, and each tip of
each session that stated it (a tip inside an edited-away branch included: for it, that branch's value is
the current one). Measured on the hits of `recall(k=10)`:

- **current@1**: the first hit citing any statement of the fact cites its current value (beside it, how
  often any of the k hits cites it: the most a better ranking of the same hits could reach);
- **stale-first**: that first hit cites only stale values (a miss, no hit citing the fact, is neither);
- **wrongly superseded**: of the questions where a hit cites the current value, those where such a hit is
  labelled `superseded` or `left` (`Hit.status`; asked with `history=True` where recall has it);
- **core staleness**: statements in `core.md` that are stale for nobody in particular (none is the goal);
- **core coverage**: the user's own facts whose current value `core.md` cites, over all of them.

The baseline is rank-bm25's `BM25Okapi` over the raw turns of the same home (every branch, with recall's
analyser), asked the same questions in the same run: it knows nothing of time or branches. A hit "cites" a
statement when its evidence holds that turn; `core.md` cites one when it links the turn's source anchor.
"""

from __future__ import annotations

import inspect
import random
import re
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from . import _currency_data as data
from . import _kit as kit

__all__ = [
    "Question",
    "core_blocks",
    "core_citations",
    "core_counts",
    "first_citing",
    "measure",
    "results",
    "summarise",
]

SEED = 20_261_202
HOMES, QUICK_HOMES = 24, 4
SESSIONS = 5
K = 10
THRESHOLD = 120  # tokens: a write every few exchanges, so changes land in other batches than their facts
EPOCH = 1_767_225_600.0  # 2026-01-01 UTC; each session starts a day after the previous one
GOALS = {"current_at_1": 0.90, "stale_first": 0.05, "wrongly_superseded": 0.02}

Outcome = Literal["current", "stale", "miss"]
Node = tuple[str, str]


def first_citing(ranked: Iterable[Iterable[Node]], truth: data.Truth) -> Outcome:
    """Judge a ranking (each hit as the turns it cites, best first) by its first hit citing the fact."""
    for cited in ranked:
        nodes = set(cited)
        if nodes & truth.current:
            return "current"
        if nodes & truth.stale:
            return "stale"
    return "miss"


@dataclass(frozen=True)
class Question:
    """One question and how each ranking answered it."""

    slot: str
    attribute: str
    event: str  # what made the current value (first / update / numeric / retraction / edited / ...)
    reader: str  # nobody / another session / a tip / a left tip
    memory: Outcome
    baseline: Outcome
    wrongly_labelled: bool | None  # None: no hit cited the current value
    current_in_k: bool = False  # some hit of the k cites the current value: what a reranking could reach


def _rate(rows: Sequence[Question], test: Any) -> float | None:
    return round(sum(1 for q in rows if test(q)) / len(rows), 4) if rows else None


def summarise(questions: Sequence[Question], core: Mapping[str, float | int]) -> dict[str, Any]:
    """The figures of a run from its questions and its core counts (`stale`, `covered`, `facts`)."""
    labelled = [q for q in questions if q.wrongly_labelled is not None]

    def figures(rows: Sequence[Question]) -> dict[str, Any]:
        return {
            "questions": len(rows),
            "current_at_1": _rate(rows, lambda q: q.memory == "current"),
            "stale_first": _rate(rows, lambda q: q.memory == "stale"),
            "miss": _rate(rows, lambda q: q.memory == "miss"),
            "current_in_k": _rate(rows, lambda q: q.current_in_k),
            "baseline_current_at_1": _rate(rows, lambda q: q.baseline == "current"),
            "baseline_stale_first": _rate(rows, lambda q: q.baseline == "stale"),
        }

    out = figures(questions)
    out["wrongly_superseded"] = _rate(labelled, lambda q: bool(q.wrongly_labelled))
    out["labelled_questions"] = len(labelled)
    out["core_stale"] = int(core["stale"])
    out["core_facts"] = int(core["facts"])
    out["core_coverage"] = round(core["covered"] / core["facts"], 4) if core["facts"] else None
    for field in ("event", "reader"):
        groups = sorted({getattr(q, field) for q in questions})
        out[f"by_{field}"] = {g: figures([q for q in questions if getattr(q, field) == g]) for g in groups}
    return out


_PARAGRAPH = re.compile(r"\n\s*\n")
_ANCHOR = re.compile(r"#(src-[0-9a-f]{16})")


def core_citations(core_text: str, anchors: Mapping[str, Node]) -> list[set[Node]]:
    """The statement turns each block of `core.md` cites (a block is a paragraph: claim and citations)."""
    return [cited for _, cited in core_blocks(core_text, anchors)]


def core_blocks(core_text: str, anchors: Mapping[str, Node]) -> list[tuple[str, set[Node]]]:
    """Each block of `core.md` that cites a statement turn: its text, and the turns it cites."""
    blocks = []
    for paragraph in _PARAGRAPH.split(core_text):
        cited = {anchors[a] for a in _ANCHOR.findall(paragraph) if a in anchors}
        if cited:
            blocks.append((paragraph, cited))
    return blocks


def core_counts(workload: data.Workload, core_text: str) -> dict[str, int]:
    """`stale`: the (slot, turn) pairs of a core block that states a slot's stale value (a block citing
    a turn that stated two slots, "I drive a Volvo and I'm vegetarian", is stale for the car only when
    its own words say the old car: the core files such a turn one fact per clause); `covered`: the
    user's slots whose current value some core block cites; `facts`: the user's slots."""
    from ..memory.format import anchor_of

    anchors = {anchor_of(f"{s}/{n}"): (s, n) for s, n in data.statement_nodes(workload)}
    said = {(t.session, t.node): dict(t.states) for t in workload.turns if t.states}
    blocks = core_blocks(core_text, anchors)
    stale: set[tuple[str, Node]] = set()
    covered = facts = 0
    for key, slot in workload.slots.items():
        truth = workload.truth(key, (None, None))
        for text, cited in blocks:
            if cited & truth.current:
                continue
            folded = text.casefold()
            stale.update((key, node) for node in cited & truth.stale if said[node][key].casefold() in folded)
        if slot.first_person:
            facts += 1
            covered += any(cited & truth.current for _, cited in blocks)
    return {"stale": len(stale), "covered": covered, "facts": facts}


async def _home(
    workload: data.Workload, home: Path, rng: random.Random
) -> tuple[list[Question], dict[str, int]]:
    from rank_bm25 import BM25Okapi

    from ..actors import Runtime
    from ..memory.recall import analyse
    from ..memory.store import FakeClock

    clock = FakeClock(EPOCH)
    async with Runtime.open(home, token_threshold=THRESHOLD, epoch=clock) as rt:
        session: str | None = None
        for turn in workload.turns:
            if turn.session != session:
                if session is not None:
                    await rt.end_session(session)
                session = turn.session
                clock.now += 86_400.0
            await rt.append(turn.session, turn.role, turn.text, predecessor=turn.predecessor,
                            node_id=turn.node, spawned=turn.spawned, spawned_from=turn.spawned_from)  # fmt: skip
        await rt.flush(force=True)
        # Where recall can rank by relevance alone, the labels are read there (a wrongly superseded block
        # is demoted by default, and might fall out of the first k).
        history: dict[str, Any] | None = (
            {"history": True} if "history" in inspect.signature(rt.recall).parameters else None
        )
        turns = workload.turns
        bm25 = BM25Okapi([analyse(t.text) for t in turns])
        out: list[Question] = []
        for key, reader, question in data.questions(workload, rng):
            truth = workload.truth(key, reader)
            session_id, tip = reader
            hits = await rt.recall(question, session_id=session_id, tip=tip, k=K)
            labelled = (
                await rt.recall(question, session_id=session_id, tip=tip, k=K, **history) if history else hits
            )
            cites = [{(e.session, e.node) for e in hit.evidence if e.node is not None} for hit in hits]
            wrong = [getattr(hit, "status", "current") != "current" for hit in labelled
                     if {(e.session, e.node) for e in hit.evidence} & truth.current]  # fmt: skip
            scores = bm25.get_scores(analyse(question))
            ranked = sorted(range(len(turns)), key=lambda i: -scores[i])[:K]
            slot = workload.slots[key]
            out.append(
                Question(
                    slot=key,
                    attribute=slot.attribute,
                    event=truth.event,
                    reader=workload.reader_kind(reader),
                    memory=first_citing(cites, truth),
                    baseline=first_citing([{(turns[i].session, turns[i].node)} for i in ranked], truth),
                    wrongly_labelled=any(wrong) if wrong else None,
                    current_in_k=any(cited & truth.current for cited in cites),
                )
            )
        core = core_counts(workload, await rt.core_async())
    return out, core


def measure(
    homes: int, progress: kit.Progress, *, sessions: int | None = None, seed: int = SEED
) -> dict[str, Any]:
    """Generate `homes` homes (of `SESSIONS` sessions each unless `sessions`), append and ask each, and
    return the summary."""
    import anyio

    started = time.perf_counter()
    questions: list[Question] = []
    core = {"stale": 0, "covered": 0, "facts": 0}
    turns = 0
    with tempfile.TemporaryDirectory(prefix="dagmem-bench-currency-") as scratch:
        for index in range(homes):
            workload = data.generate(seed, index, SESSIONS if sessions is None else sessions)
            turns += len(workload.turns)
            progress(f"currency: home {index + 1}/{homes}, {len(workload.turns)} turns")
            rng = random.Random(f"questions:{seed}:{index}")
            found, counts = anyio.run(_home, workload, Path(scratch) / workload.name, rng)
            questions.extend(found)
            for name, value in counts.items():
                core[name] += value
    summary = summarise(questions, core)
    summary.update(homes=homes, turns=turns, seed=seed, wall_s=round(time.perf_counter() - started, 1))
    return summary


def results(quick: bool, say: kit.Progress) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """`dagmem bench`'s lines: each figure beside rank-bm25 over raw turns, and its goal."""
    from ._report import result

    raw = measure(QUICK_HOMES if quick else HOMES, say)
    n, homes = raw["questions"], raw["homes"]
    where = f"{n} questions, {homes} homes; baseline: rank-bm25 over raw turns"
    lines = [
        result(f"currency: current@1 ({where})", raw["current_at_1"], "", raw["baseline_current_at_1"],
               f"value >= {GOALS['current_at_1']}"),
        result(f"currency: stale-first rate ({where})", raw["stale_first"], "", raw["baseline_stale_first"],
               f"value <= {GOALS['stale_first']}"),
        result(f"currency: the current value anywhere in the first {K} hits (what reranking could reach)",
               raw["current_in_k"], "", None, None),
        result(f"currency: current facts labelled superseded or left ({raw['labelled_questions']} questions)",
               raw["wrongly_superseded"], "", None, f"value <= {GOALS['wrongly_superseded']}"),
        result(f"currency: stale facts in core.md ({homes} homes)", raw["core_stale"], "", None, "value <= 0"),
        result(f"currency: core coverage (the user's current facts in core.md, of {raw['core_facts']})",
               raw["core_coverage"], "", None, None),
    ]  # fmt: skip
    for event, row in raw["by_event"].items():
        lines.append(result(f"currency: current@1 when the value came from: {event} ({row['questions']} questions)",
                            row["current_at_1"], "", row["baseline_current_at_1"], None))  # fmt: skip
    for reader, row in raw["by_reader"].items():
        lines.append(result(f"currency: current@1 asked from {reader} ({row['questions']} questions)",
                            row["current_at_1"], "", row["baseline_current_at_1"], None))  # fmt: skip
    return lines, raw
