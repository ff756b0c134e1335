"""The transaction log `.dagmem/txlog.jsonl`: one line per committed transaction (DESIGN §2).

Its fsynced append is a transaction's commit point. Only complete lines (ending in a newline) count; a
partial last line is a crash mid-append and is truncated by recovery. The last line is found by reading
backwards from the end, so committing is O(1) in the size of the log."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from .. import faults
from ..format import TxRecord
from ._atomic import append_bytes

__all__ = ["TxLog"]


class TxLog:
    def __init__(self, path: Path, *, fsync: bool = True) -> None:
        self.path = path
        self.fsync = fsync

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def _tail(self) -> tuple[int, bytes]:
        """(offset, bytes) of an end of the file long enough to hold the last complete line and any
        partial line after it."""
        size = self.size()
        if size == 0:
            return 0, b""
        chunk = 4096
        with self.path.open("rb") as f:
            while True:
                start = max(0, size - chunk)
                f.seek(start)
                data = f.read(size - start)
                last_newline = data.rfind(b"\n")
                if start == 0 or (last_newline > 0 and data.rfind(b"\n", 0, last_newline) != -1):
                    return start, data
                chunk *= 4

    def last(self) -> TxRecord | None:
        """The last committed transaction, read from the end of the file."""
        _start, data = self._tail()
        end = data.rfind(b"\n")
        if end == -1:
            return None
        begin = data.rfind(b"\n", 0, end) + 1
        return TxRecord.from_line(data[begin : end + 1])

    def torn_tail(self) -> int | None:
        """The offset of a partial last line (a crash mid-append), or None."""
        start, data = self._tail()
        if not data or data.endswith(b"\n"):
            return None
        return start + data.rfind(b"\n") + 1

    def truncate_torn_tail(self) -> bool:
        offset = self.torn_tail()
        if offset is None:
            return False
        faults.hit("txlog:truncate")
        with self.path.open("r+b") as f:
            f.truncate(offset)
            if self.fsync:
                os.fsync(f.fileno())
        return True

    def next_seq(self) -> int:
        last = self.last()
        return 1 if last is None else last.seq + 1

    def append(self, record: TxRecord) -> int:
        """Commit: append the line and fsync. Returns the file size after it."""
        line = record.to_line()
        offset = append_bytes(self.path, line, fsync=self.fsync, site="txlog")
        return offset + len(line)

    def read_from(self, offset: int = 0) -> Iterator[tuple[int, TxRecord]]:
        """(end offset, record) for each complete line starting at `offset` (a line boundary)."""
        if not self.path.exists():
            return
        with self.path.open("rb") as f:
            f.seek(offset)
            position = offset
            for line in f:
                if not line.endswith(b"\n"):
                    return  # a torn tail is not committed
                position += len(line)
                yield position, TxRecord.from_line(line)
