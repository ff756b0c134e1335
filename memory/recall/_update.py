"""The writer's side of the recall index: one delta line per install, O(batch); snapshots now and then.

A `RecallUpdater` is the `on_install` hook of a workspace opened for writing: `Workspace.install` calls it
right after a transaction is installed, under the workspace lock.
It indexes only the blocks the transaction added or changed (the old file's blocks are known by digest) and
appends them to the delta log of the newest snapshot. A crash before that line (fault site
`recall:index`) leaves the log one install behind: readers replay the missing txlog lines from the files
when they open, and the next install repairs the log the same way before it appends its own line.

An updater remembers what it last wrote (`_Writer`): the snapshot, the delta's size, the txlog seq
it reflects, and the whole index in memory (held from an install that found the delta empty or repaired
it, or that wrote the snapshot). One `stat` of the
delta and its directory, and the seq of the install, tell whether that is still true (no other process
wrote meanwhile); if so, an install neither lists snapshots nor reads the log's tail, and a compaction
needs no reopening of the index (which parsed the whole delta). Anything else (a new updater among them)
takes the path a new process takes, which repairs from the files.

When the delta outgrows a sixteenth of its snapshot (and COMPACT_MIN), the index is compacted into a new
snapshot: O(index), at most once per 1/16 growth, so O(batch) amortised, and what a reader must apply on
open stays bounded (bench/_recall.py measures both).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import faults
from ..durable import TxLog
from ..format import ArchiveRecord, TopicFormatError, TxRecord, WorkspacePaths, is_topic_path
from ..workspace import TxInstalled
from ._arrays import index_arrays, write_index
from ._delta import append_line, append_record, check_lines, encode, last_record
from ._embed import MODEL, write_table
from ._entries import ArchiveScans, ArchiveSources, Entry, block_digest, entries_of_topic, topic_of, vectorise
from ._index import Key, RecallIndex, make_record, parse_record, recall_root
from ._snapshot import (
    VERSION,
    Damaged,
    Snapshot,
    list_snapshots,
    remove_old_snapshots,
    remove_path,
    write_snapshot,
)

__all__ = ["RecallUpdater", "compact", "delta_limit", "index_arrays", "write_index"]

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


class RecallUpdater:
    """Recall's writer for one workspace: the `on_install` hook of a `Workspace` opened for writing.

    Whoever opens the workspace to write (the runtime, the write pass, a reorganisation) makes one and
    hands it to `Workspace(on_install=...)`; it remembers what it last wrote (`_Writer`, see the module's
    doc) for as long as its owner keeps it, and nothing outlives it. Installs are serialised by the
    workspace lock; the threading lock only guards what it holds against a `forget` from another thread.
    """

    def __init__(self) -> None:
        self._root: Path | None = None
        self._writer: _Writer | None = None
        self._lock = threading.Lock()
        self._scans = ArchiveScans()  # the archives its installs looked records up in, scanned so far

    @property
    def held(self) -> RecallIndex | None:
        """The index it holds as of its last install (None: it will read the files next time)."""
        writer = self._writer
        return None if writer is None else writer.index

    @property
    def snapshot(self) -> Path | None:
        """The snapshot its last install wrote to (None: nothing remembered)."""
        writer = self._writer
        return None if writer is None else writer.snapshot

    def forget(self) -> None:
        """Let go of what it holds: the index is read from disk again when it is next needed."""
        with self._lock:
            self._writer = None
            self._scans = ArchiveScans()

    def __call__(self, installed: TxInstalled) -> None:
        self.after_install(
            installed.root,
            installed.record,
            start=installed.start,
            end=installed.end,
            before=installed.before,
            records=installed.records,
            fsync=installed.fsync,
        )

    def after_install(
        self,
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
        bytes of the files it touched. Never raises for an index problem: the index is a cache, and
        readers replay what it lacks."""
        with self._lock:  # taken out while it is updated: a crash half-way leaves nothing remembered
            known = self._writer if self._root == memory else None
            if self._root != memory:
                self._scans = ArchiveScans()
            self._root, self._writer, scans = memory, None, self._scans
        try:
            faults.hit("recall:index")
            writer: _Writer | None
            if known is not None and known.seq == record.seq - 1 and _stamp(known.snapshot) == known.stamp:
                writer = _next(
                    memory, known, record, start=start, end=end, before=before, records=records, scans=scans
                )
            else:
                known = None  # stale: what it held goes before the index is opened again
                writer = _after_install(
                    memory, record, start=start, end=end, before=before, records=records, fsync=fsync
                )
            known = None  # its index is `writer`'s now, which a compaction drops before it loads the new one
            if writer is not None and writer.stamp[1] > writer.limit:
                writer = _compact(memory, writer, fsync=fsync)
            with self._lock:
                self._writer = writer
            write_table(memory, fsync=fsync)  # once per workspace: a reader's query then needs no tokenizer
        except Exception as exc:  # the install stands whatever happens (a simulated death still propagates)
            log.warning(
                "recall index not updated for %s (readers replay it from the files): %s", record.tx, exc
            )

    def compact(self, memory: Path, *, fsync: bool) -> Path:
        """Write the whole index, as of the txlog now, as a new snapshot (dropping all but the last two);
        this updater holds it from then on."""
        self.forget()
        writer = _compact(memory, None, fsync=fsync)
        with self._lock:
            self._root, self._writer = memory, writer
        return writer.snapshot


