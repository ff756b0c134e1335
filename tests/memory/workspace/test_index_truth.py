"""The SQLite index is a cache of the archives; when it and the files disagree, the files win (issue 28).

A full disk made an index write fail after its archive append: the appender went on believing its ids
recorded, the index recorded the archive's length without them, the session failed for good ("does not
resolve to an archived record"), and the next forced write appended frames already in the file."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dagmem.memory.format import ArchiveRecord, anchor_of, render_frame, scan_archive
from dagmem.memory.workspace import Workspace

WSID = "w-" + "1" * 16


def record(node_id: str) -> ArchiveRecord:
    return ArchiveRecord("s", node_id, "user", int(node_id[1:]), 1_750_000_000.0, f"turn {node_id}")


def frames(memory: Path) -> list[str]:
    scan = scan_archive((memory / "sources" / "s.md").read_bytes(), "s")
    assert scan.status == "complete", scan.reason
    return [frame.node_id for frame in scan.frames]


def full_disk_once(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """The next index write of an archive fails as SQLite does on a full disk (the append before it
    succeeded)."""
    real = workspace.index.set_archive
    calls = 0

    def set_archive(*args: Any, **kwargs: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise sqlite3.OperationalError("database or disk is full")
        real(*args, **kwargs)

    monkeypatch.setattr(workspace.index, "set_archive", set_archive)


def test_ids_whose_index_write_failed_are_learnt_from_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    with Workspace(memory, workspace_id=WSID) as workspace:
        workspace.archive("s", [record("n1")])
        full_disk_once(workspace, monkeypatch)
        with pytest.raises(sqlite3.OperationalError):
            workspace.archive("s", [record("n2"), record("n3")])  # in the file, not in the index
        # The retry appends nothing twice, and the index learns n2 and n3 from the file.
        assert workspace.archive("s", [record("n2"), record("n3"), record("n4")]) == ["s/n4"]
        for node_id in ("n1", "n2", "n3", "n4"):
            assert workspace.is_archived("s", anchor_of(f"s/{node_id}")), node_id
    assert frames(memory) == ["n1", "n2", "n3", "n4"]
    with Workspace(memory) as again:  # a fresh process trusts the index only as far as the file bears it out
        assert again.archive("s", [record("n3"), record("n5")]) == ["s/n5"]
        assert again.is_archived("s", anchor_of("s/n2"))
    assert frames(memory) == ["n1", "n2", "n3", "n4", "n5"]


def test_a_citation_of_a_frame_the_index_lost_resolves_from_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch whose index write failed is cited by the next one: the topic validates (the file has the
    frame), instead of failing for good with "does not resolve to an archived record"."""
    memory = tmp_path / "memory"
    with Workspace(memory, workspace_id=WSID) as workspace:
        workspace.archive("s", [record("n1")])
        full_disk_once(workspace, monkeypatch)
        with pytest.raises(sqlite3.OperationalError):
            workspace.archive("s", [record("n2")])
        assert workspace.is_archived("s", anchor_of("s/n2"))
        assert not workspace.is_archived("s", anchor_of("s/n9"))


def lose_ids(memory: Path, *node_ids: str, old_schema: bool = False) -> None:
    """Damage the index as the old code did: the archive's length stays, some of its ids go."""
    db = sqlite3.connect(memory / ".dagmem" / "index.sqlite3")
    with db:
        db.executemany("DELETE FROM archived WHERE source_id = ?", [(f"s/{n}",) for n in node_ids])
        if old_schema:
            db.execute("PRAGMA user_version = 0")
    db.close()


@pytest.mark.parametrize("lost", [("n3",), ("n2", "n3")])
def test_an_index_claiming_the_whole_file_with_ids_missing_is_not_trusted(
    tmp_path: Path, lost: tuple[str, ...]
) -> None:
    memory = tmp_path / "memory"
    with Workspace(memory, workspace_id=WSID) as workspace:
        workspace.archive("s", [record("n1"), record("n2"), record("n3")])
    lose_ids(memory, *lost)
    with Workspace(memory) as workspace:
        assert workspace.archive("s", [record("n2"), record("n3"), record("n4")]) == ["s/n4"]
        assert workspace.is_archived("s", anchor_of("s/n3"))
    assert frames(memory) == ["n1", "n2", "n3", "n4"]


