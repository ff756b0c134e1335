"""A compaction streams its snapshot (docs and vectors copied between the files in the kernel, postings a
chunk of terms at a time) yet writes the very bytes the whole-array code wrote: that code (main at
cb70b7b) is kept here, in the test only, and both write the same index, file by file, on tmpfs and on
the work disk, with the kernel's copy and each fallback, in chunks of a few rows. And a writer drops
its old index before it loads the snapshot it compacted into."""

from __future__ import annotations

import errno
import hashlib
import itertools
import json
import os
import shutil
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from dagmem import FileSessionStore
from dagmem.memory.recall import RecallIndex
from dagmem.memory.recall import _arrays as arrays_module
from dagmem.memory.recall import _update as update
from dagmem.memory.recall._arrays import write_index
from dagmem.memory.recall._embed import DIM, MODEL
from dagmem.memory.recall._entries import Entry, Source
from dagmem.memory.recall._index import K1, B
from dagmem.memory.recall._snapshot import VERSION, Arrays, Snapshot, block_key, write_meta
from dagmem.memory.writing import write_home

# -- main's compaction, kept to compare with ------------------------------------------------------------


def old_index_arrays(index: RecallIndex) -> Arrays:
    """main's (cb70b7b) `_arrays.index_arrays`, verbatim but for BM25's average length (`_old_tf_part`)."""
    base = index.snapshot.arrays
    alive = index.alive
    rows = np.flatnonzero(alive)
    remap = np.full(index.size, -1, np.int64)
    remap[rows] = np.arange(len(rows))
    n0 = index.n0
    base_rows = rows[rows < n0]
    delta_entries = [index.delta.entries[int(r) - n0] for r in rows[rows >= n0]]

    # Base documents are copied a run of consecutive live rows at a time (a run per dead row, not a piece
    # per row): the snapshot's docs.jsonl is most of what a compaction writes.
    base_off = np.asarray(base.doc_off, dtype=np.int64)
    breaks = np.flatnonzero(np.diff(base_rows) != 1) + 1
    firsts = base_rows[np.concatenate([[0], breaks])] if len(base_rows) else base_rows
    lasts = base_rows[np.concatenate([breaks - 1, [len(base_rows) - 1]])] if len(base_rows) else base_rows
    pieces = [
        bytes(base.docs[int(base_off[a]) : int(base_off[b + 1])]) for a, b in zip(firsts, lasts, strict=True)
    ]
    news = [_old_dumps(entry.to_json(vector=False)) for entry in delta_entries]
    lengths = np.concatenate(
        [base_off[base_rows + 1] - base_off[base_rows], np.array([len(p) for p in news], np.int64)]
    )
    pieces += news
    doc_off = np.zeros(len(lengths) + 1, np.int64)
    doc_off[1:] = np.cumsum(lengths)
    full, coarse = index.delta.stacked()
    delta_rows = rows[rows >= n0] - n0
    vec = np.concatenate([np.asarray(base.vec[base_rows]), full[delta_rows]]).astype(np.float16)
    coarse_all = np.concatenate([np.asarray(base.coarse[base_rows]), coarse[delta_rows]]).astype(np.float32)

    terms = list(base.terms)
    term_ids = dict(index.term_ids)
    offsets = np.asarray(base.post_off, dtype=np.int64)
    counts = offsets[1:] - offsets[:-1]
    post_term = [np.repeat(np.arange(len(base.terms), dtype=np.int64), counts)]
    post_row = [np.asarray(base.post_doc, dtype=np.int64)]
    post_tf = [np.asarray(base.post_tf, dtype=np.float32)]
    # The delta's postings in one pass (a numpy array per word cost more than the rest of a compaction).
    counts_delta: list[int] = []
    for word, pairs in index.delta.postings.items():
        tid = term_ids.get(word)
        if tid is None:
            tid = term_ids[word] = len(terms)
            terms.append(word)
        counts_delta.append(len(pairs))
    flat = np.fromiter(
        itertools.chain.from_iterable(itertools.chain.from_iterable(index.delta.postings.values())),
        dtype=np.int64,
        count=2 * sum(counts_delta),
    ).reshape(-1, 2)
    delta_terms = [term_ids[word] for word in index.delta.postings]
    post_term.append(np.repeat(np.array(delta_terms, dtype=np.int64), counts_delta))
    post_row.append(flat[:, 0])
    post_tf.append(flat[:, 1].astype(np.float32))
    term_all, row_all, tf_all = np.concatenate(post_term), np.concatenate(post_row), np.concatenate(post_tf)
    keep = alive[row_all]
    term_all, row_all, tf_all = term_all[keep], remap[row_all[keep]], tf_all[keep]
    # By term, then row: within a term the base's rows come first, ascending (as written), then the
    # delta's, ascending (rows are added in order, and `remap` keeps order), so a stable sort by term
    # alone gives that order (and runs on nearly sorted data).
    order = np.argsort(term_all, kind="stable")
    term_all, row_all, tf_all = term_all[order], row_all[order], tf_all[order]
    dl = index.dl_of(rows).astype(np.float32)
    post_off = np.zeros(len(terms) + 1, np.int64)
    post_off[1:] = np.cumsum(np.bincount(term_all, minlength=len(terms)))

    topics = list(base.topics)
    topic_ids = dict(index.topic_ids)
    topic = np.concatenate([np.asarray(base.topic)[base_rows], np.zeros(len(delta_entries), np.int32)])
    for i, entry in enumerate(delta_entries):
        tid = topic_ids.get(entry.topic)
        if tid is None:
            tid = topic_ids[entry.topic] = len(topics)
            topics.append(entry.topic)
        topic[len(base_rows) + i] = tid

    # Session indices are the index's own (the snapshot's, then those delta entries added): keep them.
    sessions = list(index.sessions)
    nb_alive = alive[np.asarray(base.nb_row, dtype=np.int64)] if len(base.nb_row) else np.zeros(0, bool)
    keys = [np.asarray(base.nb_key)[nb_alive]]
    nb_rows = [remap[np.asarray(base.nb_row, dtype=np.int64)[nb_alive]]]
    extra = [
        ((index.session_ids[source.session] << 32) | int(source.seq), len(base_rows) + i)
        for i, entry in enumerate(delta_entries)
        for source in entry.sources
        if source.seq is not None
    ]
    keys.append(np.array([key for key, _row in extra], np.int64))
    nb_rows.append(np.array([row for _key, row in extra], np.int64))
    nb_key, nb_row = np.concatenate(keys), np.concatenate(nb_rows)
    order = np.argsort(nb_key, kind="stable")
    # Block ids of the live rows, sorted (the block-id table: a successor's row without a scan).
    ids = [entry.block_id for entry in (index.entry(int(row)) for row in rows)]
    bid_key = np.array([block_key(block_id) for block_id in ids], np.int64)
    bid_order = np.argsort(bid_key, kind="stable")
    return Arrays(
        docs=b"".join(pieces),
        doc_off=doc_off,
        vec=vec.reshape(-1, full.shape[1]),
        coarse=coarse_all.reshape(-1, coarse.shape[1]),
        dl=dl,
        terms=terms,
        post_off=post_off,
        post_doc=row_all.astype(np.int32),
        post_tf=tf_all,
        post_w=_old_tf_part(tf_all, dl[row_all], dl),
        topics=topics,
        topic=topic.astype(np.int32),
        sessions=sessions,
        nb_key=nb_key[order],
        nb_row=nb_row[order].astype(np.int32),
        row_span=index.spans_of(rows),
        bid_key=bid_key[bid_order],
        bid_row=bid_order.astype(np.int32),
    )


