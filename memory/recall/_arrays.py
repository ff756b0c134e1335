"""A compaction: the live documents of a `RecallIndex` (its snapshot's rows and its delta's) written as a
new snapshot, streamed file by file, so that its memory is O(delta) beyond the index itself (plus a few
small arrays of a row each) rather than O(index): base documents and vectors are copied between the files
in the kernel (a run of consecutive live rows at a time), base postings are read, filtered and written a
chunk of terms at a time, and no file of the old snapshot is read through its mapping (whose pages would
count as this process's memory). The bytes are those of writing the whole arrays with `np.save`."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ._embed import MODEL
from ._index import K1, B, RecallIndex
from ._snapshot import (
    VERSION,
    Arrays,
    FileOut,
    NpyOut,
    Snapshot,
    begin_snapshot,
    block_key,
    finish_snapshot,
    npy_layout,
    open_regular,
    write_lines,
)

__all__ = ["index_arrays", "write_index"]

CHUNK_ROWS: Final = 8192  # rows of vectors per write
CHUNK_POSTINGS: Final = 1 << 18  # base postings read per step (a term's postings are never split)
CHUNK_BYTES: Final = 1 << 20  # new documents' bytes per write


def write_index(root: Path, meta: dict[str, Any], index: RecallIndex, *, fsync: bool) -> Path:
    """Write the live documents of `index` as a snapshot under `root` (see `write_snapshot` for how it
    is made whole). Base rows are copied without parsing them; vocabulary, topics and sessions keep
    their snapshot ids and grow at the end."""
    temp, final = begin_snapshot(root, int(meta["seq"]))
    with contextlib.ExitStack() as files:
        base = _Base(index, files)
        rows = np.flatnonzero(index.alive)
        base_rows = rows[: int(np.searchsorted(rows, index.n0))]
        delta_rows = rows[len(base_rows) :] - index.n0
        remap = np.full(index.size, -1, np.int32)  # a snapshot's rows are int32
        remap[rows] = np.arange(len(rows))
        runs = _runs(base_rows)
        entries = [index.delta.entries[int(r)] for r in delta_rows]
        np.save(temp / "docs.off.npy", _write_docs(temp / "docs.jsonl", base, base_rows, runs, entries))
        full, coarse = index.delta.stacked()
        _write_rows(
            temp / "vec.npy", base.rows("vec.npy", base.arrays.vec), runs, full[delta_rows], np.float16
        )
        _write_rows(
            temp / "coarse.npy",
            base.rows("coarse.npy", base.arrays.coarse),
            runs,
            coarse[delta_rows],
            np.float32,
        )
        dl = index.dl_of(rows).astype(np.float32)
        np.save(temp / "dl.npy", dl)
        terms = _write_postings(temp, index, base, remap, dl)
    write_lines(temp / "terms.txt", itertools.chain(base.arrays.terms, terms))
    topic, topics = _topics(index, base_rows, entries)
    np.save(temp / "topic.npy", topic)
    write_lines(temp / "topics.txt", itertools.chain(base.arrays.topics, topics))
    write_lines(temp / "sessions.txt", index.sessions)  # the snapshot's, then those delta entries added
    nb_key, nb_row = _neighbours(index, remap, len(base_rows), entries)
    np.save(temp / "nb_key.npy", nb_key)
    np.save(temp / "nb_row.npy", nb_row)
    np.save(temp / "row_span.npy", index.spans_of(rows))
    bid_key, bid_row = _block_ids(index, remap, len(base_rows), entries)
    np.save(temp / "bid_key.npy", bid_key)
    np.save(temp / "bid_row.npy", bid_row)
    return finish_snapshot(temp, final, meta, len(rows), fsync=fsync)


def index_arrays(index: RecallIndex) -> Arrays:
    """The live documents of `index` as snapshot arrays in memory, as `write_index` writes them (for
    tests and benchmarks; O(index): a compaction streams them to files instead)."""
    meta = {"version": VERSION, "model": MODEL, "seq": 0, "tx": None, "txlog_start": 0, "txlog_end": 0}
    with tempfile.TemporaryDirectory(prefix="dagmem-arrays-") as scratch:
        loaded = Snapshot.load(write_index(Path(scratch), meta | {"txlog_sha": ""}, index, fsync=False))
        copies: dict[str, Any] = {
            name: np.array(value)
            for name, value in vars(loaded.arrays).items()
            if isinstance(value, np.ndarray)
        }
        return dataclasses.replace(loaded.arrays, **copies | {"docs": bytes(loaded.arrays.docs)})


class _Rows:
    """Rows of a base array: read from its snapshot file when it has one (`fd`, data at `offset`),
    else from memory."""

    def __init__(self, array: npt.NDArray[Any], fd: int = -1, offset: int = 0) -> None:
        self.array, self.fd, self.offset = array, fd, offset
        self.row_bytes = array.dtype.itemsize * int(np.prod(array.shape[1:], dtype=np.int64))

    def read(self, lo: int, hi: int) -> npt.NDArray[Any]:
        if self.fd < 0:
            return np.asarray(self.array[lo:hi])
        data = os.pread(self.fd, (hi - lo) * self.row_bytes, self.offset + lo * self.row_bytes)
        if len(data) != (hi - lo) * self.row_bytes:
            raise ValueError("a recall snapshot file is shorter than its header says")
        return np.frombuffer(data, self.array.dtype).reshape(hi - lo, *self.array.shape[1:])


class _Base:
    """The index's snapshot as a compaction reads it: its files, opened once (they close with `files`)."""

    def __init__(self, index: RecallIndex, files: contextlib.ExitStack) -> None:
        self.arrays = index.snapshot.arrays
        self.path = index.snapshot.path
        self.files = files

    def fd(self, name: str) -> int:
        assert self.path is not None
        return self.fd_of(self.path / name)

    def fd_of(self, path: Path) -> int:
        fd = open_regular(path)
        self.files.callback(os.close, fd)
        return fd

    def rows(self, name: str, array: npt.NDArray[Any]) -> _Rows:
        """`array`'s rows, from snapshot file `name` when that holds exactly `array`."""
        if self.path is None or not len(array):
            return _Rows(array)
        layout = npy_layout(self.path / name)
        if layout is None or layout[1] != array.dtype or layout[2] != array.shape:
            return _Rows(array)
        return _Rows(array, self.fd(name), layout[0])


