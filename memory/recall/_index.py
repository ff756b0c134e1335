"""The recall index as a reader holds it: a mapped snapshot, the installs after it, and BM25 and vector
scoring over both.

`RecallIndex.open` maps the newest snapshot that matches the txlog (or starts empty), applies its delta
log, then replays from the topic files any txlog line the delta does not cover yet (a writer that crashed
between its install and the index update, or one that is installing right now). `refresh` does the same
for what was committed since, at the cost of one `stat` when nothing was. A reader never writes and never
takes the workspace lock. It sees only installed transactions, each whole: a transaction whose files are
being moved into place is waited for (milliseconds); one whose writer died after its commit point is read
from its stage (committed bytes, checked by their sha256, which the next writer's open installs).

BM25 is scored at query time from postings (so adding documents needs no global rebuild): idf, document
frequencies and the average length are those of the live documents only, and each posting's weight is
computed from its term frequency and its document's length then, the same arithmetic for a snapshot's rows
and a delta's, so a block's score does not depend on when the index was last compacted.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..durable import Stages, TxLog, read_regular, sha256_hex
from ..errors import DagmemError, UnsafePath
from ..format import TOPIC_INDEX, TxRecord, WorkspacePaths, git_context_of, is_topic_path
from ._delta import read_records
from ._embed import COARSE, DIM, normalise
from ._entries import ArchiveSources, Entry, entries_of_topic, topic_of
from ._snapshot import Damaged, Snapshot, block_key, list_snapshots
from ._text import analyse

__all__ = ["RecallIndex", "make_record", "parse_record", "recall_root"]

log = logging.getLogger("dagmem.recall")

K1, B = 1.2, 0.75
SCAN_LOOKUPS = 64  # term look-ups by scanning before the vocabulary's dictionary is built
INSTALL_WAIT = 1.0  # seconds a reader waits for a committed transaction's files to be moved into place
Key = tuple[str, str]


def recall_root(memory: Path) -> Path:
    return WorkspacePaths(memory).recall


class _Stale(DagmemError):
    """The snapshot or delta no longer matches the txlog: rebuild from the files (never escapes)."""


@dataclass
class _Delta:
    """Documents added since the snapshot (rows n0, n0 + 1, ...)."""

    entries: list[Entry] = field(default_factory=list)
    dl: list[float] = field(default_factory=list)
    postings: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    vectors: list[npt.NDArray[np.float16]] = field(default_factory=list)
    neighbours: dict[int, list[int]] = field(default_factory=dict)  # session index << 32 | seq -> rows
    blocks: dict[str, list[int]] = field(default_factory=dict)  # block id -> rows
    _stacked: tuple[npt.NDArray[np.float16], npt.NDArray[np.float32]] | None = None
    _pairs: dict[str, npt.NDArray[np.int64]] = field(default_factory=dict)

    def stacked(self) -> tuple[npt.NDArray[np.float16], npt.NDArray[np.float32]]:
        if self._stacked is None or len(self._stacked[0]) != len(self.vectors):
            full = np.stack(self.vectors) if self.vectors else np.zeros((0, DIM), np.float16)
            coarse = normalise(full[:, :COARSE].astype(np.float32))
            self._stacked = (full, coarse)
        return self._stacked

    def pairs(self, word: str) -> npt.NDArray[np.int64]:
        """`postings[word]` as an array of (row, term frequency), converted once per change: a query
        term's delta postings were converted on every query (0.5 -> 1.7 ms at 3,500 delta blocks)."""
        found = self.postings[word]
        cached = self._pairs.get(word)
        if cached is None or len(cached) != len(found):  # postings only grow
            cached = self._pairs[word] = np.array(found, dtype=np.int64)
        return cached


