"""The writer's side of the recall index: one delta line per install, O(batch); snapshots now and then.

`after_install` runs in the write core right after a transaction is installed, under the workspace lock.
It indexes only the blocks the transaction added or changed (the old file's blocks are known by digest) and
appends them to the delta log of the newest snapshot. A crash before that line (fault site
`recall:index`) leaves the log one install behind: readers replay the missing txlog lines from the files
when they open, and the next install repairs the log the same way before it appends its own line.

When the delta outgrows a sixteenth of its snapshot (and 2 MiB), the index is compacted into a new
snapshot: O(index), at most once per 1/16 growth, so O(batch) amortised (measured: 0.2 ms a block at
100,000), and what a reader must apply on open stays bounded (measured: under 1 s at 100,000).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from .. import faults
from ..durable import TxLog
from ..format import ArchiveRecord, TopicFormatError, TxRecord, render_block
from ._delta import append_record, last_record
from ._embed import MODEL
from ._entries import ArchiveSources, Entry, entries_of_topic, topic_of, vectorise
from ._index import K1, B, Key, RecallIndex, make_record, recall_root
from ._snapshot import VERSION, Arrays, Snapshot, list_snapshots, remove_old_snapshots, write_snapshot

__all__ = ["after_install", "compact", "index_arrays"]

log = logging.getLogger("dagmem.recall")

COMPACT_MIN = 2 << 20  # bytes of delta before a compaction is considered
COMPACT_RATIO = 16  # ... and the delta must exceed 1/16 of the snapshot (bounds a reader's open)


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
    try:
        faults.hit("recall:index")
        _after_install(memory, record, start=start, end=end, before=before, records=records, fsync=fsync)
    except Exception as exc:  # the install stands whatever happens here (a simulated death still propagates)
        log.warning("recall index not updated for %s (readers replay it from the files): %s", record.tx, exc)


def _after_install(
    memory: Path,
    record: TxRecord,
    *,
    start: int,
    end: int,
    before: Mapping[str, bytes | None],
    records: Sequence[ArchiveRecord],
    fsync: bool,
) -> None:
    root = recall_root(memory)
    snapshots = list_snapshots(root)
    if not snapshots:
        if record.seq != 1:
            compact(memory, fsync=fsync)  # no index yet for an older workspace: build it once
            return
        write_snapshot(root, Snapshot.empty().meta, Snapshot.empty().arrays, fsync=fsync)
        snapshots = list_snapshots(root)
    path = snapshots[0][1]
    delta = path / "delta.jsonl"
    last, _size = last_record(delta)
    indexed = int(last["seq"]) if last is not None else Snapshot.load(path).seq
    if indexed != record.seq - 1:
        # A crash between an install and its index line: index from the files what the log lacks
        # (this install included, as it is in place), as a reader would.
        index = RecallIndex.open(memory)
        repair = index.replay_record()
        if repair is not None and index.snapshot.path == path:
            append_record(delta, repair)
        elif index.snapshot.path != path:
            compact(memory, fsync=fsync)
            return
    else:
        lookup = ArchiveSources(memory, records)
        files: dict[str, tuple[list[Key], list[Entry]] | None] = {}
        for relpath, digest in record.files.items():
            if not relpath.startswith("topics/"):
                continue
            if digest is None:
                files[relpath] = None
                continue
            old = _keys(relpath, before.get(relpath))
            data = (memory / relpath).read_bytes()
            files[relpath] = entries_of_topic(
                relpath, topic_of(relpath, data), lookup, old.__contains__, vectorise_now=False
            )
        vectorise([entry for change in files.values() if change is not None for entry in change[1]])
        append_record(
            delta,
            make_record(record, start, end, files, TxLog(memory / ".dagmem" / "txlog.jsonl")),
        )
    if delta.stat().st_size > max(COMPACT_MIN, _snapshot_bytes(path) // COMPACT_RATIO):
        compact(memory, fsync=fsync)


def _keys(path: str, data: bytes | None) -> set[Key]:
    if data is None:
        return set()
    try:
        topic = topic_of(path, data)
    except (TopicFormatError, UnicodeDecodeError):
        return set()
    return {
        (block.id, hashlib.sha256(render_block(block).encode("utf-8", "surrogatepass")).hexdigest()[:16])
        for block in topic.blocks
    }


def _snapshot_bytes(path: Path) -> int:
    return sum((path / name).stat().st_size for name in ("docs.jsonl", "vec.npy") if (path / name).exists())


def compact(memory: Path, *, fsync: bool) -> Path:
    """Write the whole index, as of the txlog now, as a new snapshot; drop all but the last two."""
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
    return path


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

    pieces = [bytes(base.docs[int(base.doc_off[r]) : int(base.doc_off[r + 1])]) for r in base_rows]
    pieces += [_dumps(entry.to_json(vector=False)) for entry in delta_entries]
    doc_off = np.zeros(len(pieces) + 1, np.int64)
    doc_off[1:] = np.cumsum([len(p) for p in pieces]) if pieces else []
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
    for word, pairs in index.delta.postings.items():
        tid = term_ids.get(word)
        if tid is None:
            tid = term_ids[word] = len(terms)
            terms.append(word)
        array = np.array(pairs, dtype=np.int64)
        post_term.append(np.full(len(array), tid, np.int64))
        post_row.append(array[:, 0])
        post_tf.append(array[:, 1].astype(np.float32))
    term_all, row_all, tf_all = np.concatenate(post_term), np.concatenate(post_row), np.concatenate(post_tf)
    keep = alive[row_all]
    term_all, row_all, tf_all = term_all[keep], remap[row_all[keep]], tf_all[keep]
    order = np.lexsort((row_all, term_all))
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
