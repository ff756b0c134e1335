"""`dagmem bench recall [--quick]`: recall's speed at 1,000, 10,000 and 100,000 blocks (--quick: to
10,000) beside its goals, and the engines it was chosen over, on the same documents in the same run.
Its lines join `dagmem bench`'s report (`results`); `python -m dagmem.bench._recall` prints its own tables.

The workspace is synthetic but real on disk: seeded chat text (two quoted turns a block, like the
extractive distiller's), embedded with the real model, written as a real snapshot that matches a real
txlog line, then opened the way a reader opens it. Measured, one query at a time:
- recall (`search`, k = 5): p50 / p95 at each size (goal: p50 <= 5 ms, p95 <= 20 ms at 100,000);
- opening the index without a rebuild: in this process (model loaded), in a fresh process (imports,
  model and the first query included), and with the largest delta a snapshot lets grow before it is
  compacted (goal: <= 1 s);
- the index update of one install (30 new blocks in a new topic file) at each size: O(batch) means the
  ratio stays near 1; a compaction's cost, and that cost spread over the blocks that trigger one;
- the lexical engines over the same texts and terms: this index's query-time BM25, bm25s, SQLite FTS5's
  bm25(); the dense side: a full 256-d float32 scan against the two-stage scan recall uses.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..memory.durable import TxLog, sha256_hex
from ..memory.format import (
    ArchiveRecord,
    Topic,
    TxRecord,
    WorkspacePaths,
    make_block,
    render_topic,
)
from ..memory.recall import EMBED_MODEL as MODEL
from ..memory.recall import SNAPSHOT_VERSION as VERSION
from ..memory.recall import (
    Entry,
    RecallIndex,
    RecallQuery,
    RecallUpdater,
    Snapshot,
    Source,
    analyse,
    append_record,
    compact,
    delta_limit,
    embed,
    index_arrays,
    make_record,
    recall_root,
    search,
    write_snapshot,
)
from . import _kit as kit

__all__ = ["main", "run"]

SMALL = 1_000
QUERIES = 200
PER_TOPIC = 25
BATCH = 30


def _texts(count: int, rng: random.Random, topics: list[str]) -> list[str]:
    out = []
    for _ in range(count):
        topic = rng.choice(topics)
        user = kit.topic_text(rng, topic, 1, numbers=True)
        assistant = kit.topic_text(rng, rng.choice(topics), 1, numbers=False)
        out.append(f"User: “{user[:300]}” Assistant: “{assistant[:300]}”")
    return out


def _entries(texts: list[str], start: int, topic_prefix: str) -> list[Entry]:
    vectors = embed([f"1 May 2026 {t}" for t in texts]).astype(np.float16)
    entries = []
    for i, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        n = start + i
        session = f"s{n // 200}"
        sources = (
            Source(session, f"src-{n:016x}", f"u{n}", "user", 1_777_600_000.0 + n, 2 * (n % 200), text[:300]),
            Source(
                session, f"src-{n:016x}a", f"a{n}", "assistant", 1_777_600_001.0 + n, 2 * (n % 200) + 1, ""
            ),
        )
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        topic = f"topics/{topic_prefix}{n // PER_TOPIC}.md"
        entry = Entry(topic, f"b-{n:08x}", digest, text, "2026-05-01", sources, vector)
        entry.words = dict(Counter(analyse(entry.index_text())))  # as the writer's update computes them
        entries.append(entry)
    return entries


def _workspace(memory: Path, count: int, rng: random.Random, topics: list[str]) -> list[str]:
    """A workspace whose index holds `count` blocks (as one snapshot matching txlog line 1)."""
    paths = WorkspacePaths(memory)
    paths.topics.mkdir(parents=True)
    paths.sources.mkdir()
    line = TxRecord("00000001-bench000", 1, 1.0, "s0", ("s0/u0",), {}).to_line()
    paths.state.mkdir()
    paths.txlog.write_bytes(line)
    index = RecallIndex(memory, Snapshot.empty())
    texts = _texts(count, rng, topics)
    for start in range(0, count, 10_000):
        for entry in _entries(texts[start : start + 10_000], start, "t"):
            index._add(entry)
    meta = {
        "version": VERSION,
        "model": MODEL,
        "seq": 1,
        "tx": "00000001-bench000",
        "txlog_start": 0,
        "txlog_end": len(line),
        "txlog_sha": hashlib.sha256(line).hexdigest(),
    }
    write_snapshot(recall_root(memory), meta, index_arrays(index), fsync=False)
    return texts


def _timed(fn: Callable[[], Any], reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return sorted(out)


def _ms(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(kit.quantile(values, 0.5) * 1e3, 3),
        "p95_ms": round(kit.quantile(values, 0.95) * 1e3, 3),
    }


def _queries(rng: random.Random, topics: list[str]) -> list[str]:
    words = kit.FILLER
    return [
        f"what did we say about {rng.choice(topics)} and the {rng.choice(words)} {rng.choice(words)}"
        for _ in range(QUERIES)
    ]


def _install(updater: RecallUpdater, memory: Path, seq: int, rng: random.Random, topics: list[str]) -> float:
    """One real install's index update: a new topic file of BATCH blocks, its txlog line, the updater."""
    path = f"topics/new{seq}.md"
    records = [
        ArchiveRecord("s0", f"x{seq}-{i}", "user", i, 1_777_700_000.0 + i, text)
        for i, text in enumerate(_texts(BATCH, rng, topics))
    ]
    taken: set[str] = set()
    blocks = [
        make_block(
            path,
            r.content.replace("“", "").replace("”", ""),
            [("2026-05-02", [("user", r.source_id)])],
            taken,
        )
        for r in records
    ]
    data = render_topic(Topic("New", tuple(blocks))).encode()
    (memory / path).write_bytes(data)
    txlog = TxLog(WorkspacePaths(memory).txlog, fsync=False)
    start = txlog.size()
    record = TxRecord(
        f"{seq:08d}-bench000", seq, 2.0, "s0", tuple(r.source_id for r in records), {path: sha256_hex(data)}
    )
    end = txlog.append(record)
    started = time.perf_counter()
    updater.after_install(memory, record, start=start, end=end, before={}, records=records, fsync=False)
    return time.perf_counter() - started


