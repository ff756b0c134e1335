"""The evidence archive `sources/<sid>.md`: one append-only file of frames per session (DESIGN §2).

A frame is four header lines (anchor, source id, canonical base64url meta, `record-lines: N`), N content
lines (the content split on `\\n` only, the first prefixed `[<ISO time>] <role>: `) and one empty line.
The explicit line count is what makes the format unambiguous: content that quotes a whole frame, header
lines and all, stays content.

The parser is strict and never resynchronises: it accepts frames in order and stops at the first one that is
not exactly what `render_frame` would have written. What follows decides the damage's name. A crash mid-append
leaves a prefix of a write, so nothing that parses as a frame can follow it: that is a *torn tail*, and the next
append truncates it. A valid frame after the damage cannot come from a crash, so the archive is *corrupt*:
appends are refused and nothing is deleted, because deleting evidence to make room for more would be worse.

`SessionArchive` keeps the valid end and the id map in memory so that an append costs O(batch): it compares
the file size with the valid end, scans only a tail another writer added, and rescans in full only when the
file shrank or lost its header. Appends take an `flock` on the file itself, so two processes archiving the same
session cannot interleave (a duplicate frame would be damage).
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import hashlib
import json
import math
import os
import re
from collections import ChainMap
from collections.abc import Container, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Final, Literal, cast

from . import durable, faults
from .errors import ArchiveCorrupt, InvalidInput
from .ids import check_id, is_valid_id

__all__ = [
    "HEADER",
    "MAX_RECORD_LINES",
    "ROLES",
    "ArchiveRecord",
    "Frame",
    "ScanResult",
    "SessionArchive",
    "anchor_of",
    "render_frame",
    "scan_archive",
]

HEADER: Final = b"<!-- dagmem-archive:v1 -->\n\n"
MAX_RECORD_LINES: Final = 1_000_000
MAX_SEQ: Final = 2**63 - 1
ROLES: Final = frozenset({"user", "assistant", "tool", "system"})

# Header lines are short (the longest, source-id, is at most 150 bytes); a longer one is damage, and the cap
# keeps a candidate check O(1) however long the line is.
_MAX_HEADER_LINE: Final = 256
_ANCHOR_LINE: Final = re.compile(rb'<a id="src-([0-9a-f]{16})"></a>')
_SOURCE_PREFIX: Final = b"<!-- source-id: "
_META_LINE: Final = re.compile(rb"<!-- source-meta: ([A-Za-z0-9_-]+) -->")
_LINES_LINE: Final = re.compile(rb"<!-- record-lines: ([0-9]+) -->")
_CLOSE: Final = b" -->"
_CANDIDATE: Final = b'\n<a id="src-'
_META_KEYS: Final = frozenset({"created_at", "role", "seq"})


@dataclass(frozen=True)
class ArchiveRecord:
    """One record to archive; `render_frame` validates it."""

    session_id: str
    node_id: str
    role: str
    seq: int
    created_at: float
    content: str

    @property
    def source_id(self) -> str:
        return f"{self.session_id}/{self.node_id}"


@dataclass(frozen=True)
class Frame:
    """One valid frame found by `scan_archive`; `offset`/`end` are file offsets of its first byte and past its last."""

    source_id: str
    node_id: str
    offset: int
    end: int
    created_at: float
    role: str
    seq: int
    content: str


@dataclass(frozen=True)
class ScanResult:
    """`frames` form the valid prefix `[.., valid_end)`; `damage_offset` is the offending line's offset."""

    frames: list[Frame]
    valid_end: int
    status: Literal["complete", "torn", "corrupt"]
    reason: str | None
    damage_offset: int | None


def anchor_of(source_id: str) -> str:
    return "src-" + hashlib.sha256(source_id.encode()).hexdigest()[:16]


def _iso(created_at: float) -> str:
    return datetime.fromtimestamp(created_at, UTC).isoformat(timespec="seconds")


