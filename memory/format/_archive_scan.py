"""The strict archive parser: frames in order, stopping at the first damage, which it names torn or
corrupt (DESIGN §2). Never raises on any bytes."""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Container
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from ._archive_codec import (
    HEADER,
    MAX_RECORD_LINES,
    ORIGINS,
    ROLES,
    _first_line_prefix,
    _forgotten_line,
    _meta_json,
    anchor_of,
    default_origin,
)
from ._git_context import GitContext, git_context_of
from ._ids import is_valid_id
from ._limits import MAX_SEQ

__all__ = ["Frame", "ScanResult", "frame_git", "frame_meta", "restore_final_newline", "scan_archive"]

# Header lines are short (the longest, source-id, is at most 150 bytes); a longer one is damage, and the cap
# keeps a candidate check O(1) however long the line is. The source-meta line may hold a git context (at
# most `GIT_JSON_BYTES` of JSON, base64 on top): its own cap.
_MAX_HEADER_LINE: Final = 256
_MAX_META_LINE: Final = 4096


_ANCHOR_LINE: Final = re.compile(rb'<a id="src-([0-9a-f]{16})"></a>')


_SOURCE_PREFIX: Final = b"<!-- source-id: "


_META_LINE: Final = re.compile(rb"<!-- source-meta: ([A-Za-z0-9_-]+) -->")


_LINES_LINE: Final = re.compile(rb"<!-- record-lines: ([0-9]+) -->")


_CLOSE: Final = b" -->"


# A tombstone's fourth line (`dagmem forget`): ISO time, seconds, UTC; re-rendered to check it is canonical.
_FORGOTTEN_LINE: Final = re.compile(
    rb"<!-- forgotten: ([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\+00:00) -->"
)


_CANDIDATE: Final = b'\n<a id="src-'


_META_KEYS: Final = frozenset({"created_at", "role", "seq"})
_META_OPTIONAL: Final = frozenset({"origin", "git"})


_NO_TERMINATOR: Final = "truncated frame: missing empty terminator"


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
    origin: str  # where the text came from (`ORIGINS`); a frame written without one reads as its role's
    forgotten: bool = False  # a tombstone: its content was forgotten (`dagmem forget`), its id stays
    git: GitContext | None = None  # where in git it was said (absent from frames written without one)


@dataclass(frozen=True)
class ScanResult:
    """`frames` form the valid prefix `[.., valid_end)`; `damage_offset` is the offending line's offset."""

    frames: list[Frame]
    valid_end: int
    status: Literal["complete", "torn", "corrupt"]
    reason: str | None
    damage_offset: int | None


@dataclass(frozen=True)
class _Damage:
    offset: int
    reason: str


def _header_line(
    data: bytes, pos: int, what: str, cap: int = _MAX_HEADER_LINE
) -> tuple[bytes, int] | _Damage:
    newline = data.find(b"\n", pos, pos + cap + 1)
    if newline >= 0:
        return data[pos:newline], newline + 1
    if len(data) - pos <= cap:
        return _Damage(pos, f"truncated frame: {what} line")
    return _Damage(pos, f"bad {what} line: too long")


_Meta = tuple[float, str, int, str, GitContext | None]


def _decode_meta(token: bytes) -> _Meta | str:
    """(created_at, role, seq, origin, git) if `token` is exactly what `render_frame` writes, else why it
    is not (a frame without `origin` has its role's default: every frame written before origins existed;
    one without `git` has none)."""
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
    if not isinstance(meta, dict) or not _META_KEYS <= meta.keys() <= _META_KEYS | _META_OPTIONAL:
        return "source-meta keys are not created_at, role, seq (and origin, git)"
    created_at, role, seq = meta["created_at"], meta["role"], meta["seq"]
    origin = meta.get("origin")
    if type(created_at) is not float or not math.isfinite(created_at):
        return "source-meta created_at is not a finite float"
    if not isinstance(role, str) or role not in ROLES:
        return "source-meta role is not a known role"
    if type(seq) is not int or not 0 <= seq <= MAX_SEQ:
        return "source-meta seq is not an int in range"
    if origin is not None and (not isinstance(origin, str) or origin not in ORIGINS):
        return "source-meta origin is not a known origin"
    git = None
    if "git" in meta:
        git = git_context_of(meta["git"])
        if git is None:
            return "source-meta git is not a git context"
    if raw != _meta_json(created_at, role, seq, origin, git):
        return "non-canonical source-meta"
    return created_at, role, seq, origin if origin is not None else default_origin(role), git


