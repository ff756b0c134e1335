"""`dagmem sim --homes H --workers W`: sessions dealt into homes that run in worker processes side by
side, their results joined in home order, the same trace hash whatever the number of workers."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dagmem.sim import SimConfig, run
from dagmem.sim._workload import session_id
from dagmem.tests._cli import dagmem_run


class Recorder:
    def __init__(self) -> None:
        self.done: list[int] = []
        self.phases: list[str] = []

    def session_done(self, done: int, sessions: int, virtual_s: float) -> None:
        assert sessions == 15
        self.done.append(done)

    def phase(self, name: str) -> None:
        self.phases.append(name)


def test_homes_give_the_same_result_whatever_the_number_of_workers(tmp_path: Path) -> None:
    config = SimConfig(seed=4, sessions=15, homes=3, git_sample=1)
    one = run(config, workers=1)
    progress = Recorder()
    traced = SimConfig(seed=4, sessions=15, homes=3, git_sample=1, trace_path=tmp_path / "t.jsonl")
    two = run(traced, workers=2, observer=progress)
    assert one.violations == []
    assert two.violations == []
    assert one.trace_sha256 == two.trace_sha256
    assert [h.trace_sha256 for h in one.homes] == [h.trace_sha256 for h in two.homes]
    assert (one.oracle.records, one.oracle.consumed, one.oracle.marked) == (
        two.oracle.records,
        two.oracle.consumed,
        two.oracle.marked,
    )
    # The run's hash is the homes' hashes, one per line, in home order.
    joined = "".join(f"{h.trace_sha256}\n" for h in two.homes)
    assert two.trace_sha256 == hashlib.sha256(joined.encode()).hexdigest()
    # Sessions are dealt round-robin; every home is a workspace of its own.
    assert [h.sessions for h in two.homes] == [5, 5, 5]
    assert len({h.workspace_id for h in two.homes}) == 3
    assert sorted(two.file_counts) == sorted(session_id(i) for i in range(15))
    assert len({h.pid for h in one.homes}) == 1
    assert len({h.pid for h in two.homes}) == 2
    # Peak memory counts this process and every worker, never less than the largest worker.
    assert two.peak_rss_bytes > max(h.peak_rss_bytes for h in two.homes)
    # The joined trace holds every home's events, and its parts are gone.
    lines = (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == two.trace_events == one.trace_events
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]
    # The git sample is the run's longest session wherever it lives, replayed once.
    assert list(two.git_ops) == list(one.git_ops)
    assert len(two.git_ops) == 1
    # Progress is summed over the homes and reaches every session.
    assert progress.done[-1] == 15
    assert progress.done == sorted(progress.done)
    assert progress.phases == ["draining and checking the homes"]


def test_faults_in_several_homes_are_injected_and_the_run_is_clean() -> None:
    result = run(SimConfig(seed=3, sessions=40, homes=2, faults=0.02, git_sample=0), workers=2)
    assert result.violations == []
    assert sum(result.faults_injected.values()) > 0
    # Each home draws its own faults: the homes' traces differ.
    assert result.homes[0].trace_sha256 != result.homes[1].trace_sha256


def test_more_homes_than_sessions_is_refused() -> None:
    with pytest.raises(ValueError, match="between 1 and 3 homes"):
        run(SimConfig(sessions=3, homes=4))


def test_the_command_runs_homes_on_disk_and_reports_each(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [sys.executable, "-m", "dagmem", "sim", "--sessions", "10", "--homes", "2", "--workers", "2"]
    args += ["--real-fs", "--trace", "--git-sample", "0", "--json", "--out", str(out)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["ok"]
    assert report["config"]["homes"] == 2
    assert [h["home"] for h in report["homes"]] == [0, 1]
    assert sum(h["sessions"] for h in report["homes"]) == 10
    assert "--homes 2" in report["replay"]
    assert "--workers" not in report["replay"]
    for home in ("000", "001"):
        assert (out / "home" / home / "memory" / ".dagmem" / "txlog.jsonl").is_file()
        assert len(list((out / "home" / home / "sessions").iterdir())) == 5
    assert (out / "trace.jsonl").is_file()
    assert not list(out.glob("trace.*.jsonl"))
    # The replay command gives the same hash.
    replay = subprocess.run(
        [sys.executable, "-m", "dagmem", *report["replay"].split()[1:], "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert replay.returncode == 0, replay.stderr[-2000:]
    assert json.loads(replay.stdout)["trace_sha256"] == report["trace_sha256"]


def test_the_command_refuses_more_homes_than_sessions_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = dagmem_run("sim", "--sessions", "2", "--homes", "3", "--json", "--out", str(out))
    assert done.returncode == 2
    assert json.loads(done.stdout) == {
        "error": "--homes 3: more homes than --sessions (2)",
        "code": "INVALID_INPUT",
    }
    assert "Traceback" not in done.stderr
    assert not out.exists()
