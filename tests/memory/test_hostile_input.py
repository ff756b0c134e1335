"""Hostile input, issue 28: a user's mistake or a damaged file is named (one line, the file), never blamed
on the writer, never a raw `OSError`, never a permanent failure in `status`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dagmem import FileSessionStore, InvalidInput, Runtime
from dagmem.cli import main as cli
from dagmem.memory.errors import UnknownSession


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    store = FileSessionStore(home)
    for i in range(3):
        store.append("s", "user" if i % 2 == 0 else "assistant", f"turn {i}: the trip to Lisbon")
    return home


# -- Runtime.open and end_session ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_runtime_open_on_a_file_is_invalid_input_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "a-file"
    path.write_text("not a home\n")
    for home in (path, path / "below"):
        with pytest.raises(InvalidInput, match=r"not a directory|is a file"):
            async with Runtime.open(home):
                pass
    assert path.read_text() == "not a home\n"


@pytest.mark.anyio
async def test_end_session_of_an_unknown_session_raises_unknown_session_like_set_head(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path) as rt:
        nid = await rt.append("known", "user", "hello there")
        with pytest.raises(UnknownSession):
            await rt.set_head("nosuch", nid)
        with pytest.raises(UnknownSession):
            await rt.end_session("nosuch")
        await rt.end_session("known")  # a known one still ends
    assert not (tmp_path / "sessions" / "nosuch").exists()


# -- a mistyped --session -----------------------------------------------------------------------------


def test_a_mistyped_session_is_a_usage_error_and_never_a_writer_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _home(tmp_path)
    assert cli(["write", "--force", "--home", str(home)]) == 0
    capsys.readouterr()
    status_before = (home / "memory" / ".dagmem" / "status.json").read_bytes()

    assert cli(["write", "--home", str(home), "--session", "sesion-typo"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "sesion-typo" in err[0]
    assert cli(["write", "--json", "--home", str(home), "--session", "sesion-typo"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["code"] == "INVALID_INPUT"
    assert "sesion-typo" in out["error"]
    assert (home / "memory" / ".dagmem" / "status.json").read_bytes() == status_before

    assert cli(["status", "--json", "--home", str(home)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["last_failure"] is None
    assert status["last_outcome"] == "success"


def test_a_clean_pass_clears_a_stale_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = _home(tmp_path)
    bad = home / "sessions" / "bad"
    bad.mkdir()
    (bad / "meta.json").write_text("{not json")
    assert cli(["write", "--force", "--home", str(home)]) == 1  # the bad session: a real failure
    capsys.readouterr()
    assert cli(["status", "--json", "--home", str(home)]) == 0
    assert json.loads(capsys.readouterr().out)["last_failure"]["reason_code"] == "INVALID_INPUT"

    # A pass naming only a good session proves nothing about the others: the failure stays.
    assert cli(["write", "--home", str(home), "--session", "s"]) == 0
    capsys.readouterr()
    assert cli(["status", "--json", "--home", str(home)]) == 0
    assert json.loads(capsys.readouterr().out)["last_failure"] is not None

    # The user fixes the session; the next pass over every session is clean and clears it.
    (bad / "meta.json").unlink()
    bad.rmdir()
    assert cli(["write", "--home", str(home)]) == 0
    capsys.readouterr()
    assert cli(["status", "--json", "--home", str(home)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["last_failure"] is None
    assert status["last_outcome"] == "success"
    assert cli(["status", "--home", str(home)]) == 0
    assert "last failure" not in capsys.readouterr().out


# -- values that cannot be times or positions ------------------------------------------------------------


def _node_file(home: Path, sid: str) -> Path:
    (path,) = sorted((home / "sessions" / sid / "history").rglob("*.json"))[:1]
    return path


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("created_at", "NaN"),
        ("created_at", "Infinity"),
        ("created_at", "-Infinity"),
        ("created_at", "1e20"),
        ("created_at", "true"),
        ("created_at", '"1750000000"'),
        ("seq", "true"),
    ],
)
def test_a_node_value_that_cannot_be_a_time_or_seq_is_invalid_input_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: str
) -> None:
    home = _home(tmp_path)
    FileSessionStore(home).append("other", "user", "a good session about Porto")
    path = _node_file(home, "s")  # seq 1: `true` reads as 1 and the file name agrees with it
    raw = path.read_text()
    edited = re.sub(rf'"{field}": [^,\n]+', f'"{field}": {value}', raw, count=1)
    assert edited != raw
    path.write_text(edited)

    assert cli(["write", "--force", "--json", "--home", str(home)]) == 1
    out = json.loads(capsys.readouterr().out)
    by_session = {r["session"]: r for r in out["sessions"]}
    bad = by_session["s"]
    assert (bad["outcome"], bad["reason_code"]) == ("invalid", "INVALID_INPUT"), bad
    assert str(path) in bad["detail"]
    assert field in bad["detail"]
    assert by_session["other"]["outcome"] == "written"  # every other session proceeds
    assert not (home / "memory" / "sources" / "s.md").exists()  # nothing of it written


@pytest.mark.parametrize(
    ("field", "value"), [("created_at", "NaN"), ("updated_at", "1e300"), ("updated_at", "true")]
)
def test_a_meta_time_that_cannot_be_a_time_is_invalid_input_naming_meta_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: str
) -> None:
    home = _home(tmp_path)
    meta = home / "sessions" / "s" / "meta.json"
    raw = meta.read_text()
    edited = re.sub(rf'"{field}": [^,\n]+', f'"{field}": {value}', raw, count=1)
    assert edited != raw
    meta.write_text(edited)
    assert cli(["write", "--force", "--json", "--home", str(home)]) == 1
    (result,) = json.loads(capsys.readouterr().out)["sessions"]
    assert (result["outcome"], result["reason_code"]) == ("invalid", "INVALID_INPUT")
    assert str(meta) in result["detail"]
    assert field in result["detail"]


# -- damaged state files: one line, the file, and how to repair -------------------------------------------


def test_a_damaged_meta_json_or_status_json_is_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    home = _home(tmp_path)
    assert cli(["write", "--force", "--home", str(home)]) == 0
    capsys.readouterr()
    meta = home / "sessions" / "s" / "meta.json"
    meta.write_text('{"id": "s", "created_at": "x", "updated_at": [], "head": 7}\n')
    assert cli(["write", "--force", "--json", "--home", str(home)]) == 1
    (result,) = json.loads(capsys.readouterr().out)["sessions"]
    detail = result["detail"]
    assert str(meta) in detail
    assert "\n" not in detail
    assert "malformed meta.json: head: Input should be a valid string (and 2 more)" in detail
    assert "pydantic" not in detail

    status = home / "memory" / ".dagmem" / "status.json"
    status.write_text('{"version": 1, "last_outcome": "maybe", "last_failure": {"at": "x"}}\n')
    caplog.clear()
    assert cli(["status", "--home", str(home)]) == 0
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "dagmem.status"]
    assert "\n" not in warning
    assert str(status) in warning
    assert "last_outcome" in warning


def test_a_damaged_txlog_line_says_which_line_and_how_to_repair_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _home(tmp_path)
    assert cli(["write", "--force", "--home", str(home)]) == 0
    txlog = home / "memory" / ".dagmem" / "txlog.jsonl"
    good = txlog.read_bytes()
    txlog.write_bytes(good + b"\n" + good)  # a blank line 2 between two copies of line 1
    FileSessionStore(home).append("s", "user", "one more turn about the tiles of Lisbon")
    capsys.readouterr()
    assert cli(["write", "--force", "--home", str(home)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "line 2" in err[0]
    assert str(txlog) in err[0]
    assert "restore txlog.jsonl from a copy" in err[0]
    assert "blank line can simply be deleted" in err[0]
    # What it says works: with the blank line deleted, the write goes on.
    txlog.write_bytes(good)
    assert cli(["write", "--force", "--home", str(home)]) == 0


@pytest.mark.parametrize("value", ["NaN", "1e20", "true"])
def test_a_status_json_time_that_cannot_be_a_time_is_ignored_in_one_line_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture, value: str
) -> None:
    home = _home(tmp_path)
    assert cli(["write", "--force", "--home", str(home)]) == 0
    status = home / "memory" / ".dagmem" / "status.json"
    status.write_text(f'{{"version": 1, "last_outcome": "success", "last_success_at": {value}}}\n')
    capsys.readouterr()
    caplog.clear()
    assert cli(["status", "--home", str(home)]) == 0
    assert "last success  -" in capsys.readouterr().out
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "dagmem.status"]
    assert str(status) in warning
    assert "last_success_at" in warning
