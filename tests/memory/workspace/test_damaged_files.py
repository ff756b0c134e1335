"""Workspace files damaged after the fact by a person or a tool (issue 17), not by a crash.

An end-of-file fixer or an editor can trim the last newline of an archive or of the txlog, change a byte
of the last frame, or leave a blank or garbage line in the txlog. None of that may cost a consumed source
or file a claim twice: what can be undone exactly is repaired (a missing final newline), anything else
is refused with a clear, permanent error, keeping every byte. A crash's torn write (nothing consumed it,
or its stage still exists) is still truncated; `tests/crash/test_crash*.py` prove that part.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import dagmem
from dagmem import FileSessionStore, ReasonCode, Runtime
from dagmem.cli import main as cli
from dagmem.memory.format import TxlogCorrupt, scan_archive
from dagmem.memory.outcomes import classify
from dagmem.memory.store import FakeClock
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import SessionResult
from dagmem.memory.writing import write_home
from dagmem.sim import check_home
from dagmem.tests._cli import dagmem_run

WSID = "w-0123456789abcdef"
THRESHOLD = 60  # tokens: two exchanges per batch


def say(store: FileSessionStore, sid: str, subjects: list[str], prefix: str, after: str | None) -> list[str]:
    ids: list[str] = []
    for k, subject in enumerate(subjects, 1):
        for role, text in (
            ("user", f"Tell me about the {subject}, the {subject} matters to me ({prefix}{k})."),
            ("assistant", f"About the {subject}: here is what I know of {subject}, item {prefix}{k}."),
        ):
            after = store.append(sid, role, text, node_id=f"{prefix}{len(ids) + 1}", predecessor=after).id
            ids.append(after)
    return ids


def written_home(root: Path) -> FileSessionStore:
    """Session `s`, four exchanges, written (two transactions): its archive's last frame is consumed,
    cited and marked."""
    store = FileSessionStore(root, clock=FakeClock())
    Workspace(root / "memory", workspace_id=WSID).close()
    say(store, "s", ["lisbon", "garden", "violin", "python"], "m", None)
    assert outcomes(write_home(root, force=True, threshold=THRESHOLD)) == ["written"]
    return store


def more_turns(store: FileSessionStore) -> None:
    """Two more exchanges, so the next write appends to the archive of `s`."""
    say(store, "s", ["tiles", "river"], "n", store.head("s"))


def outcomes(results: list[SessionResult]) -> list[str]:
    return [r.outcome for r in results]


def archive(home: Path) -> Path:
    return home / "memory" / "sources" / "s.md"


def txlog(home: Path) -> Path:
    return home / "memory" / ".dagmem" / "txlog.jsonl"


def violations(home: Path) -> list[str]:
    report = check_home(FileSessionStore(home), home / "memory", WSID)
    return [v.kind for v in report.violations]


def committed(home: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in txlog(home).read_bytes().splitlines()]


def truth(home: Path) -> dict[str, bytes]:
    """Every file of the home but the SQLite caches (which may be rebuilt from the files at any time)."""
    return {
        p.relative_to(home).as_posix(): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and ".sqlite3" not in p.name
    }


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template") / "home"
    written_home(root)
    return root


@pytest.fixture
def home(template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "home"
    shutil.copytree(template, root)
    return root


# -- case 1: the archive's last frame ---------------------------------------------------------------------


def test_a_consumed_last_frame_that_lost_its_final_newline_gets_it_back(home: Path) -> None:
    clean = archive(home).read_bytes()
    archive(home).write_bytes(clean[:-1])  # `\n\n` -> `\n`, as an end-of-file fixer leaves it
    assert "archive-damaged" in violations(home)
    store = FileSessionStore(home)
    more_turns(store)
    assert outcomes(write_home(home, force=True, threshold=THRESHOLD)) == ["written"]
    after = archive(home).read_bytes()
    assert after.startswith(clean)  # the newline restored, not the frame truncated
    assert scan_archive(after, "s").status == "complete"
    assert check_home(FileSessionStore(home), home / "memory", WSID, drained=True).violations == []


def _last_frame(data: bytes) -> tuple[int, int]:
    frame = scan_archive(data, "s").frames[-1]
    return frame.offset, frame.end


DAMAGE = {
    "both-final-newlines-trimmed": lambda d, start: d[:-2],
    "cut-mid-frame": lambda d, start: d[: start + 70],
    "anchor-byte-changed": lambda d, start: d[: start + 15] + b"0" + d[start + 16 :],
    "record-lines-changed": lambda d, start: (
        d[:start] + d[start:].replace(b"record-lines: 1 -->", b"record-lines: 3 -->")
    ),
    "trailing-garbage-after-its-end": lambda d, start: d[:-1] + b"x\n",
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_consumed_last_frame_is_refused_and_every_byte_kept(home: Path, damage: str) -> None:
    clean = archive(home).read_bytes()
    start, _end = _last_frame(clean)
    damaged = DAMAGE[damage](clean, start)
    assert damaged != clean
    archive(home).write_bytes(damaged)
    store = FileSessionStore(home)
    more_turns(store)
    before = committed(home)
    (result,) = write_home(home, force=True, threshold=THRESHOLD)
    assert (result.outcome, result.reason_code, result.retryable) == (
        "failed",
        ReasonCode.ARCHIVE_CORRUPT,
        False,
    )
    assert str(archive(home)) in (result.detail or "")
    assert archive(home).read_bytes() == damaged  # nothing truncated, nothing appended
    assert committed(home) == before  # nothing consumed meanwhile
    assert "archive-damaged" in violations(home)


def test_a_damaged_tail_that_nobody_consumed_is_still_a_torn_tail(home: Path) -> None:
    """Evidence archived by a writer that died before its commit, then damaged: nothing consumed it, so
    it is truncated and written again, and the archive ends as a clean run's."""
    store = FileSessionStore(home)
    more_turns(store)
    clean_home = home.parent / "clean"
    shutil.copytree(home, clean_home)
    assert outcomes(write_home(clean_home, force=True, threshold=THRESHOLD)) == ["written"]
    nodes = store.load("s").nodes
    records = [
        dagmem.ArchiveRecord("s", n.id, str(n.role), n.seq, n.created_at, n.content)
        for n in sorted(nodes.values(), key=lambda n: n.seq)
        if n.id.startswith("n")
    ]
    with Workspace(home / "memory") as workspace:
        workspace.archive("s", records[:2])  # archived, never committed
    data = archive(home).read_bytes()
    archive(home).write_bytes(data[:-30])
    assert outcomes(write_home(home, force=True, threshold=THRESHOLD)) == ["written"]
    assert archive(home).read_bytes() == archive(clean_home).read_bytes()
    assert check_home(FileSessionStore(home), home / "memory", WSID, drained=True).violations == []


