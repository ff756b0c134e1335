"""A compaction's arrays: the live documents of a `RecallIndex` (its snapshot's rows and its delta's) as
the flat arrays of a new snapshot, O(index) with numpy doing the per-posting work."""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt

from ._index import K1, B, RecallIndex
from ._snapshot import Arrays

__all__ = ["index_arrays"]


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
