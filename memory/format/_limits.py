"""What one turn may hold, stated once: the store's `append` and the archive's `render_frame` both ask here,
so a turn the store accepts is always one the archive can hold (a refused record would block its branch:
every later turn stays unwritten behind it).

- content: a `str` that UTF-8 can encode (no lone surrogates), at most `MAX_CONTENT_BYTES` bytes of UTF-8
  and `MAX_RECORD_LINES` lines (split on `\\n`, as the archive frames it);
- metadata: a JSON object with string keys, nested at most `MAX_METADATA_DEPTH` deep, no NaN or infinity
  (JSON has none: it would be stored as `null`), every string UTF-8-encodable.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Final

from ..errors import InvalidInput

__all__ = [
    "MAX_CONTENT_BYTES",
    "MAX_METADATA_DEPTH",
    "MAX_RECORD_LINES",
    "MAX_SEQ",
    "check_content",
    "check_metadata",
    "content_problem",
    "time_problem",
]

MAX_RECORD_LINES: Final = 1_000_000
MAX_CONTENT_BYTES: Final = 8 * 1024 * 1024
MAX_METADATA_DEPTH: Final = 64
MAX_SEQ: Final = 2**63 - 1  # a node's position, as the archive's frame holds it
# Epoch seconds a time can be (UTC years 1 to 9999, what `datetime` and ISO-8601 dates can show).
MIN_TIME: Final = -62_135_596_800.0
MAX_TIME: Final = 253_402_300_799.0


def content_problem(content: object) -> str | None:
    """Why `content` cannot be a turn's text, or None if it can."""
    if not isinstance(content, str):
        return f"content must be a string, not {type(content).__name__}"
    if len(content) > MAX_CONTENT_BYTES:  # every character is at least one byte: no need to encode
        return f"content is {len(content):,} characters, more than {MAX_CONTENT_BYTES:,} bytes (at most)"
    try:
        size = len(content.encode())
    except UnicodeEncodeError as error:
        return f"content holds a lone surrogate at character {error.start} (not encodable as UTF-8)"
    if size > MAX_CONTENT_BYTES:
        return f"content is {size:,} bytes of UTF-8 (at most {MAX_CONTENT_BYTES:,})"
    lines = content.count("\n") + 1
    if lines > MAX_RECORD_LINES:
        return f"content has {lines:,} lines (at most {MAX_RECORD_LINES:,})"
    return None


def time_problem(value: object) -> str | None:
    """Why `value` cannot be a time in epoch seconds (a node's `created_at`, a session's times), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{value!r} is not a number of epoch seconds"
    if not math.isfinite(value) or not MIN_TIME <= value <= MAX_TIME:
        return f"{value!r} is not a time (epoch seconds of a year from 1 to 9999)"
    return None


def check_content(content: object, where: str = "") -> str:
    """`content` if a turn may hold it, else `InvalidInput` naming the problem (prefixed by `where`)."""
    problem = content_problem(content)
    if problem is not None:
        raise InvalidInput(f"{where}: {problem}" if where else problem)
    assert isinstance(content, str)
    return content


# Where a value sits in the metadata: its parent's place and its key (an index in a list), with " (key)"
# for the key itself; spelled out (`_spelled`) only when there is a problem to name.
_Place = tuple["_Place | None", object, bool] | None


def _spelled(place: _Place) -> str:
    parts: list[str] = []
    while place is not None:
        place, key, is_key = place
        parts.append(f"[{key!r}] (key)" if is_key else f"[{key!r}]" if isinstance(key, str) else f"[{key}]")
    return "".join(reversed(parts))


def _value_problem(
    value: object, place: _Place, depth: int, stack: list[tuple[object, _Place, int]]
) -> str | None:
    """One value of the walk: why it is not JSON we keep, or None (containers push their items)."""
    if value is None or isinstance(value, bool | int):
        return None
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        return f"metadata{_spelled(place)} is {value!r} (JSON has no NaN or infinity)"
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError as error:
            return f"metadata{_spelled(place)} holds a lone surrogate at character {error.start} (not UTF-8)"
        return None
    if isinstance(value, Mapping | list | tuple):
        if depth >= MAX_METADATA_DEPTH:
            return f"metadata{_spelled(place)} is nested more than {MAX_METADATA_DEPTH} deep"
        if isinstance(value, Mapping):
            for key, item in value.items():
                if not isinstance(key, str):
                    return f"metadata{_spelled(place)} has a key {key!r} that is not a string"
                stack.append((key, (place, key, True), depth + 1))
                stack.append((item, (place, key, False), depth + 1))
        else:
            stack.extend((item, (place, i, False), depth + 1) for i, item in enumerate(value))
        return None
    return f"metadata{_spelled(place)} is a {type(value).__name__}, which JSON cannot hold"


def check_metadata(metadata: object) -> dict[str, Any]:
    """A JSON-clean copy of a node's metadata (None: `{}`), or `InvalidInput` naming the first problem.
    The walk is iterative, so no nesting or cycle can exhaust the stack."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInput(f"metadata must be a mapping (a JSON object), not {type(metadata).__name__}")
    plain = _plain_copy(metadata, 0)
    if plain is not _NOT_PLAIN:
        assert isinstance(plain, dict)
        return plain
    copy = _plain_json_copy(metadata)
    if copy is not None:
        return copy
    stack: list[tuple[object, _Place, int]] = [(metadata, None, 0)]
    while stack:
        problem = _value_problem(*stack.pop(), stack)
        if problem is not None:
            raise InvalidInput(problem)
    try:
        return dict(json.loads(json.dumps(dict(metadata), ensure_ascii=False, allow_nan=False)))
    except (TypeError, ValueError) as exc:  # e.g. an int beyond Python's 4,300-digit str limit
        raise InvalidInput(f"metadata must be JSON-serialisable: {exc}") from None


