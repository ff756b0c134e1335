"""The delta log `snap-<seq>/delta.jsonl`: what each install after a snapshot changed in the index.

One line per install (or per repair, covering the txlog lines a crash left unindexed):
`{"seq", "tx", "start", "end", "sha", "files": {"topics/x.md": {"keys": [[block id, digest], ...],
"new": [entry, ...]} | null}}` — `seq` and the txlog byte range [start, end) of the last txlog line it
reflects, the sha256 of that line, and for each touched topic its blocks after the install plus an entry
(with its vector) for each block the index did not hold. Writers append under the workspace lock; a line
without its newline is a crash mid-append and is neither read nor kept (the next append truncates it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import faults
from ..durable import holds_last_line, read_end

__all__ = ["append_line", "append_record", "encode", "last_record", "read_records"]


def read_records(path: Path, offset: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
    """(end offset, record) of each complete line from `offset` (a line boundary)."""
    try:
        f = path.open("rb")
    except FileNotFoundError:
        return
    with f:
        f.seek(offset)
        position = offset
        for line in f:
            if not line.endswith(b"\n"):
                return
            position += len(line)
            yield position, json.loads(line)


def last_record(path: Path) -> tuple[dict[str, Any] | None, int]:
    """The last complete record (None if there is none) and the size of the complete lines."""
    try:
        start, data = read_end(path, holds_last_line, chunk=1 << 16)
    except FileNotFoundError:
        return None, 0
    end = data.rfind(b"\n")
    if end == -1:
        return None, 0
    begin = data.rfind(b"\n", 0, end) + 1
    return json.loads(data[begin : end + 1]), start + end + 1


def encode(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Append one record; a torn line left by a crash is cut off first. The caller holds the workspace
    lock. Never fsynced: the log is a cache, and a line lost to a power cut is replayed from the txlog."""
    _record, complete = last_record(path)
    append_line(path, encode(record), complete)


def append_line(path: Path, line: bytes, complete: int) -> int:
    """Write `line` at `complete` (the size of the file's complete lines, which the caller knows: from
    `last_record`, or because it wrote them), cutting off anything after it. Returns the new size."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
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