def _meta_json(created_at: float, role: str, seq: int) -> bytes:
    # Byte for byte `json.dumps({...}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` for these
    # types (json prints a finite float with `float.__repr__`; a role from ROLES needs no escaping), at a
    # fraction of the cost: a full scan re-encodes every frame's meta. A test pins the equality.
    return f'{{"created_at":{float.__repr__(created_at)},"role":"{role}","seq":{int.__repr__(seq)}}}'.encode()


def _meta_token(created_at: float, role: str, seq: int) -> bytes:
    return base64.urlsafe_b64encode(_meta_json(created_at, role, seq)).rstrip(b"=")


def _first_line_prefix(created_at: float, role: str) -> bytes:
    return f"[{_iso(created_at)}] {role}: ".encode()


def render_frame(record: ArchiveRecord) -> bytes:
    """The frame's exact bytes (ending in `\\n\\n`). Refuses, with `InvalidInput`, what the parser would reject."""
    session_id = check_id(record.session_id, "session id")
    node_id = check_id(record.node_id, "node id")
    role = str(record.role)
    if role not in ROLES:
        raise InvalidInput(f"{record.source_id}: role {role!r} is not one of {sorted(ROLES)}")
    seq = record.seq
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= MAX_SEQ:
        raise InvalidInput(f"{record.source_id}: seq must be an int in [0, 2**63), not {seq!r}")
    created_at = record.created_at
    if isinstance(created_at, bool) or not isinstance(created_at, int | float):
        raise InvalidInput(f"{record.source_id}: created_at must be a number, not {created_at!r}")
    created_at = float(created_at)
    try:
        prefix = _first_line_prefix(created_at, role)
    except (OverflowError, OSError, ValueError) as error:
        raise InvalidInput(f"{record.source_id}: created_at {created_at!r} is not a valid time") from error
    if not isinstance(record.content, str):
        raise InvalidInput(f"{record.source_id}: content must be a string")
    try:
        content = record.content.encode()
    except UnicodeEncodeError as error:
        raise InvalidInput(f"{record.source_id}: content is not encodable as UTF-8") from error
    lines = content.count(b"\n") + 1
    if lines > MAX_RECORD_LINES:
        raise InvalidInput(f"{record.source_id}: content has {lines} lines (at most {MAX_RECORD_LINES})")
    source_id = f"{session_id}/{node_id}"
    return b"".join(
        [
            f'<a id="{anchor_of(source_id)}"></a>\n<!-- source-id: {source_id} -->\n'.encode(),
            b"<!-- source-meta: " + _meta_token(created_at, role, seq) + b" -->\n",
            f"<!-- record-lines: {lines} -->\n".encode(),
            prefix,
            content,
            b"\n\n",
        ]
    )


@dataclass(frozen=True)
class _Damage:
    offset: int
    reason: str


def _header_line(data: bytes, pos: int, what: str) -> tuple[bytes, int] | _Damage:
    newline = data.find(b"\n", pos, pos + _MAX_HEADER_LINE + 1)
    if newline >= 0:
        return data[pos:newline], newline + 1
    if len(data) - pos <= _MAX_HEADER_LINE:
        return _Damage(pos, f"truncated frame: {what} line")
    return _Damage(pos, f"bad {what} line: too long")


def _decode_meta(token: bytes) -> tuple[float, str, int] | str:
    """(created_at, role, seq) if `token` is exactly what `render_frame` writes, else why it is not."""
    try:
        raw = base64.urlsafe_b64decode(token + b"=" * (-len(token) % 4))
    except binascii.Error:
        return "undecodable source-meta"
    if base64.urlsafe_b64encode(raw).rstrip(b"=") != token:
        return "non-canonical source-meta base64"
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return "undecodable source-meta"
    if not isinstance(meta, dict) or meta.keys() != _META_KEYS:
        return "source-meta keys are not created_at, role, seq"
    created_at, role, seq = meta["created_at"], meta["role"], meta["seq"]
    if type(created_at) is not float or not math.isfinite(created_at):
        return "source-meta created_at is not a finite float"
    if not isinstance(role, str) or role not in ROLES:
        return "source-meta role is not a known role"
    if type(seq) is not int or not 0 <= seq <= MAX_SEQ:
        return "source-meta seq is not an int in range"
    if raw != _meta_json(created_at, role, seq):
        return "non-canonical source-meta"
    return created_at, role, seq