def frame_meta(head: bytes) -> tuple[float, str, int, str, GitContext | None] | None:
    """(created_at, role, seq, origin, git) of the frame whose first bytes are `head` (its anchor,
    source-id and source-meta lines at least): a reader that knows a frame's offset reads its head alone,
    never the archive. None when those lines are not a frame's."""
    lines = head.split(b"\n", 3)
    if len(lines) < 4:
        return None
    match = _META_LINE.fullmatch(lines[2])
    meta = _decode_meta(match.group(1)) if match is not None else None
    return None if meta is None or isinstance(meta, str) else meta


def frame_git(head: bytes) -> GitContext | None:
    """The git context of the frame whose first bytes are `head` (`frame_meta`)."""
    meta = frame_meta(head)
    return None if meta is None else meta[4]


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
    line = _header_line(data, pos, "source-meta", _MAX_META_LINE)
    if isinstance(line, _Damage):
        return line
    meta_line, pos = line
    match = _META_LINE.fullmatch(meta_line)
    if match is None:
        return _Damage(meta_at, "bad or missing source-meta line")
    meta = _decode_meta(match.group(1))
    if isinstance(meta, str):
        return _Damage(meta_at, meta)
    created_at, role, seq, origin, git = meta
    try:
        prefix = _first_line_prefix(created_at, role)
    except (OverflowError, OSError, ValueError):
        return _Damage(meta_at, "source-meta created_at is out of range")

    lines_at = pos
    line = _header_line(data, pos, "record-lines")
    if isinstance(line, _Damage):
        return line
    lines_line, pos = line
    tombstone = _FORGOTTEN_LINE.fullmatch(lines_line)
    if tombstone is not None:
        return _tombstone(
            data,
            (start, pos, base),
            tombstone.group(1),
            (source_id, node_id, created_at, role, seq, origin, git),
        )
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
    return Frame(
        source_id, node_id, base + start, base + pos + 1, created_at, role, seq, content, origin, git=git
    )


def _tombstone(
    data: bytes,
    span: tuple[int, int, int],
    iso: bytes,
    head: tuple[str, str, float, str, int, str, GitContext | None],
) -> Frame | _Damage:
    """A tombstone frame (`span` = its start, the end of its forgotten line, the file offset of `data`):
    the line must be canonical and the frame end in its empty line."""
    start, pos, base = span
    try:
        when = datetime.fromisoformat(iso.decode()).timestamp()
    except ValueError:
        return _Damage(pos, "bad forgotten line: not a time")
    if _forgotten_line(when) != b"<!-- forgotten: " + iso + b" -->\n":
        return _Damage(pos, "bad forgotten line: not canonical")
    if pos >= len(data):
        return _Damage(pos, _NO_TERMINATOR)
    if data[pos] != 0x0A:
        return _Damage(pos, "missing empty terminator")
    source_id, node_id, created_at, role, seq, origin, git = head
    return Frame(
        source_id,
        node_id,
        base + start,
        base + pos + 1,
        created_at,
        role,
        seq,
        "",
        origin,
        forgotten=True,
        git=git,
    )


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


def restore_final_newline(
    data: bytes, session_id: str, *, known_ids: Container[str] = (), base: int = 0
) -> ScanResult | None:
    """The complete scan of `data + b"\\n"` if the only damage of `data` is provably a lost final newline
    (an editor's end-of-file fixer), else None.

    Every frame ends in `\\n\\n`; a fixer leaves the file ending in exactly one newline after a non-empty
    line. So the damage must be the last frame's missing terminator, found exactly at the end, and `data`
    must end in one newline after another byte: a file that still ends in an empty line lost no newline
    (a `record-lines` raised by one reads that line as content, and adding a byte would "complete" it)."""
    if not data.endswith(b"\n") or data.endswith(b"\n\n"):
        return None
    scan = scan_archive(data, session_id, known_ids=known_ids, base=base)
    if scan.status != "torn" or scan.reason != _NO_TERMINATOR or scan.damage_offset != base + len(data):
        return None
    restored = scan_archive(data + b"\n", session_id, known_ids=known_ids, base=base)
    return restored if restored.status == "complete" else None
