"""`dagmem.load_scope(path)`: a path given as a `str` or any `os.PathLike` (not only a `Path`); a scope
file's booleans are JSON's `true` and `false` only ("no", "yes", 0 and 1 are refused naming the field);
every mistake is `InvalidInput` naming the file, never a crash."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dagmem import InvalidInput, Scope, load_scope


class _PathLike(os.PathLike[str]):
    def __init__(self, path: Path) -> None:
        self.path = path

    def __fspath__(self) -> str:
        return str(self.path)


def test_a_path_as_str_pathlike_or_path_reads_the_same_scope(tmp_path: Path) -> None:
    path = tmp_path / "reader.json"
    path.write_text(json.dumps({"sessions": ["a*"], "held": False, "read_only": True}))
    expected = Scope(sessions=("a*",), read_only=True)
    assert load_scope(str(path)) == expected
    assert load_scope(_PathLike(path)) == expected
    assert load_scope(path) == expected
    with pytest.raises(InvalidInput, match=r"str or os\.PathLike"):
        load_scope(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["held", "core", "read_only"])
@pytest.mark.parametrize("value", ["no", "yes", "true", 0, 1, None])
def test_a_boolean_field_is_true_or_false_only(tmp_path: Path, field: str, value: object) -> None:
    path = tmp_path / "reader.json"
    path.write_text(json.dumps({field: value}))
    with pytest.raises(InvalidInput) as refused:
        load_scope(path)
    message = str(refused.value)
    assert str(path) in message
    assert f"{field}: must be true or false" in message
    assert "\n" not in message


def test_true_and_false_are_read_and_a_file_nested_deep_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "reader.json"
    path.write_text(json.dumps({"held": True, "core": False, "read_only": True}))
    assert load_scope(path) == Scope(held=True, core=False, read_only=True)
    path.write_text('{"sessions": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(InvalidInput, match="not JSON"):
        load_scope(path)
