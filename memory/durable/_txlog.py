"""The transaction log `.dagmem/txlog.jsonl`: one line per committed transaction (DESIGN §2).

Its fsynced append is a transaction's commit point. Every line is a transaction: a blank or unreadable
line is damage (`TxlogCorrupt`), never skipped. The end of the file is judged by `recover_tail`, under the
workspace lock, from the stages present: a crash mid-append leaves a partial line *and* the stage of its
transaction (staged before the line, removed only after its files moved), so only a partial line whose
stage exists is a torn write, and truncated. A last line that parses and has no stage was committed and
applied and only lost its newline (an editor trimming the file): the newline is restored. Anything else at
the end is a damaged committed line, refused, and nothing is changed. The last line is found by reading
backwards from the end, so committing is O(1) in the size of the log."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Literal

from .. import faults
from ..format import TxlogCorrupt, TxRecord
from ._atomic import append_bytes
from ._end import holds_last_line, read_end

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
        try:
            return read_end(self.path, holds_last_line)
        except FileNotFoundError:
            return 0, b""

    def last(self) -> TxRecord | None:
        """The last committed transaction, read from the end of the file."""
        start, data = self._tail()
        end = data.rfind(b"\n")
        if end == -1:
            return None
        begin = data.rfind(b"\n", 0, end) + 1
        return self._parse(data[begin : end + 1], start + begin)

    def recover_tail(self, stages: Collection[str]) -> Literal["clean", "truncated", "restored"]:
        """Judge the end of the file (see the module docstring), given the names of the stages present.

        "truncated": a torn append (or blank lines after the last line, which hold nothing) was cut off;
        "restored": the last line's missing newline was put back. Raises `TxlogCorrupt`, changing nothing,
        when the last line is damaged and no crash explains it."""
        start, data = self._end()
        body_end = len(data.rstrip(b"\n"))
        if body_end == 0:  # empty, or nothing but blank lines
            return "clean" if not data else self._truncate(0)
        begin = data.rfind(b"\n", 0, body_end) + 1
        line = data[begin:body_end]
        if body_end < len(data):  # the last line is complete
            if body_end + 1 == len(data):
                return "clean"
            self._parse(line, start + begin)  # cut blank lines only after a good line
            return self._truncate(start + body_end + 1)
        try:
            record = TxRecord.from_line(line)
        except TxlogCorrupt as exc:
            if any(_may_begin(line, stage) for stage in stages):
                return self._truncate(start + begin)
            raise TxlogCorrupt(
                f"the last line is incomplete ({exc.reason}) and no stage of its transaction exists, so it "
                "is not a torn append but a damaged committed line",
                path=self.path,
                line=self._line_number(start + begin),
            ) from None
        if record.tx in stages:  # whole but for its newline, never fsynced as a line: not committed
            return self._truncate(start + begin)
        append_bytes(self.path, b"\n", fsync=self.fsync, site="txlog")
        return "restored"

    def _end(self) -> tuple[int, bytes]:
        """(offset, bytes) of an end of the file that holds its last non-blank line whole."""

        def holds_last_body_line(data: bytes) -> bool:
            body_end = len(data.rstrip(b"\n"))
            return body_end > 0 and data.rfind(b"\n", 0, body_end) >= 0

        try:
            return read_end(self.path, holds_last_body_line)
        except FileNotFoundError:
            return 0, b""

    def _truncate(self, offset: int) -> Literal["truncated"]:
        faults.hit("txlog:truncate")
        with self.path.open("r+b") as f:
            f.truncate(offset)
            if self.fsync:
                os.fsync(f.fileno())
        return "truncated"

    def _parse(self, line: bytes, offset: int) -> TxRecord:
        try:
            return TxRecord.from_line(line)
        except TxlogCorrupt as exc:
            raise exc.at(self.path, self._line_number(offset)) from None

    def _line_number(self, offset: int) -> int:
        """The 1-based number of the line starting at `offset` (reads the file up to it: errors only)."""
        with self.path.open("rb") as f:
            return f.read(offset).count(b"\n") + 1

    def next_seq(self) -> int:
        last = self.last()
        return 1 if last is None else last.seq + 1

    def append(self, record: TxRecord) -> int:
        """Commit: append the line and fsync. Returns the file size after it."""
        line = record.to_line()
        offset = append_bytes(self.path, line, fsync=self.fsync, site="txlog")
        return offset + len(line)

    def read_from(self, offset: int = 0) -> Iterator[tuple[int, TxRecord]]:
        """(end offset, record) for each complete line starting at `offset` (a line boundary). A partial
        last line, or blank lines after the last line, are not lines (yet): `recover_tail` decides about
        them. Raises `TxlogCorrupt` (with the file and line number) at any other line that does not parse."""
        if not self.path.exists():
            return
        with self.path.open("rb") as f:
            f.seek(offset)
            position = offset
            for line in f:
                if not line.endswith(b"\n"):
                    return
                if line == b"\n" and not f.read().strip(b"\n"):
                    return
                yield position + len(line), self._parse(line, position)
                position += len(line)


def _may_begin(partial: bytes, stage: str) -> bool:
    """Whether `partial` can be the start of the line of transaction `stage` (its first field is the tx)."""
    head = b'{"tx":"' + stage.encode() + b'"'
    return head.startswith(partial) or partial.startswith(head)
