"""A hook never blocks or breaks its host: whatever arrives on stdin (not JSON, not an object, missing
fields, a transcript that does not exist or is a FIFO, a 100 MB line), it exits 0, prints nothing on
stdout and leaves one line in the home's hooks log; nothing already remembered is lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dagmem.hooks import wait_for_worker
from dagmem.tests.hooks._claude import WORKER_BOUND, Transcript, hook

LOG = Path(".dagmem") / "hooks" / "hooks.log"


def _assert_quiet(project: Path, result: subprocess.CompletedProcess[bytes], *, logged: str) -> None:
    assert result.returncode == 0, result.stderr
    assert result.stdout == b""
    log = (project / LOG).read_text()
    assert len(log.splitlines()) == 1, log
    assert logged in log, log


@pytest.mark.parametrize(
    ("event", "stdin", "logged"),
    [
        ("UserPromptSubmit", b"this is not json", "not JSON"),
        ("Stop", b"\x80\x81 garbage", "payload is not"),
        ("SessionStart", b"[1, 2, 3]", "not an object"),
        ("Stop", b"{}", "transcript_path"),
        ("UserPromptSubmit", b'{"session_id": "s"}', "prompt"),
        ("SessionEnd", json.dumps({"transcript_path": "/nonexistent/t.jsonl"}).encode(), "No such file"),
        ("UserPromptSubmit", b'{"prompt": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "not JSON"),
    ],
)
def test_bad_stdin_exits_0_quietly_with_one_log_line(
    tmp_path: Path, event: str, stdin: bytes, logged: str
) -> None:
    _assert_quiet(tmp_path, hook(event, stdin, project=tmp_path), logged=logged)


def test_a_fifo_as_the_transcript_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)  # nobody writes to it: opening it to read would block for ever
    for event in ("Stop", "UserPromptSubmit"):
        (tmp_path / LOG).unlink(missing_ok=True)
        payload = {"session_id": "s", "transcript_path": str(fifo), "prompt": "hello", "cwd": str(tmp_path)}
        _assert_quiet(tmp_path, hook(event, payload, project=tmp_path), logged="not a regular file")


def test_a_100_mb_line_on_stdin_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    stdin = b'{"prompt": "' + b"x" * (100 << 20) + b'"}'
    _assert_quiet(tmp_path, hook("UserPromptSubmit", stdin, project=tmp_path), logged="more than")


def test_a_100_mb_transcript_line_is_reported_and_the_rest_remembered(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "t" / "s.jsonl")
    u = t.user(None, "The release train leaves every second Tuesday.")
    t.assistant(u, "Every second Tuesday, noted.")
    with t.path.open("a") as f:
        f.write('{"type": "user", "uuid": "big", "message": {"content": "' + "y" * (100 << 20) + '"}}\n')
    home = tmp_path / ".dagmem"
    end = hook("SessionEnd", t.payload("SessionEnd"), project=tmp_path)
    assert end.returncode == 0
    assert end.stdout == b""
    assert wait_for_worker(home, WORKER_BOUND)
    log = (tmp_path / LOG).read_text()
    assert len(log.splitlines()) == 1
    assert "big" not in (home / "memory" / "sources" / f"{t.session}.md").read_text()
    assert "second Tuesday" in (home / "memory" / "sources" / f"{t.session}.md").read_text()


def test_an_unknown_event_is_a_usage_error_and_memory_off_is_a_no_op(tmp_path: Path) -> None:
    bad = hook("NoSuchEvent", b"{}", project=tmp_path)
    assert bad.returncode == 2
    assert bad.stdout == b""
    assert b"unknown event" in bad.stderr
    t = Transcript(tmp_path / "t" / "s.jsonl")
    t.user(None, "Remember the launch date.")
    off = hook("SessionEnd", t.payload("SessionEnd"), project=tmp_path, env={"DAGMEM_MEMORY": "off"})
    assert off.returncode == 0
    assert off.stdout == b""
    assert off.stderr == b""
    assert not (tmp_path / ".dagmem").exists()  # nothing created: no queue, no log, no worker


@pytest.mark.parametrize("isolated", [True, False], ids=["-P", "an older install without -P"])
def test_a_hook_whose_working_directory_was_deleted_exits_0_and_logs_one_line(
    tmp_path: Path, isolated: bool
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    state = tmp_path / "state"
    environ = {k: v for k, v in os.environ.items() if k not in ("DAGMEM_HOME", "CLAUDE_PROJECT_DIR")}
    environ["XDG_STATE_HOME"] = str(state)
    # The process starts in the directory, which is removed before Python reads its working directory:
    # as a host's hook in a project deleted under it.
    script = f"import os, sys; os.rmdir({str(gone)!r}); os.execv(sys.executable, sys.argv[1:])"
    argv = [sys.executable, *(["-P"] if isolated else []), "-m", "dagmem", "hook", "claude-code", "Stop"]
    result = subprocess.run(
        [sys.executable, "-c", script, *argv],
        input=b"{}",
        capture_output=True,
        cwd=gone,
        env=environ,
        timeout=120,
        check=False,
    )
    assert not gone.exists()
    assert result.returncode == 0, result.stderr
    assert result.stdout == b""
    assert result.stderr == b""
    log = (state / "dagmem" / "hooks" / "hooks.log").read_text()
    assert len(log.splitlines()) == 1, log
    assert "transcript_path" in log
