"""Evidence edited or replaced by hand, issue 28: only a provably lost final newline is restored, `verify`
compares every archived frame with its node, and a symlink in the home's tree of evidence is reported
(never followed, never a retryable exit)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dagmem import FileSessionStore, ReasonCode
from dagmem.cli import main as cli
from dagmem.memory.format import ArchiveRecord, render_frame, scan_archive
from dagmem.memory.format._archive_codec import HEADER
from dagmem.memory.writing import write_home


def written(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    store = FileSessionStore(home)
    for i in range(4):
        store.append("s", "user" if i % 2 == 0 else "assistant", f"turn {i}: the trip to Lisbon")
    assert [r.outcome for r in write_home(home, force=True)] == ["written"]
    return home


def archive(home: Path) -> Path:
    return home / "memory" / "sources" / "s.md"


def verify(home: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = cli(["verify", "--json", "--home", str(home)])
    return code, json.loads(capsys.readouterr().out)


def restore_final_newline(data: bytes, session_id: str) -> object:
    from dagmem.memory.format import restore_final_newline as restore  # new in issue 28

    return restore(data, session_id)


def kinds(report: dict[str, object]) -> list[str]:
    violations = report["violations"]
    assert isinstance(violations, list)
    return [str(v["kind"]) for v in violations]


# -- class 1: the final-newline repair --------------------------------------------------------------------


def test_raising_record_lines_by_one_is_damage_not_a_lost_newline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = written(tmp_path)
    clean = archive(home).read_bytes()
    last = scan_archive(clean, "s").frames[-1]
    head, tail = clean[: last.offset], clean[last.offset :]
    edited = head + tail.replace(b"<!-- record-lines: 1 -->", b"<!-- record-lines: 2 -->")
    assert edited != clean
    assert scan_archive(edited + b"\n", "s").status == "complete"
    archive(home).write_bytes(edited)

    store = FileSessionStore(home)
    store.append("s", "user", "one more turn about the tiles of Lisbon")
    (result,) = write_home(home, force=True)
    assert (result.outcome, result.reason_code, result.retryable) == (
        "failed",
        ReasonCode.ARCHIVE_CORRUPT,
        False,
    )
    assert archive(home).read_bytes() == edited  # every byte kept, nothing appended
    code, report = verify(home, capsys)
    assert code == 1
    assert "archive-damaged" in kinds(report)
    assert "final newline is missing" not in json.dumps(report)  # verify does not promise a repair
    assert restore_final_newline(edited, "s") is None


def test_a_lost_final_newline_is_still_restored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = written(tmp_path)
    clean = archive(home).read_bytes()
    archive(home).write_bytes(clean[:-1])
    FileSessionStore(home).append("s", "user", "one more turn about the tiles of Lisbon")
    assert [r.outcome for r in write_home(home, force=True)] == ["written"]
    assert archive(home).read_bytes().startswith(clean)
    code, report = verify(home, capsys)
    assert code == 0
    assert kinds(report) == []


def test_only_a_newline_after_a_non_empty_line_is_provably_lost() -> None:
    def frame(content: str) -> bytes:
        return HEADER + render_frame(ArchiveRecord("s", "n1", "user", 1, 1_750_000_000.0, content))

    assert restore_final_newline(frame("hello")[:-1], "s") is not None
    # Content ending in an empty line: one newline less could be a raised record-lines as well.
    assert scan_archive(frame("hello\n")[:-1], "s").status == "torn"
    assert restore_final_newline(frame("hello\n")[:-1], "s") is None
    assert restore_final_newline(frame("hello")[:-2], "s") is None  # both newlines gone: not one
    assert restore_final_newline(frame("hello"), "s") is None  # nothing lost


@pytest.mark.parametrize(
    "edit",
    [
        (b"turn 3: the trip to Lisbon", b"turn 3: the trip to Madrid"),  # same length, same lines
        (b"turn 3: the trip to Lisbon", b"turn 3: the trip\nto Lisbon"),  # a line more, record-lines kept
    ],
)
def test_verify_compares_each_archived_frame_with_its_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: tuple[bytes, bytes]
) -> None:
    home = written(tmp_path)
    clean = archive(home).read_bytes()
    old, new = edit
    edited = clean.replace(old, new)
    if b"\n" in new:  # the edited frame (the last) keeps its line count right, so it parses
        last = scan_archive(clean, "s").frames[-1]
        body = edited[last.offset :].replace(b"record-lines: 1 -->", b"record-lines: 2 -->")
        edited = edited[: last.offset] + body
    assert edited != clean
    assert scan_archive(edited, "s").status == "complete"
    archive(home).write_bytes(edited)
    code, report = verify(home, capsys)
    assert code == 1
    assert "archive-mismatch" in kinds(report), report


# -- class 5: a symlink where an archive should be ---------------------------------------------------------


@pytest.mark.parametrize("target", ["dangling", "elsewhere"])
def test_verify_reports_a_symlinked_archive_and_never_exits_retryable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    home = written(tmp_path)
    moved = tmp_path / "moved.md"
    if target == "elsewhere":
        moved.write_bytes(archive(home).read_bytes())
    archive(home).unlink()
    os.symlink(moved, archive(home))
    code, report = verify(home, capsys)
    assert code == 1, report
    assert "archive-unreadable" in kinds(report)
    assert cli(["verify", "--home", str(home)]) == 1
    out = capsys.readouterr()
    assert "archive-unreadable" in out.out
    assert "symbolic link" in out.out
    assert not out.err


# -- class 6: one rule for the home's top-level directories -----------------------------------------------


@pytest.mark.parametrize("relpath", ["sessions", "memory", "memory/sources", "memory/topics"])
def test_a_symlinked_top_level_directory_is_refused_by_a_write_and_reported_by_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], relpath: str
) -> None:
    home = written(tmp_path)
    FileSessionStore(home).append("s", "user", "one more turn about the tiles of Lisbon")
    real = tmp_path / "elsewhere"
    (home / relpath).rename(real)
    os.symlink(real, home / relpath)
    before = {p.relative_to(real): p.read_bytes() for p in real.rglob("*") if p.is_file()}

    assert cli(["write", "--force", "--home", str(home)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"{home / relpath} is a symbolic link" in err[0]
    after = {p.relative_to(real): p.read_bytes() for p in real.rglob("*") if p.is_file()}
    assert after == before  # nothing written through the link

    code, report = verify(home, capsys)
    assert code == 1
    violations = report["violations"]
    assert isinstance(violations, list)
    assert {"kind": "unsafe-path", "subject": str(home / relpath)} in [
        {"kind": v["kind"], "subject": v["subject"]} for v in violations
    ]


@pytest.mark.parametrize("relpath", ["memory/.dagmem/txlog.jsonl", "memory/.dagmem"])
def test_verify_reports_a_symlinked_txlog_or_state_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], relpath: str
) -> None:
    home = written(tmp_path)
    (home / relpath).rename(tmp_path / "moved")
    os.symlink(tmp_path / "gone", home / relpath)  # dangling
    code, report = verify(home, capsys)
    assert code == 1, report
    violations = report["violations"]
    assert isinstance(violations, list)
    assert str(home / relpath) in [v["subject"] for v in violations]


def test_verify_reports_a_node_whose_time_no_longer_matches_its_frame(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = written(tmp_path)
    (path,) = sorted((home / "sessions" / "s" / "history").rglob("000002-*.json"))
    node = json.loads(path.read_text())
    node["created_at"] += 3600.0
    path.write_text(json.dumps(node, indent=1) + "\n")
    code, report = verify(home, capsys)
    assert code == 1
    violations = report["violations"]
    assert isinstance(violations, list)
    (mismatch,) = [v for v in violations if v["kind"] == "archive-mismatch"]
    assert mismatch["subject"] == f"s/{node['id']}"
    assert "created_at" in mismatch["detail"]
