"""An import appends a file's nodes a session's run at a time (`SessionStore.append_many`): a node the
store refuses in the middle of a run is reported with its file and line, its children follow its
predecessor and the rest of the run is imported; a second import adds nothing; a session met invalid while
its run is appended (a symlinked shard directory) is reported once, nothing of it is written through the
symlink, and the other sessions import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dagmem import FileSessionStore
from dagmem.memory import faults
from dagmem.memory.adopt import Importer, ImportReport, SourceClock, import_into_store
from dagmem.memory.format._limits import MAX_RECORD_LINES


def uid(session: int, n: int) -> str:
    return f"00000000-0000-4000-{session:04d}-{n:012d}"


def transcript(path: Path, session: str, contents: list[str], *, number: int = 1) -> list[str]:
    """A Claude Code chain of user and assistant lines, one per content; returns their uuids."""
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    for n, content in enumerate(contents, 1):
        kind = "user" if n % 2 else "assistant"
        key = uid(number, n)
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message.update(id=f"msg_{number}_{n}", type="message", model="claude")
        lines.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "sessionId": session,
                "type": kind,
                "uuid": key,
                "timestamp": f"2025-06-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
                "message": message,
            }
        )
        parent = key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return [line["uuid"] for line in lines]


def run_import(home: Path, *paths: Path) -> ImportReport:
    clock = SourceClock()
    return import_into_store(Importer("claude-code", list(paths)), FileSessionStore(home, clock=clock), clock)


def node_files(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*.json")) if p.is_file()}


def test_a_node_refused_mid_run_is_reported_its_child_follows_its_predecessor_and_a_rerun_adds_nothing(
    tmp_path: Path,
) -> None:
    contents = [f"turn {n}" for n in range(1, 9)]
    contents[3] = "x\n" * MAX_RECORD_LINES  # line 4: more lines than a record may hold
    path = tmp_path / "s1.jsonl"
    ids = transcript(path, "s1", contents)
    home = tmp_path / "home"
    report = run_import(home, path)
    count = report.sessions["s1"]
    assert (count.added, count.failed) == (7, 1)
    assert [str(p) for p in report.problems] == [
        f"{path}:4: not imported: content has {MAX_RECORD_LINES + 1:,} lines (at most {MAX_RECORD_LINES:,})"
    ]
    snapshot = FileSessionStore(home).load("s1")
    assert snapshot.valid
    assert ids[3] not in snapshot.nodes
    assert snapshot.nodes[ids[4]].predecessor == ids[2]  # the refused node's child follows its predecessor
    assert snapshot.meta.head == ids[-1]
    before = node_files(home)
    again = run_import(home, path)
    assert (again.sessions["s1"].added, again.sessions["s1"].present) == (0, 7)
    assert node_files(home) == before


def test_a_symlinked_shard_met_mid_import_makes_that_session_invalid_and_the_others_import(
    tmp_path: Path,
) -> None:
    long_path, short_path = tmp_path / "long.jsonl", tmp_path / "short.jsonl"
    transcript(long_path, "long", [f"turn {n}" for n in range(1, 301)], number=1)
    short_ids = transcript(short_path, "short", [f"turn {n}" for n in range(1, 11)], number=2)
    home = tmp_path / "home"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shard = home / "sessions" / "long" / "history" / "0001"

    def plant(_site: str) -> None:
        # Once the long session's first shard exists, its second becomes a symlink: met at seq 256.
        if not shard.is_symlink() and shard.parent.joinpath("0000").is_dir():
            shard.symlink_to(elsewhere)

    with faults.armed(plant):
        report = run_import(home, long_path, short_path)
    long = report.sessions["long"]
    assert (long.added, long.failed) == (255, 45)
    (problem,) = report.problems
    assert str(problem) == (
        f"{shard}: session long is invalid (is a symbolic link: dagmem never follows one); not imported"
    )
    assert list(elsewhere.iterdir()) == []  # nothing of it written through the symlink
    assert report.sessions["short"].added == 10
    short = FileSessionStore(home).load("short")
    assert short.valid
    assert sorted(short.nodes) == sorted(short_ids)
    assert short.meta.head == short_ids[-1]
