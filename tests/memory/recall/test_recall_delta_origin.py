"""A turn whose origin is not its role's default (a tool's text in a user turn, an imported turn) is kept in
the recall cache's delta log with its origin, an eighth field of its source: a reader takes that line as it
was written, never as damage (which would warn on every read and leave the cache unused for good)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.memory.recall import RecallIndex, RecallQuery, compact, recall_root, search
from dagmem.memory.writing import write_home


@pytest.mark.parametrize("origin", ["tool", "imported"])
def test_a_delta_line_citing_a_turn_of_another_origin_is_read_as_written(
    tmp_path: Path, origin: str, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    store = FileSessionStore(home, fsync=False)
    store.append("a", "user", "The ferry to the island leaves at seven from pier three.")
    write_home(home, force=True)
    compact(home / "memory", fsync=False)  # what follows is a line of the delta log, not the snapshot
    store.append("a", "user", "The ferry timetable changes in winter to six.", origin=origin)
    store.append("a", "assistant", "Noted the winter ferry timetable.")
    write_home(home, force=True)
    snapshot = max(p for p in recall_root(home / "memory").iterdir() if p.name.startswith("snap-"))
    assert f'"{origin}"]' in (snapshot / "delta.jsonl").read_text()  # the eighth field is there

    with caplog.at_level(logging.WARNING):
        index = RecallIndex.open(home / "memory")
        hits = search(index, RecallQuery("winter ferry timetable"))
    assert not index.delta_broken
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert origin in {e.origin for hit in hits for e in hit.evidence}
