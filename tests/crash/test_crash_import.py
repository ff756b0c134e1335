"""A real `dagmem import` + `dagmem write --force` killed with SIGKILL at a random durable step, then run
again: the home passes `dagmem verify --strict`, and holds exactly the nodes a clean run gives (nothing
lost, nothing twice).

The import writes its nodes without an fsync each (a crash costs a rerun, never a loss: the transcript is
still there and the import is idempotent); this is the test of that promise. The child process counts the
durable steps (`faults.hit`, one before each write, rename, fsync, syncfs, txlog line, mark) and sends
itself SIGKILL at the k-th, with k drawn from a seeded `random.Random` over the steps a clean run takes: a
real death at a known step, no timer. Set DAGMEM_CRASH_SEED to replay a run's choices.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from random import Random

import pytest

from dagmem.bench._transcripts import claude_code_year
from dagmem.memory.store import FileSessionStore

SEED = int(os.environ.get("DAGMEM_CRASH_SEED", "30"))
KILLS = 6  # the loop is bounded: each kill is a real process start, import and write

# The child: import, then write; with a step given, SIGKILL itself at that durable step. It prints the
# number of steps it passed (what a clean run takes), so the parent can draw the kill points.
CHILD = """
import os, signal, sys
from dagmem.memory import faults
from dagmem.cli import main
home, source, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
steps = 0
def hook(site):
    global steps
    steps += 1
    if steps == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)
with faults.armed(hook):
    code = main(["import", "claude-code", source, "--home", home, "--json"])
    code = code or main(["write", "--force", "--home", home, "--json"])
print(f"steps {steps}", file=sys.stderr)
sys.exit(code)
"""


def _run(home: Path, source: Path, kill_at: int = 0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(home), str(source), str(kill_at)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def _nodes(home: Path) -> dict[str, list[str]]:
    """Each session's node ids, in the order of their seqs (a node written twice would show twice)."""
    store = FileSessionStore(home, read_only=True)
    found: dict[str, list[str]] = {}
    for session_id in store.session_ids():
        snapshot = store.load(session_id)
        found[session_id] = [node.id for node in sorted(snapshot.nodes.values(), key=lambda n: n.seq)]
    return found


def _verify_strict(home: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "dagmem", "verify", "--strict", "--json", "--home", str(home)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, f"verify --strict failed:\n{done.stdout}\n{done.stderr}"
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.timeout(900)
def test_an_import_and_write_killed_at_a_random_durable_step_then_run_again_is_whole(tmp_path: Path) -> None:
    source = tmp_path / "source"
    claude_code_year(source, 4, 160)
    clean = tmp_path / "clean"
    first = _run(clean, source)
    assert first.returncode == 0, first.stderr
    steps = int(first.stderr.strip().rsplit("steps ", 1)[1])
    expected = _nodes(clean)
    assert sum(len(ids) for ids in expected.values()) > 100
    _verify_strict(clean)

    rng = Random(SEED)
    print(f"DAGMEM_CRASH_SEED={SEED}: {steps} durable steps in a clean run")
    for k in sorted(rng.sample(range(1, steps + 1), KILLS)):
        home = tmp_path / f"killed-{k}"
        killed = _run(home, source, kill_at=k)
        assert killed.returncode == -signal.SIGKILL, f"step {k}: not killed\n{killed.stderr}"
        rerun = _run(home, source)
        assert rerun.returncode == 0, f"step {k}: the rerun failed\n{rerun.stderr}"
        assert _nodes(home) == expected, f"step {k}: nodes lost or doubled"
        _verify_strict(home)
