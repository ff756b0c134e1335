"""Reading the end of an append-only file (the txlog, the recall delta): O(last lines), not O(file)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["holds_last_line", "read_end"]


def read_end(path: Path, enough: Callable[[bytes], bool], *, chunk: int = 4096) -> tuple[int, bytes]:
    """(offset, bytes) of the shortest end of `path`, growing fourfold from `chunk` bytes, for which
    `enough(bytes)` holds, or of the whole file. Raises FileNotFoundError for a missing file."""
    size = path.stat().st_size
    if size == 0:
        return 0, b""
    with path.open("rb") as f:
        while True:
            start = max(0, size - chunk)
            f.seek(start)
            data = f.read(size - start)
            if start == 0 or enough(data):
                return start, data
            chunk *= 4


def holds_last_line(data: bytes) -> bool:
    """`data` (an end of a file) holds the file's last complete line whole, with whatever follows it."""
    last = data.rfind(b"\n")
    return last > 0 and data.rfind(b"\n", 0, last) != -1
