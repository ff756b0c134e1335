"""Reading transcript files incrementally: JSON Lines (Claude Code, pi, Codex) and one JSON array (OpenAI
message lists). Each read returns what is new since the last one, with line numbers, so `--follow` feeds
only new lines and a report names `file:line`.

A JSONL line that is not JSON is a `Problem`, never fatal. The last line of a file without its newline is
held back while following (the writer may be mid-line) and read at the end (`final`): a torn last line is
then reported like any other bad line.

A file rewritten in place (a copy-truncate rotation, an editor saving over it: same inode) may have grown
past the offset by the time it is read again, so its size alone cannot tell. The reader keeps the bytes
at its start and just before its offset, and reads the file again from its start when either changed (the
ids dedupe what was imported before)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

# pydantic's JSON parser (a dependency already): 2-3x faster than `json.loads` on a transcript's lines, and
# never more lenient; a line it refuses (a lone surrogate escape, a byte-order mark, nesting past its
# limit) goes to `json.loads`, which reads or reports it as before.
from pydantic_core import from_json

from ._entries import Problem

__all__ = ["ArrayReader", "Item", "JsonlReader", "Reader"]

_PROBE = 256  # bytes compared at the file's start and before the offset to tell a rewrite


@dataclass(slots=True)  # not frozen: a frozen dataclass costs 3x to make, one per line
class Item:
    line: int
    value: Any


class JsonlReader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0  # bytes of the file consumed (whole lines only, unless final)
        self.lineno = 0
        self.restarts = 0  # times the file was replaced or truncated and read again from its start
        self._identity: tuple[int, int] | None = None
        self._head = b""  # the file's first bytes (up to `_PROBE`) when last read
        self._tail = b""  # the bytes just before `offset` (up to `_PROBE`)

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def read(self, *, final: bool) -> list[Item | Problem]:
        try:
            stat = self.path.stat()
            with self.path.open("rb") as f:
                if (
                    self._identity not in (None, (stat.st_dev, stat.st_ino))
                    or stat.st_size < self.offset
                    or not self._same_bytes(f)
                ):
                    self.offset, self.lineno = 0, 0  # replaced or rewritten: read it again (ids dedupe)
                    self._head = self._tail = b""
                    self.restarts += 1
                self._identity = (stat.st_dev, stat.st_ino)
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n") + 1
        if final and end < len(data):
            end = len(data)
        chunk = data[:end]
        if len(self._head) < _PROBE:
            self._head = (self._head + chunk)[:_PROBE]
        self._tail = (self._tail + chunk)[-_PROBE:]
        self.offset += end
        lines = chunk.split(b"\n")
        if chunk.endswith(b"\n"):
            lines.pop()  # the empty string after the last newline is not a line
        out: list[Item | Problem] = []
        for raw in lines:
            self.lineno += 1
            item = self._parse(raw)
            if isinstance(item, Problem) and raw is lines[-1] and not chunk.endswith(b"\n"):
                item = Problem(item.file, item.line, "a torn last line (no newline, not JSON); skipped")
            if item is not None:
                out.append(item)
        return out

    def _same_bytes(self, f: BinaryIO) -> bool:
        """Whether the bytes read before are still where they were (a rewrite in place changes them)."""
        if self.offset == 0:
            return True
        if f.read(len(self._head)) != self._head:
            return False
        f.seek(self.offset - len(self._tail))
        return f.read(len(self._tail)) == self._tail

    def _parse(self, raw: bytes) -> Item | Problem | None:
        text = raw.rstrip(b"\r")
        if not text or text.isspace():
            return None
        try:
            return Item(self.lineno, from_json(text))
        except ValueError:
            pass  # not JSON to the fast parser: the standard one decides, and says why
        try:
            return Item(self.lineno, json.loads(text))
        except UnicodeDecodeError:
            return Problem(str(self.path), self.lineno, "not UTF-8")
        except (ValueError, RecursionError) as exc:
            return Problem(str(self.path), self.lineno, f"not JSON ({exc}); skipped")


class ArrayReader:
    """A JSON array of messages (or an object with a `messages` array), read whole when it changes; each
    read returns the elements past those returned before, each with the line it starts on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seen = 0
        self.restarts = 0
        self._stamp: tuple[int, int] | None = None
        self.offset = 0
        self._digests: list[bytes] = []  # of the elements returned, to tell a rewrite that kept the count

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def read(self, *, final: bool) -> list[Item | Problem]:
        try:
            stat = self.path.stat()
            if (stat.st_size, stat.st_mtime_ns) == self._stamp:
                return []
            text = self.path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return []
        except UnicodeDecodeError:
            return [Problem(str(self.path), 1, "not UTF-8")]
        elements = _elements(text)
        if isinstance(elements, Problem):
            # While following, a half-written file is tried again when it changes; at the end it is reported.
            return [Problem(str(self.path), elements.line, elements.reason)] if final else []
        self._stamp = (stat.st_size, stat.st_mtime_ns)
        self.offset = stat.st_size
        elements = [
            Problem(str(self.path), e.line, e.reason) if isinstance(e, Problem) else e for e in elements
        ]
        digests = [_digest(e.reason if isinstance(e, Problem) else e.value) for e in elements]
        if digests[: self.seen] != self._digests:  # rewritten: read it again from its start (ids dedupe)
            self.seen = 0
            self.restarts += 1
        new = elements[self.seen :]
        self.seen = len(elements)
        self._digests = digests
        return list(new)