def _size(
    scratch: Path, count: int, rng: random.Random, topics: list[str], progress: kit.Progress
) -> tuple[dict[str, Any], list[str], Path]:
    memory = scratch / f"memory-{count}"
    progress(f"{count:,} blocks: embedding and indexing (setup)")
    started = time.perf_counter()
    texts = _workspace(memory, count, rng, topics)
    build_s = time.perf_counter() - started
    progress(f"{count:,} blocks: open and recall")
    opens = _timed(lambda: RecallIndex.open(memory), 5)
    index = RecallIndex.open(memory)
    queries = _queries(rng, topics)
    for query in queries[:20]:
        search(index, RecallQuery(query, k=5))
    latencies = []
    for query in queries:
        started = time.perf_counter()
        search(index, RecallQuery(query, k=5))
        latencies.append(time.perf_counter() - started)
    progress(f"{count:,} blocks: index updates of installs")
    updater = RecallUpdater()  # the writer's, kept across its installs
    installs = sorted(_install(updater, memory, seq, rng, topics) for seq in range(2, 12))
    result = {
        "blocks": count,
        "setup_s": round(build_s, 1),
        "open_ms": round(kit.quantile(opens, 0.5) * 1e3, 1),
        "recall": _ms(sorted(latencies)),
        "install_update_ms": round(kit.quantile(installs, 0.5) * 1e3, 2),
    }
    return result, texts, memory