class _TermScan:
    """Term ids read off the vocabulary's bytes (one term a line, the line number its id): the term's line
    found with `bytes.find`, its number counted with `bytes.count` (both in C, over the 400 KB of 60,000
    terms at 100,000 blocks: 0.1 ms). A fresh process looks up a query's dozen terms this way instead of
    hashing every term of the vocabulary (15 ms)."""

    def __init__(self, text: bytes) -> None:
        self.text = text

    def find(self, word: str) -> int | None:
        raw = word.encode("utf-8")
        if not raw or b"\n" in raw:
            return None
        line = raw + b"\n"
        if self.text.startswith(line):
            return 0
        at = self.text.find(b"\n" + line)
        return None if at < 0 else self.text.count(b"\n", 0, at + 1)


class RecallIndex:
    def __init__(self, memory: Path, snapshot: Snapshot) -> None:
        self.memory = memory
        self.paths = WorkspacePaths(memory)
        self.txlog = TxLog(self.paths.txlog, fsync=False)
        self.stages = Stages(self.paths.stage_root)
        self.snapshot = snapshot
        self.lock = threading.RLock()
        arrays = snapshot.arrays
        self.n0 = arrays.n
        # Growable buffers (capacity doubles), so adding a document is O(1) amortised. The snapshot's
        # rows' lengths and spans stay in its mapped files (never copied: 3 MB at 100,000 blocks, read
        # whole before the first query), the delta's are kept here.
        self._alive = np.ones(max(self.n0, 1024), dtype=bool)
        self._delta_dl = np.zeros(1024, dtype=np.float32)
        self._delta_span = np.full((1024, 3), -1, dtype=np.int64)
        self.live = self.n0
        self.sum_dl = float(np.sum(arrays.dl, dtype=np.float64))
        self.sessions = list(arrays.sessions)  # grows as delta entries cite new sessions
        self._term_scan: _TermScan | None = None
        self._term_lookups = 0
        self.delta = _Delta()
        self.topics: dict[str, dict[Key, int]] = {}  # live rows of the topics changed since the snapshot
        self.seq = snapshot.seq
        self.txlog_start = int(snapshot.meta["txlog_start"])
        self.txlog_end = int(snapshot.meta["txlog_end"])
        self.txlog_sha = str(snapshot.meta["txlog_sha"])
        self.tx: str | None = snapshot.meta.get("tx")
        self.delta_offset = 0
        self.delta_broken = False  # a damaged delta line was met: the files are read instead of the log
        self.replayed: dict[str, tuple[list[Key], list[Entry]] | None] = {}  # what a replay indexed
        self.replayed_to: TxRecord | None = None
        self._stuck: set[str] = set()  # committed transactions whose writer died before installing them

    # The snapshot's names by id, built on first use: a dictionary of the whole vocabulary costs 15 ms
    # at 100,000 blocks, which a process answering one query about sessions or topics never needs.
    @functools.cached_property
    def term_ids(self) -> dict[str, int]:
        return dict(zip(self.snapshot.arrays.terms, itertools.count()))

    def _term_id(self, word: str) -> int | None:
        """The snapshot's id of term `word`: found in the vocabulary's bytes for a process's first few
        look-ups (a query's dozen terms, 0.1 ms each), from the dictionary after that."""
        text = self.snapshot.arrays.terms_text
        if "term_ids" in self.__dict__ or self._term_lookups >= SCAN_LOOKUPS or not text:
            return self.term_ids.get(word)
        self._term_lookups += 1
        if self._term_scan is None:
            self._term_scan = _TermScan(text)
        return self._term_scan.find(word)

    @functools.cached_property
    def topic_ids(self) -> dict[str, int]:
        return dict(zip(self.snapshot.arrays.topics, itertools.count()))

    @functools.cached_property
    def session_ids(self) -> dict[str, int]:  # grows as delta entries cite new sessions
        return dict(zip(self.sessions, itertools.count()))

    # -- opening ---------------------------------------------------------------------------------------

    @classmethod
    def open(cls, memory: Path) -> RecallIndex:
        """The index of the workspace at `memory`, caught up with its txlog (see the module's doc)."""
        memory = Path(memory)
        txlog = TxLog(WorkspacePaths(memory).txlog, fsync=False)
        for _seq, path in list_snapshots(recall_root(memory)):
            try:
                snapshot = Snapshot.load(path)
                if not _matches(txlog, snapshot.meta):
                    raise _Stale(f"{path.name} does not match the txlog")
                index = cls(memory, snapshot)
                index._read_delta()
                index._replay()
                return index
            except (OSError, Damaged, _Stale) as exc:  # a cache: the next one, or the files themselves
                log.info("recall snapshot %s not used: %s", path, exc)
        index = cls(memory, Snapshot.empty())
        index._replay(full=True)
        return index

    def refresh(self) -> None:
        """Catch up with transactions committed since the last call: one `stat` when there are none."""
        with self.lock:
            if self.txlog.size() == self.txlog_end:
                return
            self._read_delta()
            if self.txlog.size() == self.txlog_end:
                return
            newest = list_snapshots(recall_root(self.memory))
            if newest and newest[0][0] > self.seq:
                self._swap(RecallIndex.open(self.memory))
                return
            try:
                self._replay()
            except _Stale:
                self._swap(RecallIndex.open(self.memory))

    def _swap(self, other: RecallIndex) -> None:
        state = dict(other.__dict__, lock=self.lock)
        self.__dict__.clear()  # what this index built on first use (its dictionaries) is not `other`'s
        self.__dict__.update(state)

    def _read_delta(self) -> None:
        """Apply the delta lines written since the last call. A damaged line ends the log for this index:
        what it and the lines after it held is replayed from the files instead (the next writer heals)."""
        if self.snapshot.path is None or self.delta_broken:
            return
        try:
            for end, raw in read_records(self.snapshot.path / "delta.jsonl", self.delta_offset):
                record = parse_record(raw)
                self.delta_offset = end
                if record.seq <= self.seq:
                    continue  # replayed from the files before its delta line was appended
                self.apply(
                    record.files,
                    seq=record.seq,
                    start=record.start,
                    end=record.end,
                    sha=record.sha,
                    tx=record.tx,
                )
        except (OSError, Damaged) as exc:
            log.warning(
                "recall: %s/delta.jsonl is damaged, read from the files instead: %s", self.snapshot.path, exc
            )
            self.delta_broken = True

    def apply(
        self,
        files: Mapping[str, tuple[list[Key], list[Entry]] | None],
        *,
        seq: int,
        start: int,
        end: int,
        sha: str,
        tx: str,
    ) -> None:
        """Apply one delta record (as `make_record` builds it, before encoding): its topics' blocks now,
        as of txlog line `seq` (bytes [start, end), sha256 `sha`)."""
        # A record holds the whole state of each file it names, as of its last txlog line, and
        # covers every line after the record before it: applying it after a replay is harmless.
        for path, change in files.items():
            if change is None:
                self._set_topic(path, [], [])
            elif not self._set_topic(path, *change):
                self._index_file(path, _read(self.memory / path))
        self.seq, self.txlog_start, self.txlog_end, self.txlog_sha, self.tx = seq, start, end, sha, tx

    def topic_keys(self, path: str) -> set[Key]:
        """The (block id, digest) of the blocks the index holds for topic file `path`."""
        return set(self._topic_live(path))

    def _replay(self, *, full: bool = False) -> None:
        """Index the txlog lines after `txlog_end` from the files (all topic files when `full`)."""
        if self.txlog_end and _line_sha(self.txlog, self.txlog_start, self.txlog_end) != self.txlog_sha:
            raise _Stale("the txlog no longer holds the line the index reflects")
        for _attempt in range(5):
            last: dict[str, tuple[str | None, str]] = {}  # path -> (digest, tx) of the last line touching it
            record: TxRecord | None = None
            begin = end = self.txlog_end
            for line_end, record in self.txlog.read_from(self.txlog_end):
                for path, digest in record.files.items():
                    if is_topic_path(path):
                        last[path] = (digest, record.tx)
                begin, end = end, line_end
            if full:
                topics = self.paths.topics
                for found in sorted(topics.rglob("*.md")) if topics.is_dir() else []:
                    relpath = found.relative_to(self.memory).as_posix()
                    if relpath != TOPIC_INDEX:
                        last.setdefault(relpath, ("?", ""))
            if record is None and not full:
                return
            if record is not None:
                self._await_install(record)
            files: dict[str, bytes | None] = {}
            consistent = True
            for path, (digest, tx) in sorted(last.items()):
                files[path], matched = self._read_committed(path, digest, tx)
                consistent = consistent and matched
            if consistent or self.txlog.size() == end:
                break  # a mismatch with no newer line: a file changed by hand, and the files win
            # A newer transaction installed meanwhile: read again up to it, never half of it.
        lookup = ArchiveSources(self.memory)
        for path, data in files.items():
            self.replayed[path] = self._index_file(path, data, lookup)
        if record is not None:
            self.seq, self.txlog_start, self.txlog_end = record.seq, begin, end
            self.txlog_sha, self.tx = _line_sha(self.txlog, begin, end) or "", record.tx
            self.replayed_to = record

    def _await_install(self, record: TxRecord) -> None:
        """A block is never returned before it is installed: while the last transaction's files are being
        moved into place (its stage still exists; only the last line can be in flight, as every install
        recovers first), wait for the move, a few milliseconds. A stage that outlives INSTALL_WAIT is a
        writer that died after its commit point: its committed bytes are read from the stage (the next
        writer's open installs exactly those)."""
        if record.tx in self._stuck or not self.stages.pending(record.tx):
            return
        deadline = time.monotonic() + INSTALL_WAIT
        while self.stages.pending(record.tx):
            if time.monotonic() >= deadline:
                self._stuck.add(record.tx)
                log.warning(
                    "recall: transaction %s is committed but not installed (a dead writer?)", record.tx
                )
                return
            time.sleep(0.002)

    def _read_committed(self, path: str, digest: str | None, tx: str) -> tuple[bytes | None, bool]:
        """A topic file as its last committed transaction left it, even while that one is installing
        (from its stage); `False` when the file is neither (a newer transaction, or a hand edit)."""
        target = self.memory / path
        data = _read(target)
        if digest == "?" or (digest is None and data is None):
            return data, True
        if data is not None and sha256_hex(data) == digest:
            return data, True
        if digest is None:
            return None, True  # committed as deleted; the unlink is under way
        staged = self.stages.read_committed(tx, path, digest)
        if staged is not None:
            return staged, True
        data = _read(target)  # moved into place between the two reads
        return data, data is not None and sha256_hex(data) == digest

    def _index_file(
        self, path: str, data: bytes | None, lookup: ArchiveSources | None = None
    ) -> tuple[list[Key], list[Entry]] | None:
        if data is None:
            self._set_topic(path, [], [])
            return None
        from ..format import TopicFormatError  # here: a query over a current index parses no topic file

        try:
            topic = topic_of(path, data)
        except (TopicFormatError, UnicodeDecodeError) as exc:
            log.warning("recall: %s is not a valid topic file, not indexed: %s", path, exc)
            self._set_topic(path, [], [])
            return None
        live = self._topic_live(path)
        keys, new = entries_of_topic(path, topic, lookup or ArchiveSources(self.memory), live.__contains__)
        self._set_topic(path, keys, new)
        return keys, new

    # -- changing the live set -------------------------------------------------------------------------

    def _topic_live(self, path: str) -> dict[Key, int]:
        rows = self.topics.get(path)
        if rows is None:
            rows = {}
            index = self.topic_ids.get(path)
            if index is not None:
                for found in np.flatnonzero(self.snapshot.arrays.topic == index):
                    row = int(found)
                    if self.alive[row]:
                        body = self.snapshot.arrays.doc_json(row)
                        rows[(str(body["b"]), str(body["h"]))] = row
            self.topics[path] = rows
        return rows

    def _set_topic(self, path: str, keys: list[Key], new: list[Entry]) -> bool:
        """Make `keys` the live blocks of `path`; False (nothing changed) if a key is neither live nor in
        `new`: the caller then indexes the file itself."""
        old = dict(self._topic_live(path))
        fresh = {entry.key: entry for entry in new}
        if any(key not in old and key not in fresh for key in keys):
            return False
        rows: dict[Key, int] = {}
        for key in keys:
            rows[key] = old.pop(key) if key in old else self._add(fresh[key])
        for row in old.values():
            self._kill(row)
        self.topics[path] = rows
        return True

    def _add(self, entry: Entry) -> int:
        assert entry.vector is not None
        row = self.n0 + len(self.delta.entries)
        counts = entry.words if entry.words is not None else dict(Counter(analyse(entry.index_text())))
        postings = self.delta.postings
        for word, tf in counts.items():
            found = postings.get(word)
            if found is None:
                postings[word] = [(row, tf)]
            else:
                found.append((row, tf))
        length = sum(counts.values())
        self.delta.entries.append(entry)
        self.delta.dl.append(float(length))
        self.delta.vectors.append(entry.vector)
        if row >= len(self._alive):
            self._alive = np.concatenate([self._alive, np.ones(len(self._alive), dtype=bool)])
        at = row - self.n0
        if at >= len(self._delta_dl):
            self._delta_dl = np.concatenate([self._delta_dl, np.zeros(len(self._delta_dl), dtype=np.float32)])
            self._delta_span = np.concatenate([self._delta_span, np.full_like(self._delta_span, -1)])
        self._alive[row] = True
        self._delta_dl[at] = length
        self._delta_span[at] = self._span_of(entry)
        for source in entry.sources:
            if source.seq is not None:
                key = (self._session_index(source.session) << 32) | source.seq
                self.delta.neighbours.setdefault(key, []).append(row)
        self.delta.blocks.setdefault(entry.block_id, []).append(row)
        self.live += 1
        self.sum_dl += length
        return row

    def _session_index(self, session: str) -> int:
        index = self.session_ids.get(session)
        if index is None:
            index = self.session_ids[session] = len(self.sessions)
            self.sessions.append(session)
        return index

    def _span_of(self, entry: Entry) -> tuple[int, int, int]:
        """(session index, lowest seq, highest seq) of the records it cites in its first session."""
        cited = [(s.session, s.seq) for s in entry.sources if s.seq is not None]
        if not cited:
            return (-1, -1, -1)
        session = cited[0][0]
        seqs = [seq for sess, seq in cited if sess == session]
        return (self._session_index(session), min(seqs), max(seqs))

    def _kill(self, row: int) -> None:
        if self._alive[row]:
            self._alive[row] = False
            self.live -= 1
            self.sum_dl -= float(self.dl_of(np.array([row]))[0])

    # -- reading ---------------------------------------------------------------------------------------

    @property
    def alive(self) -> npt.NDArray[np.bool_]:
        return self._alive[: self.size]

    def dl_of(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The lengths in terms of `rows` (live or not)."""
        lengths: npt.NDArray[np.float32] = _rows_of(self.snapshot.arrays.dl, self._delta_dl, self.n0, rows)
        return lengths

    @property
    def size(self) -> int:
        """Rows, live or not (scores are arrays of this length)."""
        return self.n0 + len(self.delta.entries)

    def entry(self, row: int) -> Entry:
        if row >= self.n0:
            return self.delta.entries[row - self.n0]
        return Entry.from_json(self.snapshot.arrays.doc_json(row))

    def entries(self) -> Iterable[tuple[int, Entry]]:
        """Every live entry with its row (a snapshot writer's view)."""
        for row in np.flatnonzero(self.alive):
            yield int(row), self.entry(int(row))

    def has_topic(self, path: str) -> bool:
        """Whether the index holds live blocks of topic file `path`: a dictionary look-up, no scan."""
        rows = self.topics.get(path)
        return bool(rows) if rows is not None else path in self.topic_ids

    def topic_rows(self, path: str) -> list[int]:
        """The live rows of topic file `path` (read from the snapshot once, then kept)."""
        return list(self._topic_live(path).values())

    def block_rows(self, block_id: str) -> list[int]:
        """The live rows of block `block_id` (one per topic file holding it): O(log n), never a scan."""
        arrays = self.snapshot.arrays
        key = block_key(block_id)
        lo, hi = np.searchsorted(arrays.bid_key, [key, key + 1]) if key >= 0 else (0, 0)
        rows = [int(r) for r in np.asarray(arrays.bid_row[int(lo) : int(hi)])]
        rows += self.delta.blocks.get(block_id, [])
        return [row for row in rows if self._alive[row]]

    def _postings(self, word: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The live rows holding `word` and its term frequency in each (the snapshot's, then the delta's)."""
        arrays = self.snapshot.arrays
        tid = self._term_id(word)
        rows: list[npt.NDArray[Any]] = []
        tfs: list[npt.NDArray[Any]] = []
        if tid is not None:
            lo, hi = int(arrays.post_off[tid]), int(arrays.post_off[tid + 1])
            if hi > lo:
                rows.append(np.asarray(arrays.post_doc[lo:hi], dtype=np.int64))
                tfs.append(np.asarray(arrays.post_tf[lo:hi], dtype=np.float64))
        if word in self.delta.postings:
            pairs = self.delta.pairs(word)
            rows.append(pairs[:, 0])
            tfs.append(pairs[:, 1].astype(np.float64))
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        row, tf = (rows[0], tfs[0]) if len(rows) == 1 else (np.concatenate(rows), np.concatenate(tfs))
        if self.live < self.size:  # dead rows (a rewritten topic's old blocks) are not counted
            keep = self.alive[row]
            row, tf = row[keep], tf[keep]
        return row, tf

    def df(self, word: str) -> int:
        """Live rows holding `word`."""
        return len(self._postings(word)[0])

    def bm25(self, words: list[str]) -> npt.NDArray[np.float32]:
        """BM25 (k1 1.2, b 0.75, Lucene's idf) of every row for the query terms; 0 for dead rows.

        Over the live documents only (see the module's doc): a row's score is a function of the live
        set, whichever rows of the snapshot or the delta hold them."""
        if not self.live:
            return np.zeros(self.size, np.float32)
        avgdl = max(self.sum_dl / self.live, 1e-9)
        all_rows: list[npt.NDArray[Any]] = []
        weights: list[npt.NDArray[Any]] = []
        for word in dict.fromkeys(words):
            row, tf = self._postings(word)
            df = len(row)
            if not df:
                continue
            idf = math.log(1.0 + (self.live - df + 0.5) / (df + 0.5)) if df < self.live else 0.01
            norm = K1 * (1.0 - B + B * self.dl_of(row).astype(np.float64) / avgdl)
            all_rows.append(row)
            weights.append(idf * tf * (K1 + 1.0) / (tf + norm))
        if not all_rows:
            return np.zeros(self.size, np.float32)
        rows = np.concatenate(all_rows).astype(np.intp, copy=False)
        counts = np.bincount(rows, weights=np.concatenate(weights), minlength=self.size)
        scores: npt.NDArray[np.float32] = counts.astype(np.float32)
        return scores

    def coarse(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Cosine of every row's 64-dimension prefix with the query's; -2 for dead rows."""
        q = normalise(query[:COARSE].astype(np.float32))
        # einsum, not `@`: numpy's BLAS runs a matrix-vector product on all cores, and on a busy machine
        # waking its threads cost 18 ms at 100,000 rows against 1 ms in one thread (measured).
        parts = [np.einsum("ij,j->i", self.snapshot.arrays.coarse, q)]
        if self.delta.vectors:
            parts.append(np.einsum("ij,j->i", self.delta.stacked()[1], q))
        scores = np.concatenate(parts).astype(np.float32)
        scores[~self.alive] = -2.0
        return scores

    def vectors(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The full vectors of `rows` (float32)."""
        out = np.empty((len(rows), DIM), np.float32)
        base = rows < self.n0
        if base.any():
            out[base] = np.asarray(self.snapshot.arrays.vec[rows[base]], dtype=np.float32)
        if (~base).any():
            out[~base] = self.delta.stacked()[0][rows[~base] - self.n0].astype(np.float32)
        return out

    def spans_of(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The (session index, lowest seq, highest seq) each of `rows` cites; -1 when it cites none."""
        spans: npt.NDArray[np.int64] = _rows_of(
            self.snapshot.arrays.row_span, self._delta_span, self.n0, rows
        )
        return spans

    def neighbours(self, rows: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The live rows citing the record just before or just after each of `rows`' own, as pairs
        (`2 * i + side`, row): `i` indexes `rows`, side 0 is before, 1 after. Every such row, whichever
        rows hold them (several blocks may cite one record), so the result depends on no row numbering."""
        span = self.spans_of(rows)
        keys = np.stack(
            [(span[:, 0] << 32) | (span[:, 1] - 1), (span[:, 0] << 32) | (span[:, 2] + 1)], axis=1
        ).reshape(-1)
        has = np.repeat(span[:, 0] >= 0, 2)
        slots: list[npt.NDArray[np.int64]] = []
        found: list[npt.NDArray[np.int64]] = []
        nb_key = self.snapshot.arrays.nb_key
        if len(nb_key):
            lo = np.searchsorted(nb_key, keys, side="left")
            hi = np.searchsorted(nb_key, keys, side="right")
            count = np.where(has, hi - lo, 0)
            if count.any():
                slot = np.repeat(np.arange(len(keys), dtype=np.int64), count)
                starts = np.repeat(lo - (np.cumsum(count) - count), count)
                at = starts + np.arange(len(slot))
                slots.append(slot)
                found.append(np.asarray(self.snapshot.arrays.nb_row, dtype=np.int64)[at])
        if self.delta.neighbours:
            wanted, around = keys.tolist(), self.delta.neighbours  # plain ints: no numpy scalar per look-up
            extra = [(i, row) for i in np.flatnonzero(has).tolist() for row in around.get(wanted[i], ())]
            if extra:
                pairs = np.array(extra, dtype=np.int64)
                slots.append(pairs[:, 0])
                found.append(pairs[:, 1])
        if not slots:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        slot, row = np.concatenate(slots), np.concatenate(found)
        keep = self.alive[row]
        return slot[keep], row[keep]

    def replay_record(self) -> dict[str, Any] | None:
        """A delta record of what `open` replayed from the files (for a writer repairing the log)."""
        if self.replayed_to is None:
            return None
        return make_record(self.replayed_to, self.txlog_start, self.txlog_end, self.replayed, self.txlog)


def _rows_of(base: npt.NDArray[Any], delta: npt.NDArray[Any], n0: int, rows: npt.NDArray[np.int64]) -> Any:
    """`rows` of the snapshot's array `base` (rows below `n0`) followed by the delta's `delta`."""
    if not len(rows) or int(rows.max()) < n0:
        return np.asarray(base[rows])
    if int(rows.min()) >= n0:
        return delta[rows - n0]
    out = np.empty((len(rows), *base.shape[1:]), base.dtype)
    low = rows < n0
    out[low] = base[rows[low]]
    out[~low] = delta[rows[~low] - n0]
    return out


@dataclass(frozen=True)
class _Record:
    """A delta line, checked: what `apply` takes."""

    seq: int
    start: int
    end: int
    sha: str
    tx: str
    files: dict[str, tuple[list[Key], list[Entry]] | None]


def _count(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Damaged(f"a recall delta line holds {value!r} where a count belongs")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise Damaged(f"a recall delta line holds {value!r} where a text belongs")
    return value


def _entry(raw: object) -> Entry:
    """An entry of a delta line, every field of the type the index relies on."""
    if not isinstance(raw, dict) or not isinstance(raw.get("e"), list) or "v" not in raw:
        raise Damaged("a recall delta line holds an entry without its vector or sources")
    for source in raw["e"]:
        # Seven fields, an eighth, the origin, when it is not the role's default, and a ninth, the git
        # context, when known (the origin then null for the role's default: `Source.to_json`).
        if not isinstance(source, list) or len(source) not in (7, 8, 9):
            raise Damaged("a recall delta line holds a source that is not one")
        _session, _anchor, node, role, created_at, seq, _excerpt = source[:7]
        if len(source) == 8 and not isinstance(source[7], str):
            raise Damaged("a recall delta line holds a source that is not one")
        if len(source) == 9 and (not isinstance(source[7], str | None) or git_context_of(source[8]) is None):
            raise Damaged("a recall delta line holds a source that is not one")
        if seq is not None:
            _count(seq)
        if not all(isinstance(v, str | None) for v in (node, role)) or not (
            created_at is None or (isinstance(created_at, int | float) and not isinstance(created_at, bool))
        ):
            raise Damaged("a recall delta line holds a source that is not one")
    for succession in (raw.get("s"), raw.get("p")):  # superseded, partly superseded
        if succession is not None and not (
            isinstance(succession, list)
            and len(succession) == 3
            and all(isinstance(v, str) for v in succession)
        ):
            raise Damaged("a recall delta line holds a supersession that is not one")
    words = raw.get("w")
    counts = words.values() if isinstance(words, dict) else ()
    if words is not None and not (
        isinstance(words, dict) and all(type(v) is int for v in counts) and min(counts, default=0) >= 0
    ):
        raise Damaged("a recall delta line holds term counts that are not counts")
    entry = Entry.from_json(raw)
    if entry.vector is None or not np.isfinite(entry.vector).all():
        raise Damaged("a recall delta line holds a vector that is not a number")
    return entry


def parse_record(raw: Mapping[str, Any]) -> _Record:
    """The checked form of a delta record (`Damaged` for anything a writer would not have written)."""
    try:
        files: dict[str, tuple[list[Key], list[Entry]] | None] = {}
        found = raw["files"]
        if not isinstance(found, dict):
            raise Damaged("a recall delta line without its files")
        for path, change in found.items():
            if change is None:
                files[path] = None
                continue
            keys = [(_text(b), _text(h)) for b, h in change["keys"]]
            files[path] = (keys, [_entry(r) for r in change["new"]])
        return _Record(
            _count(raw["seq"]),
            _count(raw["start"]),
            _count(raw["end"]),
            _text(raw["sha"]),
            _text(raw["tx"]),
            files,
        )
    except Damaged:
        raise
    except Exception as exc:  # KeyError, TypeError, ValueError of a damaged line
        raise Damaged(f"a recall delta line is damaged: {type(exc).__name__}: {exc}") from exc


def make_record(
    record: TxRecord,
    start: int,
    end: int,
    files: Mapping[str, tuple[list[Key], list[Entry]] | None],
    txlog: TxLog,
    *,
    sha: str | None = None,
) -> dict[str, Any]:
    """A delta line's body; `sha` is the txlog line's sha256 when the caller has its bytes."""
    return {
        "seq": record.seq,
        "tx": record.tx,
        "start": start,
        "end": end,
        "sha": sha if sha is not None else _line_sha(txlog, start, end) or "",
        "files": {
            path: None
            if change is None
            else {"keys": change[0], "new": [e.to_json() for e in change[1]]}  # tuples encode as arrays
            for path, change in files.items()
        },
    }


def _read(path: Path) -> bytes | None:
    try:
        return read_regular(path)  # a symlinked topic file is indexed as absent, never what it names
    except (NotADirectoryError, UnsafePath):
        return None


def _line_sha(txlog: TxLog, start: int, end: int) -> str | None:
    """sha256 of the txlog bytes [start, end), or None if the txlog is shorter."""
    if end == 0:
        return ""
    try:
        with txlog.path.open("rb") as f:
            f.seek(start)
            data = f.read(end - start)
    except FileNotFoundError:
        return None
    return hashlib.sha256(data).hexdigest() if len(data) == end - start else None


def _matches(txlog: TxLog, meta: Mapping[str, Any]) -> bool:
    return _line_sha(txlog, int(meta["txlog_start"]), int(meta["txlog_end"])) == str(meta["txlog_sha"])