def _old_tf_part(
    tf: npt.NDArray[np.float32], lengths: npt.NDArray[np.float32], dl: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """BM25's term-frequency part of each posting (its document's length in `lengths`), with the average
    length of the documents `dl` (cb70b7b averaged the postings' lengths; snapshot version 2 does not)."""
    avgdl = float(dl.mean()) if len(dl) else 1.0
    part = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * lengths / max(avgdl, 1e-9)))
    return part.astype(np.float32)


def _old_dumps(body: object) -> bytes:
    return (json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def old_write_snapshot(root: Path, meta: dict[str, Any], arrays: Arrays) -> Path:
    """main's (cb70b7b) `_snapshot.write_snapshot` without fsync, verbatim otherwise but for meta.json,
    which now holds each file's checksum (`write_meta`)."""
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"snap-{int(meta['seq']):08d}"
    temp = root / f".{final.name}.{os.getpid()}.tmp"
    temp.mkdir()
    files: dict[str, Any] = {
        "docs.off.npy": arrays.doc_off,
        "vec.npy": arrays.vec,
        "coarse.npy": arrays.coarse,
        "dl.npy": arrays.dl,
        "post_off.npy": arrays.post_off,
        "post_doc.npy": arrays.post_doc,
        "post_tf.npy": arrays.post_tf,
        "post_w.npy": arrays.post_w,
        "topic.npy": arrays.topic,
        "nb_key.npy": arrays.nb_key,
        "nb_row.npy": arrays.nb_row,
        "row_span.npy": arrays.row_span,
        "bid_key.npy": arrays.bid_key,
        "bid_row.npy": arrays.bid_row,
    }
    for name, value in files.items():
        np.save(temp / name, np.ascontiguousarray(value), allow_pickle=False)
    (temp / "docs.jsonl").write_bytes(bytes(arrays.docs))
    for name, items in (("terms.txt", arrays.terms), ("topics.txt", arrays.topics)):
        (temp / name).write_text("".join(f"{item}\n" for item in items), encoding="utf-8")
    (temp / "sessions.txt").write_text("".join(f"{s}\n" for s in arrays.sessions), encoding="utf-8")
    (temp / "delta.jsonl").write_bytes(b"")
    write_meta(temp, meta, arrays.n)
    os.replace(temp, final)
    return final


# -- an index with a base snapshot and a delta ------------------------------------------------------------

WORDS = (
    "lighthouse keeper harbour boat kettle descaling garden tomato bicycle ferry lantern "
    "café naïve 漢字 emoji🙂 sunrise painting door blue cat lamp oil nine"
).split()


class _Maker:
    """Entries with seeded text (a unique word each, so some terms lose all their live postings), vectors
    and citations."""

    def __init__(self, seed: int) -> None:
        self.n = 0
        self.rng = np.random.default_rng(seed)

    def entry(self, topic: str, session: str, *extra: str) -> Entry:
        n, self.n = self.n, self.n + 1
        words = [WORDS[int(i)] for i in self.rng.integers(0, len(WORDS), int(self.rng.integers(3, 12)))]
        text = " ".join([*words, f"item{n}", *extra])
        sources = (
            Source(session, f"a{n}", f"n{n}", "user", 1_777_600_000.0 + n, n % 97, text[:40]),
            Source(session, f"b{n}", None, None, None, None, ""),  # a dangling citation: no seq
        )
        vector = self.rng.standard_normal(DIM).astype(np.float16)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        return Entry(topic, f"b-{n:06x}", digest, text, "2026-05-01", sources, vector)


def _meta(index: RecallIndex) -> dict[str, Any]:
    return {
        "version": VERSION,
        "model": MODEL,
        "seq": index.seq,
        "tx": index.tx,
        "txlog_start": 0,
        "txlog_end": 0,
        "txlog_sha": "",
    }


def _base(memory: Path, maker: _Maker) -> RecallIndex:
    (memory / ".dagmem").mkdir(parents=True)
    index = RecallIndex(memory, Snapshot.empty())
    for n in range(240):
        index._add(maker.entry(f"topics/t{n // 12}.md", f"s{n // 50}"))
    return index


def _delta(index: RecallIndex, maker: _Maker, round_: int) -> None:
    """Two installs: base topics rewritten (dead rows, new blocks in old topics) and one deleted, new
    topics citing new sessions with new words; then a topic of the first install rewritten (dead delta
    rows)."""
    files: dict[str, Any] = {}
    for t in (1, 4, 7):
        path = f"topics/t{t}.md"
        keep = sorted(index.topic_keys(path))[3:]
        new = [maker.entry(path, f"s{t}", f"reworded{round_}") for _ in range(2)]
        files[path] = (keep + [e.key for e in new], new)
    files[f"topics/t{10 + round_}.md"] = None
    for t in range(3):
        path = f"topics/new{round_}-{t}.md"
        new = [maker.entry(path, f"new-session-{round_}-{t}", f"zebra{round_}x{t}") for _ in range(5)]
        files[path] = ([e.key for e in new], new)
    index.apply(files, seq=index.seq + 1, start=0, end=0, sha="", tx=f"tx{round_}a")
    path = f"topics/new{round_}-0.md"
    keep = sorted(index.topic_keys(path))[2:]
    new = [maker.entry(path, "s0", "late")]
    index.apply(
        {path: (keep + [e.key for e in new], new)},
        seq=index.seq + 1,
        start=0,
        end=0,
        sha="",
        tx=f"tx{round_}b",
    )


def _same_files(old: Path, new: Path) -> None:
    names = sorted(p.name for p in old.iterdir())
    assert names == sorted(p.name for p in new.iterdir())
    assert len(names) == 20  # every file of a snapshot (see _snapshot.py)
    for name in names:
        if name == "meta.json":  # each file's inode and stamp are the file's own (see _snapshot.py)
            a, b = (json.loads((where / name).read_bytes()) for where in (old, new))
            assert a.keys() == b.keys()
            assert set(a.pop("written")) == set(b.pop("written"))
            a.pop("sum"), b.pop("sum")
            assert a == b
            continue
        assert (old / name).read_bytes() == (new / name).read_bytes(), name


@pytest.fixture(params=["work-disk", "tmpfs"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    if request.param == "work-disk":
        yield tmp_path
        return
    if not Path("/dev/shm").is_dir():
        pytest.skip("no tmpfs at /dev/shm")
    scratch = Path(os.environ.get("TMPDIR_SHM", "/dev/shm")) / f"dagmem-test-{os.getpid()}-{tmp_path.name}"
    scratch.mkdir()
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _unsupported(*_args: object) -> int:
    raise OSError(errno.EXDEV, "not across these files")


@pytest.mark.parametrize("tiny", [False, True], ids=["chunks", "tiny-chunks"])
@pytest.mark.parametrize("copy", ["copy_file_range", "sendfile", "reads"])
def test_a_streamed_compaction_writes_the_whole_array_codes_bytes(
    where: Path, copy: str, tiny: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: dict[str, int] = {}

    def spy(name: str) -> Any:
        real = getattr(os, name)

        def call(*args: Any) -> Any:
            calls[name] = calls.get(name, 0) + 1
            return real(*args)

        return call

    monkeypatch.setattr(os, "pread", spy("pread"))
    monkeypatch.setattr(os, "sendfile", spy("sendfile") if copy != "reads" else _unsupported)
    monkeypatch.setattr(
        os, "copy_file_range", spy("copy_file_range") if copy == "copy_file_range" else _unsupported
    )
    if tiny:  # chunks of a few rows, postings and bytes: every boundary case a real index hits rarely
        monkeypatch.setattr(arrays_module, "CHUNK_ROWS", 3)
        monkeypatch.setattr(arrays_module, "CHUNK_POSTINGS", 5)
        monkeypatch.setattr(arrays_module, "CHUNK_BYTES", 100)
    memory, maker = where / "memory", _Maker(1)
    index = _base(memory, maker)
    # No base rows yet (the empty snapshot): every row comes from memory.
    first = old_write_snapshot(where / "old0", _meta(index), old_index_arrays(index))
    _same_files(first, write_index(where / "new0", _meta(index), index, fsync=False))
    for round_ in (1, 2):  # a base written by the old code, then one written by the new
        index = RecallIndex(memory, Snapshot.load(first))
        base_sessions = len(index.sessions)
        _delta(index, maker, round_)
        assert not index.alive[: index.n0].all()  # dead base rows
        assert not index.alive[index.n0 :].all()  # dead delta rows
        assert len(index.sessions) > base_sessions  # new sessions
        assert any(word not in index.term_ids for word in index.delta.postings)  # new terms
        assert any(e.topic not in index.topic_ids for e in index.delta.entries)  # new topics
        old = old_write_snapshot(where / f"old{round_}", _meta(index), old_index_arrays(index))
        new = write_index(where / f"new{round_}", _meta(index), index, fsync=round_ == 2)
        _same_files(old, new)
        first = new
    copied = calls.get(copy if copy != "reads" else "pread", 0)
    assert copied, calls  # the way under test was taken
    if copy != "copy_file_range":
        assert "copy_file_range" not in calls


def _write(home: Path, text: str, recall: update.RecallUpdater) -> None:
    FileSessionStore(home, fsync=False).append("s", "user", text)
    write_home(home, force=True, recall=recall)


def test_a_writer_drops_its_old_index_before_it_loads_the_compacted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(update, "COMPACT_MIN", 3_000)  # a compaction every few installs
    home = tmp_path / "home"
    memory = home / "memory"
    writer = update.RecallUpdater()  # this process's writer, kept across its passes
    _write(home, "fact 0: the lighthouse keeper paints the door blue", writer)
    held = writer.held
    assert held is not None
    before, alive = weakref.ref(held), writer.snapshot
    del held
    loads: list[tuple[Path, bool]] = []

    class Spy(Snapshot):
        @classmethod
        def load(cls, path: Path, *, verify: bool = True) -> Snapshot:
            loads.append((path, before() is None))
            return Snapshot.load(path, verify=verify)

    monkeypatch.setattr(update, "Snapshot", Spy)
    for i in range(1, 12):
        _write(home, f"fact {i}: the lighthouse keeper number {i} oils the lamp", writer)
        if writer.snapshot != alive:
            break
    compacted = writer.snapshot
    assert compacted != alive  # it compacted, from the index it held
    assert loads
    assert loads[-1] == (compacted, True)  # ... which was gone when the new one was loaded
    index = RecallIndex.open(memory)
    assert any("oils the lamp" in entry.text for _row, entry in index.entries())


def test_bm25_scores_a_document_the_same_before_and_after_it_is_compacted(tmp_path: Path) -> None:
    """A delta row's BM25 uses the live documents' average length; a compacted row's precomputed part must
    use the same one (the postings' average weights long documents more, and ranked them lower)."""
    memory = tmp_path / "memory"
    index = _base(memory, _Maker(7))  # every row in the delta, lengths of 4 to 13 terms
    lengths = index.dl_of(np.flatnonzero(index.alive))
    assert lengths.min() < lengths.max()  # the two averages differ only when lengths do
    words = ["lighthouse", "keeper", "blue", "漢字", "item5"]
    before = index.bm25(words)[index.alive]
    path = write_index(memory / "snaps", _meta(index), index, fsync=False)
    compacted = RecallIndex(memory, Snapshot.load(path))
    after = compacted.bm25(words)[compacted.alive]
    assert before.any()
    np.testing.assert_allclose(after, before, rtol=1e-5)
