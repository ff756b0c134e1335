"""Checked against the code: is what an edit wrote still in its file? (docs/formats.md, "Git context")

When an edit is imported and its file exists on this machine, the record keeps the file's path relative
to the worktree's root and `cited_of` the text it wrote: its non-blank lines, each stripped (so a
re-indent or a formatter's blank lines change nothing), as `<lines>:<crc32 of the first, 8 hex>:<sha256
of all joined by \\n, 16 hex>` (at most `CITED_LINES` lines: a file written whole is known by its head).

`check` decides, for a reader's worktree, at a bounded cost: one `stat`; a missing file is `gone`; a file
over `READ_BYTES` is not read and counts as holding (it cannot be checked cheaply); otherwise it is read
and the cited lines looked for as a run of its own normalised lines (the crc of each line finds where the
run may start; the sha256 of the run decides), else it `changed`, with its modification date.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Literal

__all__ = ["CITED_LINES", "READ_BYTES", "CodeCheck", "check", "cited_of"]

CITED_LINES: Final = 200
READ_BYTES: Final = 512 << 10

CodeState = Literal["holds", "changed", "gone"]


@dataclass(frozen=True, slots=True)
class CodeCheck:
    """A cited file as the reader's worktree has it: `changed` carries the file's modification date."""

    path: str
    state: CodeState
    since: str | None = None  # YYYY-MM-DD: when the file was last modified (`changed`)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _crc(line: str) -> int:
    return zlib.crc32(line.encode("utf-8", "surrogatepass"))


def cited_of(text: str) -> str | None:
    """The cited-text key of `text` (None when it has no non-blank line: a deletion cites nothing)."""
    lines = _lines(text)[:CITED_LINES]
    if not lines:
        return None
    return f"{len(lines)}:{_crc(lines[0]):08x}:{_digest(lines)}"


def _holds(data: bytes, cited: str) -> bool:
    count, first, whole = cited.split(":")
    n, start = int(count), int(first, 16)
    lines = _lines(data.decode("utf-8", "replace"))
    for i in range(len(lines) - n + 1):
        if _crc(lines[i]) == start and _digest(lines[i : i + n]) == whole:
            return True
    return False


def check(root: str, path: str, cited: str | None) -> CodeCheck:
    """`path` (relative to the worktree `root`) against what was cited of it (None: its existence only)."""
    full = os.path.join(root, path)
    try:
        stat = os.stat(full)
    except OSError:
        return CodeCheck(path, "gone")
    if cited is None or stat.st_size > READ_BYTES:
        return CodeCheck(path, "holds")
    try:
        with open(full, "rb") as f:
            data = f.read(READ_BYTES)
    except OSError:
        return CodeCheck(path, "gone")
    if _holds(data, cited):
        return CodeCheck(path, "holds")
    since = datetime.fromtimestamp(stat.st_mtime, UTC).strftime("%Y-%m-%d")
    return CodeCheck(path, "changed", since)