def _runs(rows: npt.NDArray[np.int64]) -> list[tuple[int, int]]:
    """Runs of consecutive rows as (first, last + 1): a piece per dead row, not a piece per row."""
    if not len(rows):
        return []
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    firsts = rows[np.concatenate([[0], breaks])]
    lasts = rows[np.concatenate([breaks - 1, [len(rows) - 1]])]
    return [(int(a), int(b) + 1) for a, b in zip(firsts, lasts, strict=True)]


def _write_docs(
    path: Path, base: _Base, base_rows: npt.NDArray[np.int64], runs: list[tuple[int, int]], entries: list[Any]
) -> npt.NDArray[np.int64]:
    """docs.jsonl: the base's documents (most of what a compaction writes), then the delta's; returns
    the documents' byte offsets."""
    base_off = np.asarray(base.arrays.doc_off, dtype=np.int64)
    lengths = np.empty(len(base_rows) + len(entries), np.int64)
    lengths[: len(base_rows)] = base_off[base_rows + 1] - base_off[base_rows]
    with FileOut(path) as out:
        if runs:
            docs = base.arrays.docs
            src = -1 if base.path is None or isinstance(docs, bytes) else base.fd("docs.jsonl")
            view = memoryview(docs) if isinstance(docs, bytes) else docs.data
            for first, end in runs:
                start, stop = int(base_off[first]), int(base_off[end])
                if src >= 0:
                    out.copy(src, start, stop - start)
                else:
                    out.write(view[start:stop])
        pending = bytearray()
        for i, entry in enumerate(entries):
            piece = _dumps(entry.to_json(vector=False))
            lengths[len(base_rows) + i] = len(piece)
            pending += piece
            if len(pending) >= CHUNK_BYTES:
                out.write(pending)
                pending = bytearray()
        out.write(pending)
    doc_off = np.zeros(len(lengths) + 1, np.int64)
    doc_off[1:] = np.cumsum(lengths)
    return doc_off