def _cold_open(memory: Path) -> float:
    code = (
        "import sys, time; t = time.perf_counter(); "
        "from dagmem.memory.recall import RecallIndex, RecallQuery, search; "
        "ix = RecallIndex.open(__import__('pathlib').Path(sys.argv[1])); "
        "search(ix, RecallQuery('what about the garden')); "
        "print(time.perf_counter() - t)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(memory)], capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def _big_delta(memory: Path, rng: random.Random, topics: list[str]) -> tuple[int, float]:
    """Append the largest delta the compaction rule lets a snapshot's log reach (`delta_limit`: COMPACT_MIN
    bytes, or 1/COMPACT_RATIO of the snapshot, whichever is more) and time an open."""
    snapshot = max(recall_root(memory).glob("snap-*"))
    delta, limit = snapshot / "delta.jsonl", delta_limit(snapshot)
    index = RecallIndex.open(memory)
    txlog = TxLog(WorkspacePaths(memory).txlog, fsync=False)
    seq, extra = index.seq, 0
    while delta.stat().st_size < limit:
        entries = _entries(_texts(500, rng, topics), 1_000_000 + extra, "d")
        files: dict[str, Any] = {}
        for entry in entries:
            files.setdefault(entry.topic, ([], []))
            files[entry.topic][0].append(entry.key)
            files[entry.topic][1].append(entry)
        seq += 1
        record = TxRecord(f"{seq:08d}-bench000", seq, 3.0, "s0", (), {})
        begin = txlog.size()
        end = txlog.append(record)
        append_record(delta, make_record(record, begin, end, files, txlog))
        extra += len(entries)
    opens = _timed(lambda: RecallIndex.open(memory), 3)
    return extra, kit.quantile(opens, 0.5)


def _engines(
    memory: Path, texts: list[str], rng: random.Random, topics: list[str], progress: kit.Progress
) -> dict[str, Any]:
    """The same documents and terms through each lexical engine, and the two dense scans."""
    out: dict[str, Any] = {}
    queries = _queries(rng, topics)
    terms = [analyse(q) for q in queries]
    progress("engines: this index's BM25")
    docs = [analyse(t) for t in texts]
    index = RecallIndex.open(memory)  # the snapshot's postings, as a reader maps them
    out["query-time BM25 (this index)"] = _ms(_timed_each(lambda q: _top(index.bm25(q), 25), terms))
    try:
        import bm25s

        progress("engines: bm25s")
        started = time.perf_counter()
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenization.Tokenized(*_vocab_ids(docs)), show_progress=False)
        build = time.perf_counter() - started
        vocab = _vocab_ids(docs)[1]
        nothing = np.zeros(len(docs), np.float32)

        def bm25s_top(words: list[str]) -> Any:
            ids = [vocab[w] for w in words if w in vocab]
            # bm25s fails on a query of no known term (an IndexError): it scores nothing, as ours does
            return _top(retriever.get_scores(ids) if ids else nothing, 25)

        out["bm25s (static index)"] = _ms(_timed_each(bm25s_top, terms)) | {"build_s": round(build, 1)}
    except ImportError:
        out["bm25s (static index)"] = {"skipped": "bm25s is not installed (pip install bm25s)"}
    progress("engines: SQLite FTS5")
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE d USING fts5(body)")
    db.executemany(
        "INSERT INTO d (rowid, body) VALUES (?, ?)", ((i, " ".join(w)) for i, w in enumerate(docs))
    )

    def fts(words: list[str]) -> object:
        match = " OR ".join(f'"{w}"' for w in dict.fromkeys(words)) or '""'
        return db.execute(
            "SELECT rowid FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT 25", (match,)
        ).fetchall()

    out["SQLite FTS5 bm25()"] = _ms(_timed_each(fts, terms))
    progress("engines: dense scans")
    vectors = embed(texts[: len(texts)])
    coarse = vectors[:, :64] / np.linalg.norm(vectors[:, :64], axis=1, keepdims=True)
    qs = embed(queries)
    out["dense: full 256-d float32 scan"] = _ms(_timed_each(lambda q: _top(vectors @ q, 25), list(qs)))
    half = vectors.astype(np.float16)

    def two_stage(q: Any) -> Any:
        rows = _top(coarse @ (q[:64] / np.linalg.norm(q[:64])), 64)
        return half[rows].astype(np.float32) @ q

    out["dense: 64-d scan + 256-d rescoring (recall)"] = _ms(_timed_each(two_stage, list(qs)))
    return out


def _vocab_ids(docs: list[list[str]]) -> tuple[list[list[int]], dict[str, int]]:
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(w, len(vocab)) for w in words] for words in docs]
    return ids, vocab


def _top(scores: Any, k: int) -> Any:
    scores = np.asarray(scores)
    if len(scores) <= k:
        return np.arange(len(scores))
    return np.argpartition(-scores, k - 1)[:k]


def _timed_each(fn: Callable[[Any], Any], items: list[Any]) -> list[float]:
    for item in items[:10]:
        fn(item)
    out = []
    for item in items:
        started = time.perf_counter()
        fn(item)
        out.append(time.perf_counter() - started)
    return sorted(out)


def run(sizes: tuple[int, ...], progress: kit.Progress) -> dict[str, Any]:
    """Every measurement at each of `sizes` (ascending); the one-off ones at the largest."""
    rng = random.Random(11)
    topics = kit.topic_words(2_000, rng)
    large = sizes[-1]
    with kit.scratch("recall", None) as scratch:
        per_size = []
        for count in sizes:
            measured, texts, memory = _size(scratch, count, rng, topics, progress)
            per_size.append(measured)
        progress(f"{large:,} blocks: a fresh process opens and recalls")
        cold = _cold_open(memory)
        progress(f"{large:,} blocks: a compaction")
        started = time.perf_counter()
        compact(memory, fsync=False)
        compaction_s = time.perf_counter() - started
        progress(f"{large:,} blocks: open with the largest delta before a compaction")
        extra, delta_open = _big_delta(memory, rng, topics)
        engines = _engines(memory, texts, rng, topics, progress)
    small, big = per_size[0], per_size[-1]
    return {
        "sizes": per_size,
        "small": small,
        "large": big,
        "open_cold_process_s": round(cold, 3),
        "open_with_delta": {"delta_blocks": extra, "open_ms": round(delta_open * 1e3, 1)},
        "compaction": {
            "seconds": round(compaction_s, 2),
            "amortised_ms_per_block": round(compaction_s * 1e3 / max(extra, 1), 3),
        },
        "install_update_ratio": kit.ratio(big["install_update_ms"], small["install_update_ms"]),
        "engines": engines,
        "goals": {"recall_p50_ms": 5, "recall_p95_ms": 20, "open_s": 1.0},
    }


