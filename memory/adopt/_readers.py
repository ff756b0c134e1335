"""Reading transcript files incrementally: JSON Lines (Claude Code, pi, Codex) and one JSON array (OpenAI
message lists). Each read returns what is new since the last one, with line numbers, so `--follow` feeds
only new lines and a report names `file:line`.

A JSONL line that is not JSON is a `Problem`, never fatal. The last line of a file without its newline is
held back while following (the writer may be mid-line) and read at the end (`final`): a torn last line is
then reported like any other bad line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._entries import Problem

__all__ = ["ArrayReader", "Item", "JsonlReader", "Reader"]


@dataclass(frozen=True)
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

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def read(self, *, final: bool) -> list[Item | Problem]:
        try:
            stat = self.path.stat()
            if self._identity not in (None, (stat.st_dev, stat.st_ino)) or stat.st_size < self.offset:
                self.offset, self.lineno = 0, 0  # replaced or truncated: read it again (ids dedupe)
                self.restarts += 1
            self._identity = (stat.st_dev, stat.st_ino)
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n") + 1
        if final and end < len(data):
            end = len(data)
        self.offset += end
        chunk = data[:end]
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

    def _parse(self, raw: bytes) -> Item | Problem | None:
        text = raw.rstrip(b"\r")
        if not text.strip():
            return None
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
        if len(elements) < self.seen:  # rewritten shorter: read it again from its start (ids dedupe)
            self.seen = 0
            self.restarts += 1
        new = elements[self.seen :]
        self.seen = len(elements)
        return list(new)


def _elements(text: str) -> list[Item] | Problem:
    """The elements of a top-level JSON array (or `{"messages": [...]}`), each with its starting line."""
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
    items: list[Item] = []
    pos = _skip(text, pos + 1)
    if text.startswith("]", pos):
        return items
    while True:
        try:
            value, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:
            return Problem("", line_of(pos), f"not JSON ({exc})")
        items.append(Item(line_of(pos), value))
        pos = _skip(text, end)
        if text.startswith(",", pos):
            pos = _skip(text, pos + 1)
            continue
        if text.startswith("]", pos):
            return items
        return Problem("", line_of(pos), "expected ',' or ']' in the message array")


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


Reader = JsonlReader | ArrayReader