def _write_rows(
    path: Path, base: _Rows, runs: list[tuple[int, int]], delta: npt.NDArray[Any], dtype: npt.DTypeLike
) -> None:
    """A per-row array: the base's live rows (copied between the files when the base has one), then the
    delta's rows, a chunk at a time."""
    with NpyOut(path, dtype, delta.shape[1:]) as out:
        for first, end in runs:
            if base.fd >= 0 and base.array.dtype == out.dtype and base.array.shape[1:] == out.tail:
                out.copy_rows(base.fd, base.offset + first * base.row_bytes, end - first)
                continue
            for lo in range(first, end, CHUNK_ROWS):
                out.append(base.read(lo, min(lo + CHUNK_ROWS, end)))
        for lo in range(0, len(delta), CHUNK_ROWS):
            out.append(delta[lo : lo + CHUNK_ROWS])


def _write_postings(
    temp: Path, index: RecallIndex, base: _Base, remap: npt.NDArray[np.int32], dl: npt.NDArray[np.float32]
) -> list[str]:
    """The postings, CSR by term and within a term by row (the base's rows as written, then the
    delta's: rows are added in order and `remap` keeps it); returns the terms new since the snapshot."""
    alive = index.alive
    base_terms = len(base.arrays.terms)
    new: list[str] = []
    # The delta's postings in one pass (a numpy array per word cost more than the rest of a compaction).
    postings = index.delta.postings
    ids = np.empty(len(postings), np.int64)
    for i, word in enumerate(postings):
        tid = index.term_ids.get(word)
        if tid is None:
            tid = base_terms + len(new)
            new.append(word)
        ids[i] = tid
    counts = np.fromiter(map(len, postings.values()), np.int64, count=len(postings))
    flat = np.fromiter(
        itertools.chain.from_iterable(itertools.chain.from_iterable(postings.values())),
        dtype=np.int64,
        count=2 * int(counts.sum()),
    ).reshape(-1, 2)
    keep = alive[flat[:, 0]]
    d_term = np.repeat(ids, counts)[keep]
    order = np.argsort(d_term, kind="stable")
    d_term, d_row, d_tf = d_term[order], remap[flat[keep, 0]][order], flat[keep, 1][order].astype(np.float32)
    del flat, keep, order

    terms = base_terms + len(new)
    live = np.zeros(terms, np.int64)  # live postings per term
    post_off = np.asarray(base.arrays.post_off, dtype=np.int64)
    docs = base.rows("post_doc.npy", base.arrays.post_doc)
    tfs = base.rows("post_tf.npy", base.arrays.post_tf)
    # Each posting's document length, in the order written: the one array of a posting each (4 bytes) a
    # compaction holds. Pages past the live postings are never touched.
    lengths = np.empty(int(post_off[-1]) + len(d_term), np.float32)
    done = 0
    with (
        NpyOut(temp / "post_doc.npy", np.int32) as out_doc,
        NpyOut(temp / "post_tf.npy", np.float32) as out_tf,
    ):
        for t0, t1 in _term_chunks(post_off, base_terms, terms):
            if t0 < base_terms:  # base terms: their base postings, live ones only, then the delta's
                lo, hi = int(post_off[t0]), int(post_off[t1])
                rows = docs.read(lo, hi)
                keep = alive[rows]
                # Terms numbered from t0 (int32, as rows are: a chunk's temporaries stay small).
                term = np.repeat(np.arange(t1 - t0, dtype=np.int32), np.diff(post_off[t0 : t1 + 1]))[keep]
                row, tf = remap[rows[keep]], tfs.read(lo, hi)[keep].astype(np.float32, copy=False)
                del rows, keep
            else:
                term, row, tf = np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.float32)
            d0, d1 = np.searchsorted(d_term, [t0, t1])
            if d1 > d0:  # by term, then as concatenated (a stable sort of nearly sorted data)
                term = np.concatenate([term, (d_term[d0:d1] - t0).astype(np.int32)])
                order = np.argsort(term, kind="stable")
                term = term[order]
                row = np.concatenate([row, d_row[d0:d1]])[order]
                tf = np.concatenate([tf, d_tf[d0:d1]])[order]
            live[t0:t1] = np.bincount(term, minlength=t1 - t0)
            del term
            out_doc.append(row)
            out_tf.append(tf)
            lengths[done : done + len(row)] = dl[row]
            done += len(row)
        tf_at = out_tf.data_offset
    # BM25's average length is the live documents' (as at query time, `sum_dl / live`), not the postings'.
    avgdl = max(float(dl.mean()) if len(dl) else 1.0, 1e-9)
    # BM25's term-frequency part of each posting, with that average length: the term frequencies are
    # read back from the file just written (the page cache), a chunk at a time.
    with NpyOut(temp / "post_w.npy", np.float32) as out_w:
        written = _Rows(np.zeros(0, np.float32), base.fd_of(temp / "post_tf.npy"), tf_at)
        for lo in range(0, done, CHUNK_POSTINGS):
            hi = min(lo + CHUNK_POSTINGS, done)
            tf = written.read(lo, hi)
            part = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * lengths[lo:hi] / avgdl))
            out_w.append(part.astype(np.float32))
    offsets = np.zeros(terms + 1, np.int64)
    offsets[1:] = np.cumsum(live)
    np.save(temp / "post_off.npy", offsets)
    return new


