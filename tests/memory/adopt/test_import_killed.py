"""`dagmem import` SIGKILLed at random points (a real process, killed by the kernel), then run again: every
session is valid after the kill, the rerun finishes the import, the home holds exactly what an import that
was never killed writes (node files and meta.json, head and times included), and after `dagmem write
--force`, `dagmem verify --strict` passes. An import writes meta.json once per flush, not per node, so a kill leaves it behind its nodes."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from dagmem import FileSessionStore
from dagmem.bench._transcripts import claude_code_session

KILLS = int(os.environ.get("DAGMEM_IMPORT_KILLS", "6"))


def import_process(source: Path, home: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.Popen(
        [sys.executable, "-m", "dagmem", "import", "claude-code", str(source), "--home", str(home), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def dagmem(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [sys.executable, "-m", "dagmem", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )


def session_files(home: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in sorted((home / "sessions").rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def test_an_import_killed_at_random_points_then_run_again_is_the_clean_import(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    claude_code_session(source, 1_500, seed=3)  # distinct times: updated_at shows a lagging meta.json
    clean = tmp_path / "clean"
    started = time.monotonic()
    proc = import_process(source, clean)
    _out, err = proc.communicate(timeout=300)
    took = time.monotonic() - started
    assert proc.returncode == 0, err
    expected = session_files(clean)
    (sid,) = FileSessionStore(clean).session_ids()
    rng = random.Random(30)
    landed = 0
    for k in range(KILLS):
        home = tmp_path / f"killed-{k}"
        proc = import_process(source, home)
        time.sleep(rng.uniform(0.3, max(0.4, took)))  # the kill's random instant, not a wait for anything
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        if proc.returncode == -signal.SIGKILL:
            landed += 1
        if (home / "sessions" / sid).is_dir():  # whatever the kill left is a valid session
            assert FileSessionStore(home, read_only=True).load(sid).problems == []
        rerun = import_process(source, home)
        _out, err = rerun.communicate(timeout=300)
        assert rerun.returncode == 0, err
        assert session_files(home) == expected, f"kill {k}: the rerun did not give the clean import"
        for command in (["write", "--force"], ["verify", "--strict"]):  # then memory, and the oracle
            done = dagmem(*command, "--home", str(home))
            assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    assert landed, "no kill landed while the import ran"
