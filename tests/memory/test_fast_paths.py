"""The import's fast paths decide exactly what the general ones do: a transcript line is read as
`json.loads` reads it (or reported as it reports it), and metadata copied by the one-walk path is the
JSON round trip the general path makes."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dagmem import InvalidInput
from dagmem.memory.adopt._readers import JsonlReader
from dagmem.memory.format import check_metadata
from dagmem.memory.format._limits import _NOT_PLAIN, _plain_copy

LINES = [
    b'{"a": 1}',
    b'{"text": "\\ud800 a lone surrogate"}',
    b'{"key \\udfff": 1}',
    b'\xef\xbb\xbf{"bom": true}',
    b'{"n": NaN, "i": Infinity, "m": -Infinity}',
    b'{"big": ' + b"9" * 4300 + b"}",
    b'{"too big": ' + b"9" * 4301 + b"}",
    b'{"deep": ' + b"[" * 400 + b"]" * 400 + b"}",
    b'{"a": 1} trailing',
    b'{"a": "tab\there"}',
    b'{"a": 1,}',
    b'"\xff not utf-8"',
    b'{"tiny": 1e-400, "huge": 1e400, "neg": -0.0, "exp": 1.5e300}',
    b'{"a": 1, "a": 2}',
    b"  \t ",
    b'{"emoji": "\\ud83d\\ude00", "raw": "\xf0\x9f\x98\x80"}',
]


def strictly(value: Any) -> Any:
    """A value with every scalar's type beside it (so 1, 1.0 and True differ; NaN equals NaN)."""
    if isinstance(value, dict):
        return ("dict", [(strictly(k), strictly(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [strictly(v) for v in value])
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def test_a_transcript_line_is_read_as_json_loads_reads_it_or_reported_as_it_reports_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(LINES) + b"\n")
    got = JsonlReader(path).read(final=True)
    expected: list[Any] = []
    for number, raw in enumerate(LINES, 1):
        if not raw.strip():
            continue
        try:
            expected.append((number, strictly(json.loads(raw))))
        except UnicodeDecodeError:
            expected.append((number, "not UTF-8"))
        except (ValueError, RecursionError) as exc:
            expected.append((number, f"not JSON ({exc}); skipped"))
    shown = [(item.line, strictly(item.value) if hasattr(item, "value") else item.reason) for item in got]
    assert shown == expected


class Text(str):
    pass


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), 10**100]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "plain", "é ü", "\ud800", "😀", Text("a subclass")]),
)
_KEYS = st.one_of(st.sampled_from(["k", "é", "\udfff", "source"]), st.integers(0, 3), st.none())
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner),
        st.dictionaries(_KEYS, inner, max_size=4),
    ),
    max_leaves=20,
)


@settings(max_examples=500, database=None, derandomize=True, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_metadata_copied_in_one_walk_is_the_json_round_trip(metadata: dict[Any, Any]) -> None:
    plain = _plain_copy(metadata, 0)
    if plain is not _NOT_PLAIN:
        round_trip = json.loads(json.dumps(metadata, ensure_ascii=False, allow_nan=False))
        assert strictly(plain) == strictly(round_trip)
    try:
        checked = check_metadata(metadata)
    except InvalidInput:
        assert plain is _NOT_PLAIN
    else:
        assert strictly(checked) == strictly(json.loads(json.dumps(checked, allow_nan=False)))


@pytest.mark.parametrize("depth", [62, 63, 64, 65])
def test_metadata_nested_to_the_limit_is_kept_and_past_it_refused(depth: int) -> None:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    if depth < 64:
        assert check_metadata({"k": value}) == {"k": value}
    else:
        with pytest.raises(InvalidInput, match="nested more than"):
            check_metadata({"k": value})


def test_a_nan_is_never_copied_and_an_int_json_cannot_hold_is_refused() -> None:
    assert _plain_copy({"x": math.nan}, 0) is _NOT_PLAIN
    with pytest.raises(InvalidInput, match="JSON-serialisable"):
        check_metadata({"x": 10**4400})
