"""`SessionArchive`: appends frames to one session's evidence archive in O(batch), under an `flock` on
the file, truncating a torn tail and refusing a corrupt archive.

Damage at the end of the file is a torn tail (a crash mid-append) only if no committed transaction
consumed a source that is not in the valid prefix: a crash tears only frames nobody consumed yet (the txlog
line comes after the archive's fsync). So a last frame that an editor changed after it was consumed is
never truncated. The one damage an editor's end-of-file fixer makes and that can be undone exactly, a
missing final newline, is restored; anything else there is refused with `ArchiveCorrupt`, keeping every
byte."""

from __future__ import annotations

import fcntl
import os
from collections import ChainMap
from collections.abc import Callable, Collection, Mapping, MutableMapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import cast

from .. import faults
from ..durable import append_bytes, fsync_dir, open_regular, read_regular
from ..errors import ArchiveCorrupt, InvalidInput
from ..format import (
    HEADER,
    ArchiveRecord,
    ScanResult,
    check_id,
    render_frame,
    restore_final_newline,
    scan_archive,
)

__all__ = ["SessionArchive"]


def _read(fd: int, start: int, end: int) -> bytes:
    chunks: list[bytes] = []
    while start < end:
        chunk = os.pread(fd, end - start, start)
        if not chunk:
            break
        chunks.append(chunk)
        start += len(chunk)
    return b"".join(chunks)


