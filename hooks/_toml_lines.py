"""Where the top-level statements of a TOML file are, by position: what `dagmem install codex` needs to
set or take out one key without rewriting the file (a TOML writer would drop the user's comments and
layout).

`statements(text)` walks the file as TOML reads it: a `key = value` whose value spans several lines (an
array, a multi-line string) is one statement, and nothing inside a string or an array is ever taken for a
statement of its own (a `notify = ...` line inside a user's multi-line string is text, not a key; a `[`
opening a line inside an array is no table). The file is expected to parse already (`tomllib` first); a
construct this walk does not follow raises `Unfollowable`, and the caller refuses the edit rather than
guess. Iterative throughout: a file nested thousands deep costs no recursion."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from typing import Literal

from ..memory.errors import InvalidInput

__all__ = ["Statement", "Unfollowable", "statements"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class Unfollowable(InvalidInput):
    """The file holds something this walk does not follow (the caller refuses to edit it)."""


@dataclass(frozen=True)
class Statement:
    kind: Literal["comment", "table", "key"]
    key: tuple[str, ...]  # a key's (or a table header's) dotted parts; () for a comment
    start: int  # where its line starts (its indentation included)
    begin: int  # where the statement itself starts (the key, `[`, `#`)
    end: int  # where the key's value (or the header, or the comment) ends
    line_end: int  # after its last line's newline (or the end of the file)


def statements(text: str) -> list[Statement]:
    """The file's top-level statements in order (blank lines are none)."""
    out: list[Statement] = []
    n, i = len(text), 0
    while i < n:
        start = i
        i = _blanks(text, i)
        if i >= n:
            break
        if text[i] in "\r\n":
            i = _newline(text, i)
            continue
        begin = i
        if text[i] == "#":
            end = _line_rest(text, i)
            out.append(Statement("comment", (), start, begin, end, _newline(text, end)))
            i = out[-1].line_end
            continue
        if text[i] == "[":
            double = text.startswith("[[", i)
            key, i = _key(text, i + (2 if double else 1))
            close = "]]" if double else "]"
            if not text.startswith(close, i):
                raise Unfollowable(f"a table header without its {close!r} at character {i}")
            end = i + len(close)
            kind: Literal["table", "key"] = "table"
        else:
            key, i = _key(text, i)
            if i >= n or text[i] != "=":
                raise Unfollowable(f"a key without '=' at character {i}")
            i = _blanks(text, i + 1)
            end = _value_end(text, i)
            kind = "key"
        out.append(Statement(kind, key, start, begin, end, _after(text, end)))
        i = out[-1].line_end
    return out


def _blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _newline(text: str, i: int) -> int:
    """After the newline at `i` (the end of the file stays the end)."""
    if text.startswith("\r\n", i):
        return i + 2
    if i < len(text) and text[i] == "\n":
        return i + 1
    if i >= len(text):
        return i
    raise Unfollowable(f"more on a line after a statement, at character {i}")


def _line_rest(text: str, i: int) -> int:
    """Where the line holding `i` ends (at its newline, not after it)."""
    while i < len(text) and text[i] not in "\r\n":
        i += 1
    return i


def _after(text: str, i: int) -> int:
    """After a statement ending at `i`: its blanks, its comment, its newline."""
    i = _blanks(text, i)
    if i < len(text) and text[i] == "#":
        i = _line_rest(text, i)
    return _newline(text, i)


def _key(text: str, i: int) -> tuple[tuple[str, ...], int]:
    """A dotted key's parts (quoted parts decoded as TOML decodes them) and where the key ends (after its
    trailing blanks)."""
    parts: list[str] = []
    while True:
        i = _blanks(text, i)
        if i < len(text) and text[i] in "\"'":
            end = _string_end(text, i)
            if text.startswith(text[i] * 3, i):
                raise Unfollowable(f"a multi-line string as a key at character {i}")
            parts.append(_decode(text[i:end]))
            i = end
        else:
            match = _BARE_KEY.match(text, i)
            if match is None:
                raise Unfollowable(f"no key at character {i}")
            parts.append(match.group())
            i = match.end()
        i = _blanks(text, i)
        if i < len(text) and text[i] == ".":
            i += 1
            continue
        return tuple(parts), i


def _decode(quoted: str) -> str:
    """A quoted key's value, decoded by TOML's own rules (escapes and all)."""
    value = tomllib.loads(f"k = {quoted}")["k"]
    assert isinstance(value, str)
    return value


def _string_end(text: str, i: int) -> int:
    """After the string opening at `i`: basic or literal, on one line or several."""
    quote = text[i]
    escapes = quote == '"'
    if text.startswith(quote * 3, i):
        j = i + 3
        while True:
            found = text.find(quote * 3, j)
            if found < 0:
                raise Unfollowable(f"a multi-line string that does not end, from character {i}")
            if escapes and _escaped(text, found):
                j = found + 1
                continue
            end = found + 3
            extra = 0  # up to two quotes before the closing three belong to the string
            while extra < 2 and end < len(text) and text[end] == quote:
                end, extra = end + 1, extra + 1
            return end
    j = i + 1
    while j < len(text) and text[j] not in "\r\n":
        if escapes and text[j] == "\\":
            j += 2
            continue
        if text[j] == quote:
            return j + 1
        j += 1
    raise Unfollowable(f"a string that does not end on its line, from character {i}")


def _escaped(text: str, at: int) -> bool:
    """Whether the character at `at` follows an odd run of backslashes (an escaped quote)."""
    count, j = 0, at - 1
    while j >= 0 and text[j] == "\\":
        count, j = count + 1, j - 1
    return count % 2 == 1


def _value_end(text: str, i: int) -> int:
    """Where the value starting at `i` ends: a string, an array or inline table (however many lines,
    comments and strings it holds), or a bare value (a number, a date, a boolean) up to its comment or
    line's end."""
    n = len(text)
    if i >= n:
        raise Unfollowable("a key without a value at the end of the file")
    if text[i] in "\"'":
        return _string_end(text, i)
    if text[i] in "[{":
        depth = 0
        while i < n:
            c = text[i]
            if c in "\"'":
                i = _string_end(text, i)
                continue
            if c == "#":
                i = _line_rest(text, i)
                continue
            if c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        raise Unfollowable("an array or inline table that does not end")
    j = i
    while j < n and text[j] not in "#\r\n":
        j += 1
    return i + len(text[i:j].rstrip(" \t"))