def results(quick: bool, say: kit.Progress) -> list[dict[str, Any]]:
    """`dagmem bench recall`'s lines for the report (`bench/_report.py`): each figure beside its goal, and
    the engines recall was chosen over (no goal: for comparison)."""
    from ._report import result

    raw = run((1_000, 10_000) if quick else (1_000, 10_000, 100_000), say)
    out = []
    for size in raw["sizes"]:
        n = f"{size['blocks'] // 1000}k"
        big = size["blocks"] >= 100_000
        out.append(
            result(
                f"recall p50, {n} blocks (k = 5)",
                size["recall"]["p50_ms"],
                "ms",
                None,
                "value <= 5" if big else None,
            )
        )
        out.append(
            result(
                f"recall p95, {n} blocks (k = 5)",
                size["recall"]["p95_ms"],
                "ms",
                None,
                "value <= 20" if big else None,
            )
        )
    small, large = raw["small"], raw["large"]
    n = f"{large['blocks'] // 1000}k"
    delta = raw["open_with_delta"]
    out += [
        result(f"open the index, {n} blocks, no rebuild (this process)", large["open_ms"], "ms", None, "value <= 1000", digits=1),
        result(f"open the index and recall, {n} blocks, a fresh process", raw["open_cold_process_s"] * 1e3, "ms", None, "value <= 1000", digits=0),
        result(f"open the index, {n} blocks and {delta['delta_blocks']:,} of delta", delta["open_ms"], "ms", None, "value <= 1000", digits=1),
        result(f"index update of one install (30 blocks), {n} vs 1k blocks", large["install_update_ms"], "ms", small["install_update_ms"], "ratio <= 1.5", digits=2),
        result(f"compaction of {n} blocks, per block of the delta that triggers it", raw["compaction"]["amortised_ms_per_block"], "ms", None, None),
    ]  # fmt: skip
    ours = raw["engines"].get("query-time BM25 (this index)", {}).get("p50_ms")
    for name, row in raw["engines"].items():
        if "p50_ms" in row:
            out.append(result(f"engine p50, {n} documents: {name}", row["p50_ms"], "ms", ours, None))
    return out


def print_report(result: dict[str, Any]) -> None:
    console = kit.report_console(110)
    small, large = result["small"], result["large"]
    out = kit.table(
        "recall, one query at a time (k = 5)",
        "measure",
        f"{small['blocks']:,} blocks",
        f"{large['blocks']:,} blocks",
        "goal",
    )
    out.add_row(
        "recall p50", f"{small['recall']['p50_ms']:.2f} ms", f"{large['recall']['p50_ms']:.2f} ms", "<= 5 ms"
    )
    out.add_row(
        "recall p95", f"{small['recall']['p95_ms']:.2f} ms", f"{large['recall']['p95_ms']:.2f} ms", "<= 20 ms"
    )
    out.add_row(
        "open (this process, no rebuild)",
        f"{small['open_ms']:.0f} ms",
        f"{large['open_ms']:.0f} ms",
        "<= 1 s",
    )
    out.add_row(
        "open + first recall, fresh process", "", f"{result['open_cold_process_s'] * 1e3:.0f} ms", "<= 1 s"
    )
    delta = result["open_with_delta"]
    out.add_row(
        f"open with {delta['delta_blocks']:,} blocks of delta", "", f"{delta['open_ms']:.0f} ms", "<= 1 s"
    )
    out.add_row(
        "index update of one install (30 blocks)",
        f"{small['install_update_ms']:.2f} ms",
        f"{large['install_update_ms']:.2f} ms",
        f"O(batch): ratio {result['install_update_ratio']}",
    )
    comp = result["compaction"]
    out.add_row(
        "compaction (whole index)",
        "",
        f"{comp['seconds']:.2f} s",
        f"{comp['amortised_ms_per_block']} ms/block amortised",
    )
    console.print(out)
    engines = kit.table(
        f"engines over the same {large['blocks']:,} documents (top 25)", "engine", "p50 ms", "p95 ms", "note"
    )
    for name, row in result["engines"].items():
        if "skipped" in row:
            engines.add_row(name, "", "", row["skipped"])
        else:
            note = f"index build {row['build_s']} s" if "build_s" in row else ""
            engines.add_row(name, f"{row['p50_ms']:.2f}", f"{row['p95_ms']:.2f}", note)
    console.print(engines)


def main(args: argparse.Namespace) -> int:
    """The benchmark on its own, as a table: `python -m dagmem.bench._recall [--quick]`."""
    sizes = (1_000, 10_000) if getattr(args, "quick", False) else (1_000, 10_000, 100_000)
    return kit.cli(args, lambda _quick, progress: run(sizes, progress), print_report, elapsed=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="recall's speed, beside its goals")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    sys.exit(main(parser.parse_args()))
