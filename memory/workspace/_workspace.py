"""A memory workspace (`<home>/memory/`): its id, lock, archives, txlog, index and status (DESIGN §2).

Opening a workspace creates its directories and id, and recovers what a dead process left (a torn txlog
line, a stage, temp files) under the lock. The lock (`flock`, released by the kernel when a process dies)
is taken for installs only, never across a model call.

`Workspace.install` is the one install: it commits the transaction, records it in the SQLite index, then
calls the `on_install` hook the workspace was opened with (recall's updater, given by whoever opened the
workspace for writing: the workspace knows nothing of the layers above it). A transaction that touches
topics also rewrites the topic index `topics/index.md`, staged and committed with them, from the
summaries of the topics it touches and those the SQLite index keeps of the others (so no install
re-reads every topic file; the first one after the cache is lost does, once).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import logging
import os
import shutil
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import faults
from ..durable import (
    Installer,
    Recovery,
    TxLog,
    WriterStatus,
    atomic_write_many,
    check_dir,
    check_file,
    ensure_workspace_id,
    load_status,
    open_regular,
    read_regular,
)
from ..errors import ArchiveCorrupt, UnsafePath
from ..format import (
    HEADER,
    TOPIC_INDEX,
    ArchiveRecord,
    ForgetEntry,
    ForgottenCorrupt,
    TopicSummary,
    TxRecord,
    WorkspacePaths,
    anchor_of,
    in_topic_index,
    is_topic_path,
    is_valid_id,
    merge_newest,
    newest_first,
    parse_forgotten,
    render_forgotten,
    render_ordered,
    render_tombstone,
    scan_archive,
    summarise_bytes,
)
from ..outcomes import ReasonCode, WriteFailure
from ._archive import SessionArchive
from ._dedupe import drop_exact_duplicates
from ._index import Index

__all__ = ["InstallHook", "TxInstalled", "Workspace", "check_workspace_paths"]

log = logging.getLogger("dagmem.workspace")

_ARCHIVES_KEPT = 256


@dataclass(frozen=True)
class TxInstalled:
    """What `Workspace.install` just installed, for its `on_install` hook (under the workspace lock)."""

    root: Path  # the workspace (`<home>/memory`)
    record: TxRecord
    start: int  # the record's line is txlog bytes [start, end)
    end: int
    before: Mapping[str, bytes | None]  # the old bytes of the files it touched (None: absent)
    records: Sequence[ArchiveRecord]  # the archive records it consumed, when the caller has them
    fsync: bool


# Called after each install, under the lock; the install stands whatever it does (it must not raise for
# a problem of its own: a cache behind the txlog is caught up by its readers).
InstallHook = Callable[[TxInstalled], None]


def check_workspace_paths(root: Path) -> None:
    """Nothing of a workspace is written through a symlink (it would land outside the home) or opened if
    it is a FIFO (it would hang): such a workspace is refused before anything is written (`UnsafePath`,
    `WORKSPACE_INVALID`). The archives of sessions are checked when they are opened."""
    paths = WorkspacePaths(root)
    for directory in paths.directories():
        check_dir(directory)
    for path in paths.state_files():
        check_file(path)
    # status.json only reports: one that cannot be written (a directory in its place) never stops the
    # writer (it says so in `status_problem`), but it is never written through a symlink.
    if paths.status.is_symlink():
        raise UnsafePath(paths.status, "symbolic link")


class Workspace:
    def __init__(
        self,
        root: Path | str,
        *,
        fsync: bool = True,
        clock: Callable[[], float] = time.time,
        lock_timeout: float = 10.0,
        workspace_id: str | None = None,
        on_install: InstallHook | None = None,
    ) -> None:
        self.root = Path(root)
        self.on_install = on_install
        self.fsync = fsync
        self.clock = clock
        self.lock_timeout = lock_timeout
        self.paths = WorkspacePaths(self.root)
        self.sources = self.paths.sources
        self.topics = self.paths.topics
        self.state = self.paths.state
        check_workspace_paths(self.root)
        for directory in (self.root, self.sources, self.topics, self.state):
            directory.mkdir(parents=True, exist_ok=True)
        self.workspace_id = ensure_workspace_id(self.paths.workspace_id, fsync=fsync, new_id=workspace_id)
        self.txlog = TxLog(self.paths.txlog, fsync=fsync)
        self.installer = Installer(self.root, self.paths.stage_root, self.txlog, fsync=fsync)
        self.index = Index(self.paths.index)
        self._archives: OrderedDict[str, SessionArchive] = OrderedDict()
        with self.lock():
            report = self.recover(full=True)
        if report:
            log.warning("recovered %s: %s", self.root, report)

    def close(self) -> None:
        self.index.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the lock and recovery -------------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the workspace lock; `CONCURRENT_UPDATE` (retryable) if it stays busy past `timeout`."""
        faults.hit("lock")
        deadline = time.monotonic() + (self.lock_timeout if timeout is None else timeout)
        fd = open_regular(self.paths.lock, os.O_RDWR | os.O_CREAT)
        try:
            delay = 0.001
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                        raise
                    if time.monotonic() >= deadline:
                        raise WriteFailure(
                            ReasonCode.CONCURRENT_UPDATE, "the workspace lock is busy"
                        ) from None
                    time.sleep(delay)
                    delay = min(delay * 2, 0.05)
            yield
        finally:
            os.close(fd)  # releases the lock

    def recover(self, *, full: bool = False) -> Recovery:
        """Under the lock: finish or discard a dead writer's transaction; `full` also removes the temp
        files that dead writers left in the workspace (never a live process's: it may be mid-write)."""
        # Every txlog line not indexed yet is read first: a damaged one refuses the workspace
        # (`TxlogCorrupt`) before recovery changes anything.
        self.index.sync_txlog(self.txlog)
        report = self.installer.recover(sweep=[self.root, self.state] if full else ())
        if full:
            # The recall index's snapshot being written when its writer died (only writers, under this
            # lock, write one; the cache is rebuilt from the files).
            for stale in sorted(self.paths.recall.glob(".snap-*.tmp")):
                shutil.rmtree(stale, ignore_errors=True)
                report.temp_removed.append(stale)
        self.index.sync_txlog(self.txlog)
        return report

    # -- the install -----------------------------------------------------------------------------------

    def install(
        self,
        session_id: str,
        consumed: Sequence[str],
        files: Mapping[str, bytes | None],
        *,
        before: Mapping[str, bytes | None] | None = None,
        records: Sequence[ArchiveRecord] = (),
        migrated: bool = False,
    ) -> TxRecord:
        """Under the lock: commit one transaction (it consumes `consumed`, writes `files`), record it in
        the index, then tell the `on_install` hook. `before`: the files' bytes as the caller checked them
        (read here when not given and a hook wants them)."""
        if TOPIC_INDEX in files:
            raise WriteFailure(ReasonCode.PATH_OUTSIDE_WORKSPACE, f"{TOPIC_INDEX} is derived, never written")
        summaries: dict[str, TopicSummary | None] | None = None
        if any(is_topic_path(path) for path in files):
            summaries, index = self._topic_index_after(files)
            if index != self.read_bytes(TOPIC_INDEX):
                files = {**files, TOPIC_INDEX: index}
                if before is not None:
                    before = {**before, TOPIC_INDEX: self.read_bytes(TOPIC_INDEX)}
        if before is None:
            before = {path: self.read_bytes(path) for path in files} if self.on_install is not None else {}
        record, end = self.installer.commit(session_id, consumed, files, at=self.clock(), migrated=migrated)
        start = end - len(record.to_line())
        self.index.add_tx(record, start=start, end=end, txlog=self.txlog, summaries=summaries)
        if self.on_install is not None:
            self.on_install(TxInstalled(self.root, record, start, end, before, records, self.fsync))
        return record

    def _topic_index_after(
        self, files: Mapping[str, bytes | None]
    ) -> tuple[dict[str, TopicSummary | None], bytes | None]:
        """(the summaries to record with the transaction, the index's bytes after it: None, no topic).
        Summarised from their bytes: the topics it touches, and those a txlog line touched since their
        summaries were recorded (a crash after a commit); every topic when the cache has none yet."""
        self.index.sync_txlog(self.txlog)
        built, due = self.index.topic_state()
        if built:
            stale = [path for path in due if path not in files]
        else:
            stale = sorted(
                f"topics/{entry.name}"
                for entry in os.scandir(self.topics)
                if entry.is_file() and in_topic_index(f"topics/{entry.name}")
            )
        fresh: dict[str, TopicSummary | None] = {}
        for path in stale:
            try:
                fresh[path] = summarise_bytes(path, self.read_bytes(path))
            except (OSError, UnsafePath):
                fresh[path] = None  # unreadable: `verify` says so; the map leaves it out
        for path, data in files.items():
            if is_topic_path(path):
                fresh[path] = summarise_bytes(path, data)
        new = newest_first(s for s in fresh.values() if s is not None)
        if not built:
            text = render_ordered(new, len(new))
        else:
            # The cached summaries newest first, read only as far as the budget goes, merged with these.
            total, replaced = self.index.topic_count(fresh)
            cached = (s for s in self.index.newest_topics() if s.path not in fresh)
            text = render_ordered(merge_newest(cached, new), total - replaced + len(new))
        return fresh, None if text is None else text.encode("utf-8")

    # -- evidence --------------------------------------------------------------------------------------

    def _archive(self, session_id: str) -> SessionArchive:
        archive = self._archives.get(session_id)
        if archive is not None:
            self._archives.move_to_end(session_id)
            return archive
        path = self.paths.source(session_id)
        state = self.index.archive_state(session_id)
        consumed = self._consumed_in(session_id)
        archive = SessionArchive(path, session_id, fsync=self.fsync, consumed=consumed)
        if state is not None:
            valid_end, size, mtime_ns = state
            try:
                stat = path.stat()
            except FileNotFoundError:
                stat = None
            # Trust the index only if the file is as it left it, or longer (a crash after an append), and
            # its last indexed frame is in the file and ends where the index says the archive ends.
            if (
                stat is not None
                and (stat.st_size > size or (stat.st_size, stat.st_mtime_ns) == (size, mtime_ns))
                and self._claim_holds(path, session_id, valid_end)
            ):
                archive = SessionArchive.from_state(
                    path,
                    session_id,
                    valid_end=valid_end,
                    ids=self.index.archived_ids(session_id),
                    fsync=self.fsync,
                    consumed=consumed,
                )
        self._archives[session_id] = archive
        if len(self._archives) > _ARCHIVES_KEPT:
            self._archives.popitem(last=False)
        return archive

    def _claim_holds(self, path: Path, session_id: str, valid_end: int) -> bool:
        """Whether the file bears out the index: the last frame it lists is there, whole, and ends at
        the indexed length. Ids lost with a failed index write would leave the length past them (the
        files win: then the whole file is scanned)."""
        last = self.index.last_archived(session_id)
        start = len(HEADER) if last is None else last[1]
        if valid_end < start or (last is not None and last[0] not in self.index.archived_ids(session_id)):
            return False
        try:
            fd = open_regular(path, os.O_RDONLY)
        except (OSError, UnsafePath):
            return False
        try:
            data = os.pread(fd, valid_end - start, start)
            header = os.pread(fd, len(HEADER), 0)
        finally:
            os.close(fd)
        if header != HEADER and valid_end > 0:
            return False
        if last is None:
            return valid_end in (0, len(HEADER))
        scan = scan_archive(data, session_id, base=start)
        return (
            scan.status == "complete"
            and [frame.source_id for frame in scan.frames] == [last[0]]
            and scan.valid_end == valid_end
        )

    def _consumed_in(self, session_id: str) -> Callable[[], list[str]]:
        def consumed() -> list[str]:
            self.index.sync_txlog(self.txlog)
            return self.index.consumed_in(session_id)

        return consumed

    def archive(self, session_id: str, records: Sequence[ArchiveRecord]) -> list[str]:
        """Archive the records not archived yet (idempotent, append-only, O(batch)); returns the new ids."""
        archive = self._archive(session_id)
        try:
            new = archive.append(records)
            self._record(archive, new)
        except BaseException:
            # Re-read its state from the index and the file next time: an index write that failed after
            # the append lost these ids from the cache, never from the file, whose tail tells them again.
            self._archives.pop(session_id, None)
            raise
        return new

    def _record(self, archive: SessionArchive, new: Sequence[str]) -> None:
        """Write to the index what `archive` appended (`new`) or learnt from its file since last time."""
        adopted, rescanned = archive.take_changes()
        if not (adopted or new or rescanned):
            return
        stat = archive.path.stat()
        ids = archive.ids()
        self.index.set_archive(
            archive.session_id,
            valid_end=archive.valid_end,
            size=stat.st_size,
            mtime_ns=stat.st_mtime_ns,
            added=[(source_id, anchor_of(source_id), ids[source_id]) for source_id in (*adopted, *new)],
            replace=rescanned,
        )

    def drop_duplicate_frames(self) -> list[str]:
        """`verify --repair`: rewrite each archive holding later exact copies of its frames (a stale index
        made them) without them, under the lock and the archive's own; returns the source ids dropped."""
        dropped: list[str] = []
        with self.lock():
            for path in sorted(self.sources.glob("*.md")):
                if not is_valid_id(path.stem):
                    continue
                fd = open_regular(path, os.O_RDONLY)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)  # no append meanwhile
                    data = read_regular(path) or b""
                    fixed = drop_exact_duplicates(data, path.stem)
                    if fixed is None:
                        continue
                    atomic_write_many([(path, fixed[0])], fsync=self.fsync, site="repair")
                    dropped.extend(fixed[1])
                finally:
                    os.close(fd)  # an appender waiting on the old file finds it unlinked and reopens
                self._archives.pop(path.stem, None)
        return dropped

    def rebuild_index(self) -> bool:
        """Forget the whole index and rebuild it from the files (`verify --repair`), under the lock;
        returns whether it said anything else than the files."""
        with self.lock():
            before = self.index.contents()
            self.index.clear()
            self._archives.clear()
            self.index.sync_txlog(self.txlog)
            for path in sorted(self.sources.glob("*.md")):
                if is_valid_id(path.stem):
                    self._index_archive(path.stem, "")
            return self.index.contents() != before

    def is_archived(self, session_id: str, anchor: str) -> bool:
        if self.index.has_anchor(session_id, anchor):
            return True
        # Not in the index: the files win. An archive the index has never seen (a lost or rebuilt cache)
        # is scanned once; one it has seen is checked against its file, whose tail may hold frames the
        # index lost (a failed index write) or never saw (another process's append).
        if self.index.archive_state(session_id) is None:
            return self._index_archive(session_id, anchor)
        path = self.paths.source(session_id)
        if not path.is_file():
            return False
        self._archives.pop(session_id, None)  # an appender opened before now re-reads its state too
        archive = self._archive(session_id)
        try:
            archive.refresh()
            self._record(archive, ())
        except BaseException:
            self._archives.pop(session_id, None)
            raise
        return self.index.has_anchor(session_id, anchor)

    def source_of(self, session_id: str, anchor: str) -> str | None:
        """The source id (`<session>/<node>`) an archived frame's anchor names, or None when no frame of
        the session's archive has it (looked up in the index, which catches up with the file first)."""
        found = self.index.source_of(session_id, anchor)
        if found is None and is_valid_id(session_id) and self.is_archived(session_id, anchor):
            found = self.index.source_of(session_id, anchor)
        return found

    def _index_archive(self, session_id: str, anchor: str) -> bool:
        path = self.paths.source(session_id)
        try:
            data = read_regular(path)  # never a FIFO, never through a symlink
            mtime_ns = path.stat().st_mtime_ns
        except (FileNotFoundError, UnsafePath):
            return False
        if data is None:
            return False
        scan = scan_archive(data, session_id)
        self.index.set_archive(
            session_id,
            valid_end=scan.valid_end,
            size=len(data),
            mtime_ns=mtime_ns,
            added=[(f.source_id, anchor_of(f.source_id), f.offset) for f in scan.frames],
            replace=True,
        )
        self._archives.pop(session_id, None)  # an appender opened before now re-reads its state
        return self.index.has_anchor(session_id, anchor)

    def consumed(self, source_ids: Iterable[str]) -> dict[str, str]:
        """Which of these source ids a committed transaction consumed (source id -> tx)."""
        self.index.sync_txlog(self.txlog)
        return self.index.consumed(source_ids)

    # -- forget --------------------------------------------------------------------------------------

    def forgotten(self) -> list[ForgetEntry]:
        """The entries of `forgotten.json` (none when there is no file). A damaged file is refused
        (`ForgottenCorrupt`): a forget to finish must never be lost silently."""
        data = read_regular(self.paths.forgotten)
        if data is None:
            return []
        try:
            return parse_forgotten(data)
        except ValueError as exc:
            raise ForgottenCorrupt(self.paths.forgotten, str(exc)) from None

    def forgotten_sources(self) -> set[str]:
        return {source for entry in self.forgotten() for source in entry.sources}

    def save_forgotten(self, entries: list[ForgetEntry]) -> None:
        """Under the lock: replace `forgotten.json` (temp file, fsync, rename, directory fsync)."""
        atomic_write_many(
            [(self.paths.forgotten, render_forgotten(entries))], fsync=self.fsync, site="forget:journal"
        )

    def tombstone_archive(
        self, session_id: str, heads: Mapping[str, tuple[str, int, float]], forgotten_at: float
    ) -> list[str]:
        """Under the lock: rewrite the archive of `session_id` with a tombstone frame for each node of
        `heads` (node id -> role, seq, created_at) in place of its frame, or appended when it has none, so
        no later append can archive its text again. One atomic rewrite of the file under its own lock (the
        one sanctioned rewrite of an append-only archive); a torn tail is dropped with it, a corrupt archive
        is refused (`ArchiveCorrupt`, nothing changed). Returns the source ids newly tombstoned."""
        path = self.paths.source(session_id)
        fd = open_regular(path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # no append meanwhile
            data = read_regular(path) or b""
            scan = scan_archive(data, session_id)
            if scan.status == "corrupt":
                raise ArchiveCorrupt(path, scan.damage_offset or scan.valid_end, scan.reason or "corrupt")
            parts = [HEADER]
            seen: set[str] = set()
            changed: list[str] = []
            for frame in scan.frames:
                seen.add(frame.node_id)
                if frame.node_id in heads and not frame.forgotten:
                    role, seq, created_at = frame.role, frame.seq, frame.created_at
                    parts.append(render_tombstone(session_id, frame.node_id, role=role, seq=seq,
                                                  created_at=created_at, forgotten_at=forgotten_at,
                                                  origin=frame.origin, git=frame.git))  # fmt: skip
                    changed.append(frame.source_id)
                else:
                    parts.append(data[frame.offset : frame.end])
            for node_id, (role, seq, created_at) in heads.items():
                if node_id not in seen:
                    parts.append(render_tombstone(session_id, node_id, role=role, seq=seq,
                                                  created_at=created_at, forgotten_at=forgotten_at))  # fmt: skip
                    changed.append(f"{session_id}/{node_id}")
            new = b"".join(parts)
            if new != data:
                atomic_write_many([(path, new)], fsync=self.fsync, site="forget:archive")
        finally:
            os.close(fd)  # an appender waiting on the old file finds it unlinked and reopens
        self._archives.pop(session_id, None)
        self._index_archive(session_id, "")
        return changed

    def rename_in_txlog(self, holds: Callable[[str], bool]) -> list[str]:
        """Under the lock: rewrite the txlog (one atomic replace) so that no line names a topic file whose
        path `holds` a forgotten text (a topic is named after its salient word): each such path becomes
        `topics/forgotten-path-<n>.md` in every line. Only file names change, of lines long installed
        (recovery has run; the forget's own line is installed): the consumed ids, the commit point of
        every transaction, stay. Returns the paths renamed (none: the file is not touched)."""
        lines = list(self.txlog.read_from(0))
        names: dict[str, str] = {}
        for _end, record in lines:
            for path in record.files:
                if path not in names and holds(path):
                    names[path] = f"topics/forgotten-path-{len(names) + 1}.md"
        if not names:
            return []
        out: list[bytes] = []
        for _end, record in lines:
            files: dict[str, str | None] = {}
            for path, digest in record.files.items():
                files.setdefault(names.get(path, path), digest)
            out.append(dataclasses.replace(record, files=files).to_line())
        atomic_write_many([(self.paths.txlog, b"".join(out))], fsync=self.fsync, site="forget:txlog")
        self.index.sync_txlog(self.txlog)
        return sorted(names)

    def vacuum_index(self) -> None:
        """Drop the topic summaries (a crash may have left one describing a topic as it was before the
        forget rewrote it), then rewrite the database so that no freed page keeps old bytes."""
        self.index.clear_topic_summaries()
        self.index.vacuum()

    # -- files -----------------------------------------------------------------------------------------

    def read_bytes(self, relpath: str) -> bytes | None:
        return read_regular(self.root / relpath)  # never a FIFO's hang

    # -- status ----------------------------------------------------------------------------------------

    @property
    def status_path(self) -> Path:
        return self.paths.status

    def status(self) -> WriterStatus:
        return load_status(self.status_path)