def test_an_index_left_by_the_old_code_is_rebuilt(tmp_path: Path) -> None:
    """An id lost in the middle of what an older index recorded (its length covered a later frame)."""
    memory = tmp_path / "memory"
    with Workspace(memory, workspace_id=WSID) as workspace:
        workspace.archive("s", [record("n1"), record("n2"), record("n3")])
    lose_ids(memory, "n2", old_schema=True)
    with Workspace(memory) as workspace:
        assert workspace.is_archived("s", anchor_of("s/n2"))
        assert workspace.archive("s", [record("n2"), record("n4")]) == ["s/n4"]
    assert frames(memory) == ["n1", "n2", "n3", "n4"]


def test_verify_repair_rebuilds_an_index_that_disagrees_with_the_files(tmp_path: Path) -> None:
    home = tmp_path
    memory = home / "memory"
    with Workspace(memory, workspace_id=WSID) as workspace:
        workspace.archive("s", [record("n1"), record("n2"), record("n3")])
    lose_ids(memory, "n2")

    assert run_verify(home, "--repair")["index_rebuilt"] is True
    db = sqlite3.connect(memory / ".dagmem" / "index.sqlite3")
    ids = sorted(row[0] for row in db.execute("SELECT source_id FROM archived"))
    db.close()
    assert ids == ["s/n1", "s/n2", "s/n3"]
    assert run_verify(home, "--repair")["index_rebuilt"] is False


def run_verify(home: Path, *flags: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "dagmem", "verify", "--home", str(home), "--json", *flags],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stderr == ""
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_verify_repair_drops_frames_a_stale_index_appended_again(tmp_path: Path) -> None:
    """What the old code's stale index left: frames appended a second time, byte for byte, after which
    every append refuses the archive. `verify --repair` drops the copies (no evidence is lost); the
    workspace appends again."""
    memory = tmp_path / "memory"
    with Workspace(memory, workspace_id=WSID) as workspace:
        workspace.archive("s", [record("n1"), record("n2"), record("n3")])
    path = memory / "sources" / "s.md"
    data = path.read_bytes()
    scan = scan_archive(data, "s")
    copies = b"".join(data[f.offset : f.end] for f in scan.frames[1:])  # n2 and n3 again
    path.write_bytes(data + copies)
    assert scan_archive(path.read_bytes(), "s").reason == "duplicate source id"
    assert any(v["kind"] == "archive-corrupt" for v in run_verify(tmp_path)["violations"])
    result = run_verify(tmp_path, "--repair")
    assert result["duplicates_dropped"] == ["s/n2", "s/n3"]
    assert not any(v["kind"] == "archive-corrupt" for v in result["violations"])
    assert path.read_bytes() == data
    with Workspace(memory) as workspace:
        assert workspace.archive("s", [record("n3"), record("n4")]) == ["s/n4"]
    assert frames(memory) == ["n1", "n2", "n3", "n4"]


def test_verify_repair_leaves_a_copy_that_differs(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with Workspace(memory, workspace_id=WSID) as workspace:
        workspace.archive("s", [record("n1"), record("n2")])
    path = memory / "sources" / "s.md"
    other = ArchiveRecord("s", "n1", "user", 1, 1_750_000_000.0, "another text")
    damaged = path.read_bytes() + render_frame(other) + render_frame(record("n3"))
    path.write_bytes(damaged)
    result = run_verify(tmp_path, "--repair")
    assert result["duplicates_dropped"] == []
    assert any(v["kind"] == "archive-corrupt" for v in result["violations"])
    assert path.read_bytes() == damaged