_NOT_PLAIN: Final = object()
_INT_LIMIT: Final = 2**63  # beyond it an int takes the JSON round trip (which refuses a 4,300-digit one)


def _plain_text(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _plain_copy(value: object, depth: int) -> object:
    """The common case, copied in one walk (an import checks every turn's metadata): plain dicts with
    string keys, lists, strings that UTF-8 can encode, ints, finite floats, booleans and None, nested
    less than the depth allowed; exactly what JSON's round trip gives. `_NOT_PLAIN` for anything else
    (a tuple, a subclass, a NaN, ...), which the checks below decide and name."""
    kind = type(value)  # exact types only: a subclass may encode otherwise
    if value is None:
        return None
    if isinstance(value, str):
        return value if kind is str and _plain_text(value) else _NOT_PLAIN
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if kind is int and -_INT_LIMIT < value < _INT_LIMIT else _NOT_PLAIN
    if isinstance(value, float):
        return value if kind is float and math.isfinite(value) else _NOT_PLAIN
    if depth >= MAX_METADATA_DEPTH:
        return _NOT_PLAIN
    if isinstance(value, dict) and kind is dict:
        copied: dict[str, object] = {}
        for key, item in value.items():
            if type(key) is not str or not _plain_text(key):
                return _NOT_PLAIN
            found = _plain_copy(item, depth + 1)
            if found is _NOT_PLAIN:
                return _NOT_PLAIN
            copied[key] = found
        return copied
    if isinstance(value, list) and kind is list:
        items: list[object] = []
        for item in value:
            found = _plain_copy(item, depth + 1)
            if found is _NOT_PLAIN:
                return _NOT_PLAIN
            items.append(found)
        return items
    return _NOT_PLAIN


_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode  # made once: `dumps` makes one a call
_DECODE = json.JSONDecoder().decode


def _plain_json_copy(metadata: Mapping[str, Any]) -> dict[str, Any] | None:
    """The common case in one pass of the C encoder (an import checks every turn's metadata): metadata
    that JSON holds as it is (plain dicts and lists, string keys, no NaN, UTF-8-encodable) and that cannot
    be nested too deep (fewer brackets in its JSON than the depth allowed) is its own round trip. None
    when the walk must decide (and name the problem): the copy differs (a tuple, a key that is no
    string), or the encoder refused it."""
    try:
        text = _ENCODE(metadata)
    except (TypeError, ValueError, RecursionError):
        return None
    if text.count("{") + text.count("[") > MAX_METADATA_DEPTH:
        return None
    try:
        text.encode()
    except UnicodeEncodeError:
        return None
    copy = _DECODE(text)
    return copy if isinstance(copy, dict) and copy == metadata else None
