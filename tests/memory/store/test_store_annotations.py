"""`annotate_branch`: people's annotations of a tip (archived, name, merged) are kept in meta.json, survive
a reopen, can be undone, and a tip that does not exist is refused with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.memory.errors import UnknownNode


def test_annotations_of_a_tip_are_kept_and_undone(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path, fsync=False)
    first = store.append("s", "user", "hello")
    tip = store.append("s", "assistant", "hi").id
    store.annotate_branch("s", tip, archived=True, name="greeting", merged=True)
    meta = json.loads((tmp_path / "sessions" / "s" / "meta.json").read_text())
    assert meta["branches"][tip] == {"archived": True, "name": "greeting"}
    assert meta["merged"] == [tip]
    reopened = FileSessionStore(tmp_path, fsync=False).load("s").meta
    assert reopened.branches[tip].archived
    assert reopened.branches[tip].name == "greeting"
    assert reopened.merged == [tip]
    store.annotate_branch("s", tip, merged=True)  # twice: listed once
    store.annotate_branch("s", tip, archived=False, merged=False)
    meta_after = FileSessionStore(tmp_path, fsync=False).load("s").meta
    assert not meta_after.branches[tip].archived
    assert meta_after.branches[tip].name == "greeting"
    assert meta_after.merged == []
    assert first.id not in meta_after.branches


def test_an_unknown_tip_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path, fsync=False)
    store.append("s", "user", "hello")
    meta = tmp_path / "sessions" / "s" / "meta.json"
    before = meta.read_bytes()
    with pytest.raises(UnknownNode):
        store.annotate_branch("s", "nope", archived=True)
    assert meta.read_bytes() == before
