"""The progress bars of `dagmem import` and `dagmem write`: drawn on stderr when it is a terminal, never
with `--json` (stdout is then one JSON document and stderr stays empty), never when stderr is piped."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from dagmem.bench._transcripts import claude_code_session
from dagmem.cli import main


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal, as rich asks."""

    def isatty(self) -> bool:
        return True


def _run(args: list[str], stderr: io.StringIO) -> tuple[int, str, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(stderr):
        code = main(args)
    return code, out.getvalue(), stderr.getvalue()


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "source" / "session.jsonl"
    claude_code_session(path, 60)
    return path


def test_on_a_terminal_import_and_write_draw_their_bars_on_stderr(
    tmp_path: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TERM", raising=False)  # a dumb terminal would draw nothing
    home = str(tmp_path / "home")
    code, out, err = _run(["import", "claude-code", str(transcript), "--home", home], _Terminal())
    assert code == 0
    assert "importing" in err
    assert "turns added" in out
    assert "importing" not in out
    code, out, err = _run(["write", "--force", "--home", home], _Terminal())
    assert code == 0
    assert "writing" in err
    assert "written" in out
    assert "writing" not in out


def test_with_json_stdout_is_one_document_and_stderr_stays_empty_even_on_a_terminal(
    tmp_path: Path, transcript: Path
) -> None:
    home = str(tmp_path / "home")
    for args in (
        ["import", "claude-code", str(transcript), "--home", home, "--json"],
        ["write", "--force", "--home", home, "--json"],
    ):
        code, out, err = _run(args, _Terminal())
        assert code == 0
        assert err == ""
        json.loads(out)  # the whole of stdout, nothing drawn into it


def test_piped_stderr_gets_no_bar_nor_terminal_codes(tmp_path: Path, transcript: Path) -> None:
    home = str(tmp_path / "home")
    for args in (
        ["import", "claude-code", str(transcript), "--home", home],
        ["write", "--force", "--home", home],
    ):
        code, out, err = _run(args, io.StringIO())
        assert code == 0
        assert err == ""
        assert "\x1b" not in out