def _term_chunks(post_off: npt.NDArray[np.int64], base_terms: int, terms: int) -> Iterator[tuple[int, int]]:
    """[t0, t1) ranges of base terms holding about CHUNK_POSTINGS base postings (at least one term
    each), then the new terms in one range (only the delta's postings)."""
    t0 = 0
    while t0 < base_terms:
        t1 = int(np.searchsorted(post_off, post_off[t0] + CHUNK_POSTINGS, side="right")) - 1
        t1 = min(max(t1, t0 + 1), base_terms)
        yield t0, t1
        t0 = t1
    if terms > base_terms:
        yield base_terms, terms


def _topics(
    index: RecallIndex, base_rows: npt.NDArray[np.int64], entries: list[Any]
) -> tuple[npt.NDArray[np.int32], list[str]]:
    """Each row's topic id, and the topics new since the snapshot."""
    base = index.snapshot.arrays
    topic = np.zeros(len(base_rows) + len(entries), np.int32)
    topic[: len(base_rows)] = np.asarray(base.topic)[base_rows]
    new: dict[str, int] = {}
    for i, entry in enumerate(entries):
        tid = index.topic_ids.get(entry.topic)
        if tid is None:
            tid = new.setdefault(entry.topic, len(base.topics) + len(new))
        topic[len(base_rows) + i] = tid
    return topic, list(new)


def _neighbours(
    index: RecallIndex, remap: npt.NDArray[np.int32], base_live: int, entries: list[Any]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
    """Sorted (session index << 32 | seq) of every cited record of a live row, and that row."""
    base = index.snapshot.arrays
    nb_row = np.asarray(base.nb_row, dtype=np.int64)
    nb_alive = index.alive[nb_row] if len(nb_row) else np.zeros(0, bool)
    extra = [
        ((index.session_ids[source.session] << 32) | int(source.seq), base_live + i)
        for i, entry in enumerate(entries)
        for source in entry.sources
        if source.seq is not None
    ]
    keys = np.concatenate([np.asarray(base.nb_key)[nb_alive], np.array([k for k, _r in extra], np.int64)])
    rows = np.concatenate([remap[nb_row[nb_alive]], np.array([r for _k, r in extra], np.int64)])
    order = np.argsort(keys, kind="stable")
    return keys[order], rows[order].astype(np.int32)


def _block_ids(
    index: RecallIndex, remap: npt.NDArray[np.int32], base_live: int, entries: list[Any]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
    """Sorted block ids (as numbers) of every live row, and that row."""
    base = index.snapshot.arrays
    bid_row = np.asarray(base.bid_row, dtype=np.int64)
    alive = index.alive[bid_row] if len(bid_row) else np.zeros(0, bool)
    keys = np.concatenate(
        [np.asarray(base.bid_key)[alive], np.array([block_key(e.block_id) for e in entries], np.int64)]
    )
    rows = np.concatenate([remap[bid_row[alive]], np.arange(base_live, base_live + len(entries))])
    order = np.argsort(keys, kind="stable")
    return keys[order], rows[order].astype(np.int32)


def _dumps(body: object) -> bytes:
    return (json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