def _parse_frame(
    data: bytes, pos: int, session_id: str, *, seen: Container[str], known: Container[str], base: int
) -> Frame | _Damage:
    """The frame starting at `pos` (a position in `data`, whose byte 0 is file offset `base`)."""
    start = pos
    line = _header_line(data, pos, "anchor")
    if isinstance(line, _Damage):
        return line
    anchor_line, pos = line
    anchor = _ANCHOR_LINE.fullmatch(anchor_line)
    if anchor is None:
        return _Damage(start, "bad or missing anchor line")

    source_at = pos
    line = _header_line(data, pos, "source-id")
    if isinstance(line, _Damage):
        return line
    source_line, pos = line
    if not (source_line.startswith(_SOURCE_PREFIX) and source_line.endswith(_CLOSE)):
        return _Damage(source_at, "bad or missing source-id line")
    try:
        source_id = source_line[len(_SOURCE_PREFIX) : -len(_CLOSE)].decode("ascii")
    except UnicodeDecodeError:
        return _Damage(source_at, "bad source-id line: not ASCII")
    owner, slash, node_id = source_id.partition("/")
    if not slash or owner != session_id:
        return _Damage(source_at, "source id of another session")
    if not is_valid_id(node_id):
        return _Damage(source_at, "source id has an invalid node id")
    if anchor.group(1).decode() != anchor_of(source_id)[4:]:
        return _Damage(start, "anchor does not match the source id")
    if source_id in seen or source_id in known:
        return _Damage(start, "duplicate source id")

    meta_at = pos
    line = _header_line(data, pos, "source-meta")
    if isinstance(line, _Damage):
        return line
    meta_line, pos = line
    match = _META_LINE.fullmatch(meta_line)
    if match is None:
        return _Damage(meta_at, "bad or missing source-meta line")
    meta = _decode_meta(match.group(1))
    if isinstance(meta, str):
        return _Damage(meta_at, meta)
    created_at, role, seq = meta
    try:
        prefix = _first_line_prefix(created_at, role)
    except (OverflowError, OSError, ValueError):
        return _Damage(meta_at, "source-meta created_at is out of range")

    lines_at = pos
    line = _header_line(data, pos, "record-lines")
    if isinstance(line, _Damage):
        return line
    lines_line, pos = line
    match = _LINES_LINE.fullmatch(lines_line)
    digits = match.group(1) if match is not None else b""
    if not digits or digits.startswith(b"0") or len(digits) > 7 or int(digits) > MAX_RECORD_LINES:
        return _Damage(lines_at, "bad or missing record-lines (must be 1 to 1,000,000)")
    count = int(digits)

    # Walking the lines costs at most the bytes left, whatever `count` claims.
    body = pos
    for _ in range(count):
        newline = data.find(b"\n", pos)
        if newline < 0:
            return _Damage(pos, "truncated frame: record-lines exceeds the lines left")
        pos = newline + 1
    if not data.startswith(prefix, body):
        return _Damage(body, "first record line does not start with [<time>] <role>: ")
    try:
        content = data[body + len(prefix) : pos - 1].decode("utf-8")
    except UnicodeDecodeError:
        return _Damage(body, "content is not valid UTF-8")
    if pos >= len(data):
        return _Damage(pos, "truncated frame: missing empty terminator")
    if data[pos] != 0x0A:
        return _Damage(pos, "missing empty terminator")
    return Frame(source_id, node_id, base + start, base + pos + 1, created_at, role, seq, content)