def test_verify_reports_a_damaged_consumed_frame_and_the_source_it_lost(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = archive(home).read_bytes()
    start, _end = _last_frame(clean)
    archive(home).write_bytes(clean[: start + 70])
    lost = committed(home)[-1]["consumed"][-1]
    assert cli(["verify", "--json", "--home", str(home)]) == 1
    report = json.loads(capsys.readouterr().out)
    found = {(v["kind"], v["subject"]) for v in report["violations"]}
    assert ("archive-damaged", str(archive(home))) in found
    assert ("consumed-not-archived", lost) in found


@pytest.mark.anyio
async def test_the_runtime_refuses_a_damaged_consumed_archive_and_keeps_it(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path, token_threshold=THRESHOLD) as rt:
        after = None
        for i in range(8):
            after = await rt.append(
                "s", "user" if i % 2 == 0 else "assistant", f"turn {i} about trams", predecessor=after
            )
        await rt.flush(force=True)
        path = tmp_path / "memory" / "sources" / "s.md"
        clean = path.read_bytes()
        damaged = clean[:-5]
        path.write_bytes(damaged)
        for i in range(8, 12):
            after = await rt.append(
                "s", "user" if i % 2 == 0 else "assistant", f"turn {i} about tiles", predecessor=after
            )
        await rt.flush(force=True)
        status = rt.status()
        assert path.read_bytes() == damaged
        assert status.last_failure is not None
        assert status.last_failure.reason_code == ReasonCode.ARCHIVE_CORRUPT
        assert status.last_failure.retryable is False


# -- case 5: a committed txlog line missing its final newline ---------------------------------------------


def test_a_committed_txlog_line_missing_its_newline_is_kept_and_the_newline_restored(home: Path) -> None:
    lines = committed(home)
    txlog(home).write_bytes(txlog(home).read_bytes()[:-1])
    assert violations(home) == []  # it parses, its files are installed: it is committed
    store = FileSessionStore(home)
    more_turns(store)
    assert outcomes(write_home(home, force=True, threshold=THRESHOLD)) == ["written"]
    after = committed(home)
    assert after[: len(lines)] == lines  # never discarded
    assert txlog(home).read_bytes().endswith(b"\n")
    assert check_home(FileSessionStore(home), home / "memory", WSID, drained=True).violations == []


def test_verify_repair_then_write_force_files_no_claim_twice(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tester's sequence: a trimmed txlog, `verify --repair`, `write --force`: nothing twice."""
    topics = {p.name: p.read_bytes() for p in (home / "memory" / "topics").glob("*.md")}
    txlog(home).write_bytes(txlog(home).read_bytes()[:-1])
    assert cli(["verify", "--repair", "--home", str(home)]) == 0
    assert cli(["write", "--force", "--home", str(home)]) == 0
    capsys.readouterr()
    assert {p.name: p.read_bytes() for p in (home / "memory" / "topics").glob("*.md")} == topics
    assert cli(["verify", "--strict", "--home", str(home)]) == 0, capsys.readouterr().out


def test_verify_reports_the_same_claim_filed_twice(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Duplicate memory: the same claim citing the same sources in two blocks (what the old truncation led
    to; today the distiller gives a claim already present the new citation instead, so the copy is made
    by hand here, with fresh block and citation ids, as an editor or another tool could)."""
    topic = next(
        p
        for p in sorted(t for t in (home / "memory" / "topics").glob("*.md") if t.name != "index.md")
        if p.name != "core.md"
    )
    lines = topic.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if re.search(r" \^b-[0-9a-f]{8}$", line))
    end = first + 1
    while end < len(lines) and lines[end].startswith("[^c-"):
        end += 1
    copy = [re.sub(r"\^b-[0-9a-f]{8}$", "^b-0000dead", line) for line in lines[first:end]]
    copy = [re.sub(r"\[\^c-[0-9a-f]{10}\]", "[^c-000000dead]", line) for line in copy]
    topic.write_text("\n".join([*lines, "", *copy]) + "\n")
    assert "duplicate-claim" in violations(home)
    assert cli(["verify", "--json", "--home", str(home)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert any(v["kind"] == "duplicate-claim" for v in report["violations"])


def test_dropping_a_committed_txlog_line_then_repairing_files_no_claim_twice(home: Path) -> None:
    """The old truncation's sequel: the last line lost, its markers dropped by `--repair`, the records
    written again. The distiller finds their claims already present: no duplicate memory."""
    data = txlog(home).read_bytes()
    txlog(home).write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 1])  # drop the whole last line
    assert cli(["verify", "--repair", "--home", str(home)]) == 0
    cli(["write", "--force", "--home", str(home)])
    assert "duplicate-claim" not in violations(home)


@pytest.mark.parametrize("cut", [2, 20, 200], ids=["closing-brace", "mid-files", "mid-consumed"])
def test_an_incomplete_committed_txlog_line_without_a_stage_is_refused_and_kept(home: Path, cut: int) -> None:
    """Cut short after it was committed and applied (no stage exists): not a crash's torn write, so it
    is kept and the workspace refused, rather than its consumption silently discarded."""
    damaged = txlog(home).read_bytes()[:-cut]
    txlog(home).write_bytes(damaged)
    files = truth(home)
    with pytest.raises(TxlogCorrupt) as caught:
        write_home(home, force=True, threshold=THRESHOLD)
    assert caught.value.line == len(damaged.splitlines())
    assert str(txlog(home)) in str(caught.value)
    assert truth(home) == files
    assert "txlog-unreadable" in violations(home)


def test_verify_repair_drops_no_marker_while_a_txlog_line_is_unreadable(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    txlog(home).write_bytes(txlog(home).read_bytes()[:-20])
    nodes = {p: p.read_bytes() for p in (home / "sessions").rglob("*.json")}
    assert cli(["verify", "--repair", "--home", str(home)]) == 1
    assert "not repairing markers" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in (home / "sessions").rglob("*.json")} == nodes


# -- case 11: blank or garbage lines in the txlog ---------------------------------------------------------


def _with_line(home: Path, extra: bytes) -> None:
    first, rest = txlog(home).read_bytes().split(b"\n", 1)
    txlog(home).write_bytes(first + b"\n" + extra + rest)


@pytest.mark.parametrize(
    ("extra", "problem"),
    [(b"\n", "a blank line"), (b"not json at all\n", "not a JSON line"), (b"[1, 2]\n", "not a JSON object")],
    ids=["blank", "garbage", "not-an-object"],
)
def test_a_damaged_txlog_line_refuses_write_with_one_line_and_changes_nothing(
    home: Path, extra: bytes, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    more_turns(FileSessionStore(home))
    _with_line(home, extra)
    (home / "memory" / ".dagmem" / "index.sqlite3").unlink()  # so the write reads every line again
    files = truth(home)
    assert cli(["write", "--force", "--home", str(home)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"txlog {txlog(home)} is damaged at line 2: {problem}" in err
    assert cli(["write", "--force", "--json", "--home", str(home)]) == 2
    assert json.loads(capsys.readouterr().out)["code"] == "TXLOG_CORRUPT"
    assert cli(["status", "--home", str(home)]) == 0
    capsys.readouterr()
    assert cli(["verify", "--json", "--home", str(home)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(v["kind"], v["subject"]) for v in report["violations"]] == [("txlog-unreadable", "line 2")]
    assert truth(home) == files


def test_a_damaged_txlog_line_shows_no_traceback(home: Path) -> None:
    _with_line(home, b"{garbage\n")
    result = dagmem_run("write", "--force", "--home", str(home))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: txlog ")
    assert result.stderr.count("\n") == 1


def test_an_index_that_already_read_the_txlog_still_notices_a_line_damaged_later(home: Path) -> None:
    _with_line(home, b"garbage\n")  # the cache knew the old bytes: it must read them again, and refuse
    with pytest.raises(TxlogCorrupt, match="line 2: not a JSON line"):
        write_home(home, force=True, threshold=THRESHOLD)


def test_blank_lines_after_the_last_txlog_line_hold_nothing_and_are_removed(home: Path) -> None:
    lines = committed(home)
    txlog(home).write_bytes(txlog(home).read_bytes() + b"\n\n")
    assert violations(home) == []
    more_turns(FileSessionStore(home))
    assert outcomes(write_home(home, force=True, threshold=THRESHOLD)) == ["written"]
    assert committed(home)[: len(lines)] == lines
    assert b"\n\n" not in txlog(home).read_bytes()
    assert check_home(FileSessionStore(home), home / "memory", WSID, drained=True).violations == []


def test_txlog_corrupt_is_a_dagmem_error_with_a_permanent_reason_code() -> None:
    error = TxlogCorrupt("a blank line", path=Path("/h/memory/.dagmem/txlog.jsonl"), line=3)
    assert isinstance(error, dagmem.DagmemError)
    assert str(error).startswith("txlog /h/memory/.dagmem/txlog.jsonl is damaged at line 3: a blank line")
    failure = classify(error)
    assert (failure.code, failure.retryable) == (ReasonCode.TXLOG_CORRUPT, False)