def _changes(
    memory: Path,
    record: TxRecord,
    index: RecallIndex | None,
    before: Mapping[str, bytes | None],
    records: Sequence[ArchiveRecord],
    *,
    scans: ArchiveScans | None,
) -> dict[str, tuple[list[Key], list[Entry]] | None]:
    """Each topic file of `record` as it is now: its blocks' keys, and an entry (with its vector) for each
    block the index did not hold: the held `index` knows that, or else the file before the install."""
    lookup = ArchiveSources(memory, records, scans)
    files: dict[str, tuple[list[Key], list[Entry]] | None] = {}
    for relpath, digest in record.files.items():
        if not is_topic_path(relpath):
            continue  # core.md, and the topic index: no topic
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
    scans: ArchiveScans,
) -> _Writer:
    """The install after the one this process indexed last: append its line where the log ends."""
    index = known.index
    files = _changes(memory, record, index, before, records, scans=scans)
    line = record.to_line()
    sha = hashlib.sha256(line).hexdigest() if len(line) == end - start else None
    body = make_record(record, start, end, files, TxLog(WorkspacePaths(memory).txlog), sha=sha)
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
    # Checked once per process (the snapshot's bytes at CRC speed, the delta's lines' checksums): a
    # damaged cache is rebuilt whole, so the next install after any damage heals it (readers, which
    # never write, read the files meanwhile). Only the last delta line is parsed: an earlier one that
    # matches its checksum yet is no record (edited by hand, checksum and all) waits for the next
    # compaction, readers reading the files from it on.
    try:
        snapshot: Snapshot | None = Snapshot.load(path)
        check_lines(delta)  # every line's checksum; the last one, which this install follows, parsed too
        last, _size = last_record(delta)
        if last is not None:
            parse_record(last)
    except (OSError, Damaged) as exc:
        log.warning("recall index %s is damaged, rebuilt from the files: %s", path, exc)
        return _compact(memory, None, fsync=fsync, damaged=path)
    held: RecallIndex | None = None
    if last is None:  # a delta with nothing to apply yet: the writer holds the index from here on
        assert snapshot is not None
        held = RecallIndex(memory, snapshot)
    snapshot = None  # never two whole indexes alive at once
    indexed = int(last["seq"]) if last is not None else held.seq if held is not None else 0
    if indexed != record.seq - 1:
        # A crash between an install and its index line: index from the files what the log lacks
        # (this install included, as it is in place), as a reader would.
        held = None  # never two whole indexes alive at once
        held = RecallIndex.open(memory)
        repair = held.replay_record()
        if held.snapshot.path != path:
            held = None  # never two whole indexes alive at once
            return _compact(memory, None, fsync=fsync)
        if repair is not None:
            append_record(delta, repair)
        held.replayed, held.replayed_to = {}, None
    else:
        files = _changes(memory, record, held, before, records, scans=None)
        body = make_record(record, start, end, files, TxLog(WorkspacePaths(memory).txlog))
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
    return _compact(memory, None, fsync=fsync).snapshot


def _compact(memory: Path, held: _Writer | None, *, fsync: bool, damaged: Path | None = None) -> _Writer:
    """Write the index `held` holds (the writer's own, taken from it), or else the index opened now, as
    a snapshot; the writer then holds the snapshot's index, with an empty delta, as its own. The old
    index is dropped before the new snapshot is loaded: two whole indexes are never alive at once."""
    index = None
    if held is not None:
        index, held.index = held.index, None
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
    path = write_index(root, meta, index, fsync=fsync)
    live = index.live
    del index
    if damaged is not None and damaged != path:
        remove_path(damaged)  # not left for a later reader or writer to try
    remove_old_snapshots(root)
    log.info("recall index compacted: %d blocks at txlog seq %d", live, meta["seq"])
    fresh = RecallIndex(memory, Snapshot.load(path, verify=False))  # just written, and checksummed
    stamp = _stamp(path)
    assert stamp is not None  # just written, under the lock
    return _Writer(path, fresh.seq, stamp, delta_limit(path), fresh)