def _valid_frame_after(data: bytes, damaged_at: int, session_id: str) -> bool:
    """Whether a valid frame starts at any line after `damaged_at` (duplicates count: they prove damage)."""
    pos = damaged_at
    while (newline := data.find(_CANDIDATE, pos)) >= 0:
        pos = newline + 1
        if isinstance(_parse_frame(data, pos, session_id, seen=(), known=(), base=0), Frame):
            return True
    return False


def scan_archive(
    data: bytes, session_id: str, *, start: int = 0, known_ids: Container[str] = (), base: int = 0
) -> ScanResult:
    """Parse the frames of `data` from `start`; never raises on any bytes.

    `base` is the file offset of `data[0]` when `data` is a tail read from the file (offsets in the result
    are file offsets); the header is required only when scanning from file offset 0. `known_ids` are the
    source ids archived before the scanned part: one of them again is a duplicate.
    """
    if not 0 <= start <= len(data) or base < 0:
        raise ValueError(f"start {start} / base {base} out of range for {len(data)} bytes")
    pos = start
    if base + start == 0:
        if not data.startswith(HEADER):
            # A prefix of the header is a crash while the file was being created; anything else there is
            # not ours to truncate.
            if HEADER.startswith(data):
                return ScanResult([], 0, "torn", "truncated header", 0)
            return ScanResult([], 0, "corrupt", "bad header", 0)
        pos = len(HEADER)
    frames: list[Frame] = []
    seen: set[str] = set()
    while pos < len(data):
        parsed = _parse_frame(data, pos, session_id, seen=seen, known=known_ids, base=base)
        if isinstance(parsed, _Damage):
            status: Literal["torn", "corrupt"] = (
                "corrupt" if _valid_frame_after(data, pos, session_id) else "torn"
            )
            return ScanResult(frames, base + pos, status, parsed.reason, base + parsed.offset)
        frames.append(parsed)
        seen.add(parsed.source_id)
        pos = parsed.end - base
    return ScanResult(frames, base + pos, "complete", None, None)


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

    def __init__(self, path: Path, session_id: str, *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.session_id = check_id(session_id, "session id")
        self._fsync = fsync
        # Archived id -> offset: new ids in maps[0], over a resumed index's lazy mapping (never copied,
        # so resuming a 10,000-turn archive costs O(1)). None: not loaded yet.
        self._ids: ChainMap[str, int] | None = None
        self._valid_end = 0
        self._corrupt: ArchiveCorrupt | None = None
        self._adopted: list[str] = []  # ids found in the file (not written by us) since `take_changes`
        self._rescanned = False

    @classmethod
    def from_state(
        cls, path: Path, session_id: str, *, valid_end: int, ids: Mapping[str, int], fsync: bool = True
    ) -> SessionArchive:
        """Resume from a cached state (an index) without rescanning; the next append checks it against the file."""
        if valid_end < 0:
            raise ValueError(f"valid_end must be >= 0, not {valid_end}")
        archive = cls(path, session_id, fsync=fsync)
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
            try:
                data = self.path.read_bytes()
            except FileNotFoundError:
                data = b""
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

    def _open_locked(self) -> tuple[int, bool]:
        """Open the file (created if missing) and lock it: (fd, whether this call created it). A lock won
        on a file that was unlinked meanwhile (a failed first append removes the file it created) locks
        nothing that anyone else uses, so the path is opened again."""
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
                created = True
            except FileExistsError:
                try:
                    fd = os.open(self.path, os.O_RDWR)
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
            known = self._loaded()
            new = [(sid, frame) for sid, frame in rendered.items() if sid not in known]
            if not new:
                return []
            if size > self._valid_end:
                faults.hit("archive:truncate")
                os.ftruncate(fd, self._valid_end)
                if self._fsync:
                    os.fsync(fd)
            header = HEADER if self._valid_end == 0 else b""
            payload = header + b"".join(frame for _, frame in new)
            offset = durable.append_bytes(self.path, payload, fsync=self._fsync, site="archive")
            if created and self._fsync:
                durable.fsync_dir(self.path.parent, site="archive")
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
