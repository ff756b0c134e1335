"""`dagmem status`: the hooks' queue (jobs queued), whether their worker runs (read without taking its
lock) and the worker's last logged problem; `--wait [SECONDS]` waits, bounded, until nothing is queued
and no worker runs (exit 0), else exit 75; `--session` narrows what is owed to the sessions named (an
unknown one is a mistake, exit 2); times are printed as ISO 8601. Read-only throughout."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.hooks._log import log_line
from dagmem.hooks._queue import enqueue, queued
from dagmem.memory.writing import write_home
from dagmem.tests._cli import dagmem_run

# A stand-in for a worker that holds the lock until its stdin closes; "dagmem.hooks._worker" is in its
# command line, as in a real worker's.
HOLDER = """
import sys
from pathlib import Path
from dagmem.hooks._queue import mark_worker, try_lock
fd = try_lock(Path(sys.argv[1]))
assert fd is not None
mark_worker(fd)
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    store = FileSessionStore(home)
    store.append("a", "user", "The car is due for its MOT in March.")
    store.append("b", "user", "Book the piano tuner.")
    return home


@pytest.fixture
def worker(home: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(home), "dagmem.hooks._worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "held\n"  # the lock is held from here on
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(60)
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()


def _status(home: Path, *args: str) -> tuple[int, dict[str, object]]:
    result = dagmem_run("status", "--json", "--home", str(home), *args)
    assert result.returncode in (0, 75), result.stderr
    return result.returncode, json.loads(result.stdout)


def test_status_shows_the_hooks_queue_the_worker_and_its_last_error(
    home: Path, worker: subprocess.Popen[str]
) -> None:
    enqueue(home, "claude-code", "/nowhere/t.jsonl")
    log_line(home, "claude-code Stop", "a hook's own line, not the worker's")
    log_line(home, "write", "s: DISK_FULL no space left on device")
    log_line(home, "claude-code UserPromptSubmit", "another hook's line")
    _, report = _status(home)
    assert report["hooks"] == {
        "queued": 1,
        "worker_running": True,
        "last_worker_error": {
            "at": report["hooks"]["last_worker_error"]["at"],  # type: ignore[index]
            "what": "write",
            "message": "s: DISK_FULL no space left on device",
        },
    }
    text = dagmem_run("status", "--home", str(home))
    assert "hooks         1 queued, worker running" in text.stdout
    assert "last worker error" in text.stdout
    assert "DISK_FULL no space left on device" in text.stdout
    assert len(queued(home)) == 1  # read-only: the job is still there


def test_wait_is_bounded_and_exits_75_while_the_worker_runs_then_0_when_it_is_done(
    home: Path, worker: subprocess.Popen[str]
) -> None:
    code, report = _status(home, "--wait", "0.3")
    assert code == 75
    assert report["waited"] == {"seconds": 0.3, "done": False}
    text = dagmem_run("status", "--home", str(home), "--wait", "0.2")
    assert text.returncode == 75
    assert "not done after 0.2 s" in text.stderr
    assert worker.stdin is not None
    worker.stdin.close()  # the worker finishes
    code, report = _status(home, "--wait", "60")
    assert code == 0
    assert report["hooks"]["worker_running"] is False  # type: ignore[index]
    assert report["waited"] == {"seconds": 60.0, "done": True}


def test_wait_without_a_number_returns_at_once_when_nothing_is_queued(home: Path) -> None:
    code, report = _status(home, "--wait")
    assert code == 0
    assert report["waited"] == {"seconds": 60.0, "done": True}
    enqueue(home, "claude-code", "/nowhere/t.jsonl")  # queued, no worker to take it: not done
    code, report = _status(home, "--wait", "0.2")
    assert code == 75


def test_session_narrows_what_is_owed_and_an_unknown_one_is_a_mistake(home: Path) -> None:
    _, report = _status(home, "--session", "a")
    assert report["sessions"] == {"a": 1}
    assert report["pending_turns"] == 1
    refused = dagmem_run("status", "--home", str(home), "--session", "zz")
    assert refused.returncode == 2
    assert "zz" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1


def test_status_prints_iso_times_and_gives_them_beside_the_floats(home: Path) -> None:
    write_home(home, force=True)
    _, report = _status(home)
    assert isinstance(report["last_success_at"], float)
    iso = report["last_success_at_iso"]
    assert isinstance(iso, str)
    assert iso.endswith("+00:00")
    text = dagmem_run("status", "--home", str(home)).stdout
    assert f"last success  {iso}" in text
