"""The writer's side of the recall index: one delta line per install, O(batch); snapshots now and then.

`after_install` runs in the write core right after a transaction is installed, under the workspace lock.
It indexes only the blocks the transaction added or changed (the old file's blocks are known by digest) and
appends them to the delta log of the newest snapshot. A crash before that line (fault site
`recall:index`) leaves the log one install behind: readers replay the missing txlog lines from the files
when they open, and the next install repairs the log the same way before it appends its own line.

A writer process remembers what it last wrote (`_Writer`): the snapshot, the delta's size, the txlog seq
it reflects, and, once it has written a snapshot itself, the whole index in memory. One `stat` of the
delta and its directory, and the seq of the install, tell whether that is still true (no other process
wrote meanwhile); if so, an install neither lists snapshots nor reads the log's tail, and a compaction
needs no reopening of the index (which parsed the whole delta). Anything else takes the path a new
process takes, which repairs from the files.

When the delta outgrows a sixteenth of its snapshot (and COMPACT_MIN), the index is compacted into a new
snapshot: O(index), at most once per 1/16 growth, so O(batch) amortised, and what a reader must apply on
open stays bounded (bench/_recall.py measures both).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from .. import faults
from ..durable import TxLog
from ..format import ArchiveRecord, TopicFormatError, TxRecord
from ._delta import append_line, append_record, encode, last_record
from ._embed import MODEL
from ._entries import ArchiveSources, Entry, block_digest, entries_of_topic, topic_of, vectorise
from ._index import K1, B, Key, RecallIndex, make_record, recall_root
from ._snapshot import VERSION, Arrays, Snapshot, list_snapshots, remove_old_snapshots, write_snapshot

__all__ = ["after_install", "compact", "delta_limit", "index_arrays"]

log = logging.getLogger("dagmem.recall")

COMPACT_MIN = 8 << 20  # bytes of delta before a compaction is considered (a reader applies it in 0.3 s)
COMPACT_RATIO = 16  # ... and the delta must exceed 1/16 of the snapshot (bounds a reader's open)

Stamp = tuple[int, int, int]  # (inode, size) of delta.jsonl and the mtime of the snapshots' directory


@dataclass
class _Writer:
    """What this process last wrote to one workspace's index (see the module's doc)."""

    snapshot: Path
    seq: int  # the txlog seq the delta reflects
    stamp: Stamp
    limit: int  # delta bytes past which a compaction is due
    index: RecallIndex | None  # the index as of `seq`, held once this process wrote the snapshot


_writers: dict[Path, _Writer] = {}  # the most recently written last (a process may serve many homes)
_writers_lock = threading.Lock()
_WRITERS_MAX = 8  # workspaces remembered at once; one forgotten takes the path a new process takes


def _stamp(snapshot: Path) -> Stamp | None:
    try:
        delta = os.stat(snapshot / "delta.jsonl")
        root = os.stat(snapshot.parent)
    except OSError:
        return None
    return (delta.st_ino, delta.st_size, root.st_mtime_ns)


def delta_limit(snapshot: Path) -> int:
    """The delta bytes past which the snapshot at `snapshot` is due for a compaction."""
    size = sum(
        (snapshot / name).stat().st_size for name in ("docs.jsonl", "vec.npy") if (snapshot / name).exists()
    )
    return max(COMPACT_MIN, size // COMPACT_RATIO)


def _remember(memory: Path, writer: _Writer | None) -> None:
    with _writers_lock:
        _writers.pop(memory, None)
        if writer is not None:
            _writers[memory] = writer
            while len(_writers) > _WRITERS_MAX:
                del _writers[next(iter(_writers))]


def after_install(
    memory: Path,
    record: TxRecord,
    *,
    start: int,
    end: int,
    before: Mapping[str, bytes | None],
    records: Sequence[ArchiveRecord],
    fsync: bool,
) -> None:
    """Index transaction `record` (txlog bytes [start, end)), just installed; `before` holds the old
    bytes of the files it touched. Never raises for an index problem: the index is a cache, and readers
    replay what it lacks."""
    with _writers_lock:  # taken out while it is updated: a crash half-way leaves nothing remembered
        known = _writers.pop(memory, None)
    try:
        faults.hit("recall:index")
        writer: _Writer | None
        if known is not None and known.seq == record.seq - 1 and _stamp(known.snapshot) == known.stamp:
            writer = _next(memory, known, record, start=start, end=end, before=before, records=records)
        else:
            writer = _after_install(
                memory, record, start=start, end=end, before=before, records=records, fsync=fsync
            )
        if writer is not None and writer.stamp[1] > writer.limit:
            writer = _compact(memory, writer.index, fsync=fsync)
        _remember(memory, writer)
    except Exception as exc:  # the install stands whatever happens here (a simulated death still propagates)
        log.warning("recall index not updated for %s (readers replay it from the files): %s", record.tx, exc)


def _changes(
    memory: Path,
    record: TxRecord,
    index: RecallIndex | None,
    before: Mapping[str, bytes | None],
    records: Sequence[ArchiveRecord],
) -> dict[str, tuple[list[Key], list[Entry]] | None]:
    """Each topic file of `record` as it is now: its blocks' keys, and an entry (with its vector) for each
    block the index did not hold: the held `index` knows that, or else the file before the install."""
    lookup = ArchiveSources(memory, records)
    files: dict[str, tuple[list[Key], list[Entry]] | None] = {}
    for relpath, digest in record.files.items():
        if not relpath.startswith("topics/"):
            continue
        if digest is None:
            files[relpath] = None
            continue
        held = index.topic_keys(relpath) if index is not None else _keys(relpath, before.get(relpath))
        data = (memory / relpath).read_bytes()
        files[relpath] = entries_of_topic(
            relpath, topic_of(relpath, data), lookup, held.__contains__, vectorise_now=False
        )
    vectorise([entry for change in files.values() if change is not None for entry in change[1]])
    return files


def _next(
    memory: Path,
    known: _Writer,
    record: TxRecord,
    *,
    start: int,
    end: int,
    before: Mapping[str, bytes | None],
    records: Sequence[ArchiveRecord],
) -> _Writer:
    """The install after the one this process indexed last: append its line where the log ends."""
    index = known.index
    files = _changes(memory, record, index, before, records)
    line = record.to_line()
    sha = hashlib.sha256(line).hexdigest() if len(line) == end - start else None
    body = make_record(record, start, end, files, TxLog(memory / ".dagmem" / "txlog.jsonl"), sha=sha)
    size = append_line(known.snapshot / "delta.jsonl", encode(body), known.stamp[1])
    if index is not None:
        index.apply(files, seq=record.seq, start=start, end=end, sha=str(body["sha"]), tx=record.tx)
    return _Writer(known.snapshot, record.seq, (known.stamp[0], size, known.stamp[2]), known.limit, index)


def _after_install(
    memory: Path,
    record: TxRecord,
    *,
    start: int,
    end: int,
    before: Mapping[str, bytes | None],
    records: Sequence[ArchiveRecord],
    fsync: bool,
) -> _Writer | None:
    """An install in a process that knows nothing yet of the index (or no longer trusts what it knew)."""
    root = recall_root(memory)
    snapshots = list_snapshots(root)
    if not snapshots:
        if record.seq != 1:
            return _compact(memory, None, fsync=fsync)  # no index yet for an older workspace: build it once
        write_snapshot(root, Snapshot.empty().meta, Snapshot.empty().arrays, fsync=fsync)
        snapshots = list_snapshots(root)
    path = snapshots[0][1]
    delta = path / "delta.jsonl"
    last, _size = last_record(delta)
    held: RecallIndex | None = None
    if last is None:  # a delta with nothing to apply yet: the writer holds the index from here on
        held = RecallIndex(memory, Snapshot.load(path))
    indexed = int(last["seq"]) if last is not None else held.seq if held is not None else 0
    if indexed != record.seq - 1:
        # A crash between an install and its index line: index from the files what the log lacks
        # (this install included, as it is in place), as a reader would.
        held = RecallIndex.open(memory)
        repair = held.replay_record()
        if held.snapshot.path != path:
            return _compact(memory, None, fsync=fsync)
        if repair is not None:
            append_record(delta, repair)
        held.replayed, held.replayed_to = {}, None
    else:
        files = _changes(memory, record, held, before, records)
        body = make_record(record, start, end, files, TxLog(memory / ".dagmem" / "txlog.jsonl"))
        append_record(delta, body)
        if held is not None:
            held.apply(files, seq=record.seq, start=start, end=end, sha=str(body["sha"]), tx=record.tx)
    stamp = _stamp(path)
    return None if stamp is None else _Writer(path, record.seq, stamp, delta_limit(path), held)


def _keys(path: str, data: bytes | None) -> set[Key]:
    if data is None:
        return set()
    try:
        topic = topic_of(path, data)
    except (TopicFormatError, UnicodeDecodeError):
        return set()
    return {(block.id, block_digest(block)) for block in topic.blocks}


def compact(memory: Path, *, fsync: bool) -> Path:
    """Write the whole index, as of the txlog now, as a new snapshot; drop all but the last two."""
    writer = _compact(memory, None, fsync=fsync)
    _remember(memory, writer)
    return writer.snapshot


def _compact(memory: Path, index: RecallIndex | None, *, fsync: bool) -> _Writer:
    """Write `index` (the writer's own, or the index opened now) as a snapshot; the writer then holds the
    snapshot's index, with an empty delta, as its own."""
    if index is None:
        index = RecallIndex.open(memory)
    meta = {
        "version": VERSION,
        "model": MODEL,
        "seq": index.seq,
        "tx": index.tx,
        "txlog_start": index.txlog_start,
        "txlog_end": index.txlog_end,
        "txlog_sha": index.txlog_sha,
    }
    root = recall_root(memory)
    path = write_snapshot(root, meta, index_arrays(index), fsync=fsync)
    remove_old_snapshots(root)
    log.info("recall index compacted: %d blocks at txlog seq %d", index.live, index.seq)
    fresh = RecallIndex(memory, Snapshot.load(path))
    stamp = _stamp(path)
    assert stamp is not None  # just written, under the lock
    return _Writer(path, fresh.seq, stamp, delta_limit(path), fresh)


def index_arrays(index: RecallIndex) -> Arrays:
    """The live documents of `index` as snapshot arrays. Base rows are copied without parsing them;
    vocabulary, topics and sessions keep their snapshot ids and grow at the end."""
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
    news = [_dumps(entry.to_json(vector=False)) for entry in delta_entries]
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
    dl = index.dl_all[rows].astype(np.float32)
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
        post_w=_tf_part(tf_all, dl[row_all]),
        topics=topics,
        topic=topic.astype(np.int32),
        sessions=sessions,
        nb_key=nb_key[order],
        nb_row=nb_row[order].astype(np.int32),
        row_span=index.spans()[rows],
    )


def _tf_part(tf: npt.NDArray[np.float32], dl: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """BM25's term-frequency part of each posting, with the average length of these documents."""
    avgdl = float(dl.mean()) if len(dl) else 1.0
    part = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / max(avgdl, 1e-9)))
    return part.astype(np.float32)


def _dumps(body: object) -> bytes:
    import json

    return (json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
