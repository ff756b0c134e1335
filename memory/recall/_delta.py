"""The delta log `snap-<seq>/delta.jsonl`: what each install after a snapshot changed in the index.

One line per install (or per repair, covering the txlog lines a crash left unindexed):
`{"seq", "tx", "start", "end", "sha", "files": {"topics/x.md": {"keys": [[block id, digest], ...],
"new": [entry, ...]} | null}}` — `seq` and the txlog byte range [start, end) of the last txlog line it
reflects, the sha256 of that line, and for each touched topic its blocks after the install plus an entry
(with its vector) for each block the index did not hold. Writers append under the workspace lock; a line
without its newline is a crash mid-append and is neither read nor kept (the next append truncates it).
Each line ends with `"c"`, the CRC-32 (8 hex digits) of its bytes before `,"c":`: a line that does not
match it, or does not parse as a record, is damage (`Damaged`), and the log is not used from there on.
"""

from __future__ import annotations

import json
import os
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from .. import faults
from ._snapshot import Damaged, open_regular

__all__ = ["append_line", "append_record", "check_lines", "decode", "encode", "last_record", "read_records"]

_TAIL: Final = len(b',"c":"00000000"}\n')
_CHUNK: Final = 1 << 16


def read_records(path: Path, offset: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
    """(end offset, record) of each complete line from `offset` (a line boundary); `Damaged` at the first
    line that is not a record as a writer wrote it."""
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return
    with os.fdopen(fd, "rb") as f:
        f.seek(offset)
        position = offset
        for line in f:
            if not line.endswith(b"\n"):
                return
            position += len(line)
            yield position, decode(line)


def last_record(path: Path) -> tuple[dict[str, Any] | None, int]:
    """The last complete record (None if there is none) and the size of the complete lines (`Damaged`
    if that line is damaged)."""
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return None, 0
    try:
        size = os.fstat(fd).st_size
        chunk = _CHUNK
        while True:  # the shortest end holding the last complete line whole
            start = max(0, size - chunk)
            data = os.pread(fd, size - start, start)
            last = data.rfind(b"\n")
            if start == 0 or (last > 0 and data.rfind(b"\n", 0, last) != -1):
                break
            chunk *= 4
    finally:
        os.close(fd)
    end = data.rfind(b"\n")
    if end == -1:
        return None, 0
    begin = data.rfind(b"\n", 0, end) + 1
    return decode(data[begin : end + 1]), start + end + 1


def encode(record: dict[str, Any]) -> bytes:
    """One line: the record's JSON with its CRC-32 as the last member (`"c"`)."""
    body = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()[:-1]
    return body + b',"c":"%08x"}\n' % zlib.crc32(body)


def check_lines(path: Path) -> None:
    """`Damaged` unless every complete line of the log at `path` matches its checksum (at CRC speed:
    no line is parsed)."""
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return
    with os.fdopen(fd, "rb") as f:
        for line in f:
            if line.endswith(b"\n"):
                _check(line)


def _check(line: bytes) -> None:
    body, tail = line[:-_TAIL], line[-_TAIL:]
    try:
        matches = (
            tail.startswith(b',"c":"') and tail.endswith(b'"}\n') and int(tail[6:14], 16) == zlib.crc32(body)
        )
    except ValueError:
        matches = False
    if not matches:
        raise Damaged("a recall delta line does not match its checksum")


def decode(line: bytes) -> dict[str, Any]:
    """The record of a complete line `encode` wrote; `Damaged` for anything else."""
    _check(line)
    try:
        record = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Damaged(f"a recall delta line is damaged: {exc}") from exc
    if not isinstance(record, dict):
        raise Damaged("a recall delta line is not a record")
    del record["c"]
    return record


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Append one record; a torn line left by a crash is cut off first. The caller holds the workspace
    lock. Never fsynced: the log is a cache, and a line lost to a power cut is replayed from the txlog."""
    _record, complete = last_record(path)
    append_line(path, encode(record), complete)


def append_line(path: Path, line: bytes, complete: int) -> int:
    """Write `line` at `complete` (the size of the file's complete lines, which the caller knows: from
    `last_record`, or because it wrote them), cutting off anything after it. Returns the new size."""
    # Never through a symlink, never blocking on a FIFO: damage is refused, and the writer rebuilds.
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Damaged(f"{path.name} is not a regular file")
        if os.fstat(fd).st_size != complete:
            os.ftruncate(fd, complete)
        os.lseek(fd, complete, os.SEEK_SET)
        faults.hit("recall:append")
        view = memoryview(line)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)
    return complete + len(line)
