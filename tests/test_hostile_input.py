"""Hostile input, issue 28: a user's mistake or a damaged file is named (one line, the file), never blamed
on the writer, never a raw `OSError`, never a permanent failure in `status`."""

from __future__ import annotations

import json
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