class SessionArchive:
    """The archive file of one session. Not thread-safe; processes are serialised by an `flock` on the file."""

    def __init__(
        self,
        path: Path,
        session_id: str,
        *,
        fsync: bool = True,
        consumed: Callable[[], Collection[str]] | None = None,
    ) -> None:
        """`consumed` gives the source ids of this session that committed transactions consumed; it is
        asked only before a damaged tail would be truncated. Without it, damage at the end is a torn tail."""
        self.path = Path(path)
        self.session_id = check_id(session_id, "session id")
        self._fsync = fsync
        self._consumed = consumed
        # Archived id -> offset: new ids in maps[0], over a resumed index's lazy mapping (never copied,
        # so resuming a 10,000-turn archive costs O(1)). None: not loaded yet.
        self._ids: ChainMap[str, int] | None = None
        self._valid_end = 0
        self._corrupt: ArchiveCorrupt | None = None
        self._adopted: list[str] = []  # ids found in the file (not written by us) since `take_changes`
        self._rescanned = False

    @classmethod
    def from_state(
        cls,
        path: Path,
        session_id: str,
        *,
        valid_end: int,
        ids: Mapping[str, int],
        fsync: bool = True,
        consumed: Callable[[], Collection[str]] | None = None,
    ) -> SessionArchive:
        """Resume from a cached state (an index) without rescanning; the next append checks it against the file."""
        if valid_end < 0:
            raise ValueError(f"valid_end must be >= 0, not {valid_end}")
        archive = cls(path, session_id, fsync=fsync, consumed=consumed)
        # ChainMap only ever writes to maps[0], so the read-only base is safe behind the cast.
        archive._ids = ChainMap({}, cast("MutableMapping[str, int]", ids))
        archive._valid_end = valid_end
        return archive

    def ids(self) -> Mapping[str, int]:
        """Archived source id -> frame offset, in the valid prefix (loaded by one full scan on first use)."""
        return MappingProxyType(self._loaded())

    def take_changes(self) -> tuple[list[str], bool]:
        """What the file taught us since the last call, for a cache of `ids()`: (source ids adopted from
        the file, in file order; whether a full scan replaced the map, so the cache should be replaced by
        these ids). Ids this object appended are not included: `append` returns them."""
        changes = (self._adopted, self._rescanned)
        self._adopted, self._rescanned = [], False
        return changes

    @property
    def valid_end(self) -> int:
        self._loaded()
        return self._valid_end

    def _loaded(self) -> ChainMap[str, int]:
        if self._ids is None:
            data = read_regular(self.path) or b""
            self._adopt(scan_archive(data, self.session_id), replace=True)
        assert self._ids is not None
        return self._ids

    def _adopt(self, result: ScanResult, *, replace: bool) -> None:
        if self._ids is None:
            self._ids = ChainMap({})
            replace = True
        elif replace:
            self._ids.maps[:] = [{}]  # in place: views returned by `ids()` stay live
        if replace:
            self._adopted, self._rescanned = [], True
        ids = self._ids
        for frame in result.frames:
            ids[frame.source_id] = frame.offset
            self._adopted.append(frame.source_id)
        self._valid_end = result.valid_end
        if result.status == "corrupt":
            offset = result.damage_offset if result.damage_offset is not None else result.valid_end
            self._corrupt = ArchiveCorrupt(self.path, offset, result.reason or "corrupt")

    def _sync(self, fd: int) -> int:
        """Bring the in-memory state up to the file's valid prefix; returns the file size."""
        size = os.fstat(fd).st_size
        ids = self._ids
        if (
            ids is None
            or size < self._valid_end
            or (self._valid_end > 0 and _read(fd, 0, len(HEADER)) != HEADER)
        ):
            self._adopt(scan_archive(_read(fd, 0, size), self.session_id), replace=True)
        elif size > self._valid_end:
            tail = _read(fd, self._valid_end, size)
            result = scan_archive(tail, self.session_id, known_ids=ids, base=self._valid_end)
            if result.status == "complete":
                self._adopt(result, replace=False)
            else:
                # Damage after what we knew decides about bytes of the file: a torn tail is truncated by
                # the append, a corrupt archive refuses it. Decide that from the whole file, never from a
                # cached state: a cache (the index) can lag behind another process's append, and then the
                # frames that append wrote look like duplicates of themselves.
                self._adopt(scan_archive(_read(fd, 0, size), self.session_id), replace=True)
        if self._corrupt is not None:
            raise self._corrupt
        return size

    def _restore_newline(self, fd: int, size: int) -> int:
        """If the damaged end is provably whole frames but for a lost final newline, put it back (exactly the
        bytes the writer wrote); any other damage is left to `_check_torn`."""
        tail = _read(fd, self._valid_end, size)
        result = restore_final_newline(tail, self.session_id, known_ids=self._loaded(), base=self._valid_end)
        if result is None:
            return size
        append_bytes(self.path, b"\n", fsync=self._fsync, site="archive")
        self._adopt(result, replace=False)
        return size + 1

    def _check_torn(self, fd: int, size: int, known: Collection[str]) -> None:
        """Refuse (`ArchiveCorrupt`, nothing deleted) to truncate a damaged end while a consumed source of
        this session is not in the valid prefix: that end may hold it, so it is not a crash's torn tail."""
        if self._consumed is None:
            return
        missing = sorted(source_id for source_id in self._consumed() if source_id not in known)
        if not missing:
            return
        tail = _read(fd, self._valid_end, size)
        scan = scan_archive(tail, self.session_id, known_ids=known, base=self._valid_end)
        offset = scan.damage_offset if scan.damage_offset is not None else self._valid_end
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise ArchiveCorrupt(
            self.path,
            offset,
            f"{scan.reason or 'damaged'}; consumed source(s) {shown} are not in the valid prefix, so the "
            "damaged end is no torn tail and nothing is deleted (restore the file from a copy)",
        )

    def _open_locked(self) -> tuple[int, bool]:
        """Open the file (created if missing) and lock it: (fd, whether this call created it). A lock won
        on a file that was unlinked meanwhile (a failed first append removes the file it created) locks
        nothing that anyone else uses, so the path is opened again."""
        while True:
            try:
                fd = open_regular(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL)  # never via a symlink
                created = True
            except FileExistsError:
                try:
                    fd = open_regular(self.path, os.O_RDWR)
                except FileNotFoundError:
                    continue
                created = False
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                if os.fstat(fd).st_nlink > 0:
                    return fd, created
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)

    def refresh(self) -> None:
        """Catch up with the file (frames another process appended, or a cache lost), changing nothing
        in it; `take_changes` then tells what was learnt. Raises `ArchiveCorrupt` for a corrupt archive."""
        try:
            fd = open_regular(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)  # not mid-append: an appender holds it exclusively
            self._sync(fd)
        finally:
            os.close(fd)

    def append(self, records: Sequence[ArchiveRecord]) -> list[str]:
        """Archive the records not archived yet, in one fsynced append; returns their source ids in order.

        Raises `InvalidInput` (nothing written) for a bad record or one of another session, and
        `ArchiveCorrupt` (nothing written, nothing deleted) if the file has frames after damage.
        """
        rendered: dict[str, bytes] = {}
        for record in records:
            if record.session_id != self.session_id:
                raise InvalidInput(f"record {record.source_id!r} is not of session {self.session_id!r}")
            frame = render_frame(record)
            rendered.setdefault(record.source_id, frame)
        if self._corrupt is not None:
            raise self._corrupt
        if not rendered:
            return []

        fd, created = self._open_locked()
        try:
            size = self._sync(fd)
            if size > self._valid_end:
                size = self._restore_newline(fd, size)
            known = self._loaded()
            new = [(sid, frame) for sid, frame in rendered.items() if sid not in known]
            if not new:
                return []
            if size > self._valid_end:
                self._check_torn(fd, size, known)
                faults.hit("archive:truncate")
                os.ftruncate(fd, self._valid_end)
                if self._fsync:
                    os.fsync(fd)
            header = HEADER if self._valid_end == 0 else b""
            payload = header + b"".join(frame for _, frame in new)
            offset = append_bytes(self.path, payload, fsync=self._fsync, site="archive")
            if created and self._fsync:
                fsync_dir(self.path.parent, site="archive")
        except faults.InjectedCrash:
            raise
        except BaseException:
            # A failed append puts the file back as it was; a file this call created (all of it ours) goes
            # too, under its lock: a process waiting for the lock finds it unlinked and opens the path again.
            if created:
                self.path.unlink(missing_ok=True)
            raise
        finally:
            os.close(fd)  # releases the lock

        pos = offset + len(header)
        for sid, frame in new:
            known[sid] = pos
            pos += len(frame)
        self._valid_end = pos
        return [sid for sid, _ in new]