def _digest(value: Any) -> bytes:
    try:
        body = json.dumps(value, sort_keys=True, ensure_ascii=True, default=str)
    except (ValueError, RecursionError):
        body = repr(type(value))  # too deep to render: compared by position only
    return hashlib.sha256(body.encode()).digest()


def _elements(text: str) -> list[Item | Problem] | Problem:
    """The elements of a top-level JSON array (or `{"messages": [...]}`), each with its starting line; an
    element nested too deep to decode is a `Problem` in its place, and the elements after it are read."""
    decoder = json.JSONDecoder()

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    pos = _skip(text, 0)
    if text.startswith("{", pos):
        try:
            whole = json.loads(text)
        except (ValueError, RecursionError) as exc:
            return Problem("", 1, f"not JSON ({exc})")
        messages = whole.get("messages") if isinstance(whole, dict) else None
        if not isinstance(messages, list):
            return Problem("", 1, "a JSON object without a 'messages' array")
        start = text.find('"messages"')
        return [Item(line_of(start), m) for m in messages]
    if not text.startswith("[", pos):
        return Problem("", line_of(pos), "not a JSON array of messages")
    items: list[Item | Problem] = []
    pos = _skip(text, pos + 1)
    if text.startswith("]", pos):
        return items
    while True:
        try:
            value, end = decoder.raw_decode(text, pos)
        except RecursionError:
            deep_end = _value_end(text, pos)
            if deep_end is None:
                return Problem("", line_of(pos), "not JSON (an unterminated value)")
            end = deep_end
            items.append(Problem("", line_of(pos), "a message nested too deep to read; skipped"))
        except ValueError as exc:
            return Problem("", line_of(pos), f"not JSON ({exc})")
        else:
            items.append(Item(line_of(pos), value))
        pos = _skip(text, end)
        if text.startswith(",", pos):
            pos = _skip(text, pos + 1)
            continue
        if text.startswith("]", pos):
            return items
        return Problem("", line_of(pos), "expected ',' or ']' in the message array")


def _value_end(text: str, pos: int) -> int | None:
    """Where the array or object starting at `pos` ends, found without decoding it (no recursion): its
    brackets counted outside strings. None when it does not end."""
    depth = 0
    i = pos
    while i < len(text):
        char = text[i]
        if char == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


Reader = JsonlReader | ArrayReader
