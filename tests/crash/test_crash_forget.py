"""Crash inside `forget`, at every fault site it passes (the crash suite's method: a hook dies at the N-th
`faults.hit`, N = 1, 2, ... until a run completes), then the redo (`finish_pending`, as the next open or a
rerun does): no copy of the forgotten text is left, the oracle is clean, nothing else was lost. Then the
same with real processes killed by SIGKILL at a sample of the sites, finished by `dagmem forget` again."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest

from dagmem import FileSessionStore
from dagmem.memory import faults
from dagmem.memory.audit import check_home
from dagmem.memory.durable import _atomic as durable
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.forget import finish_pending, forget, plan_forget, verify_forgotten
from dagmem.memory.format import HomePaths
from dagmem.tests._forget_homes import build_home


@contextmanager
def restarted() -> Iterator[None]:
    """As a new process after this one 'died': our own temp files belong to a dead writer."""
    real, me = durable.pid_alive, os.getpid()
    with mock.patch.object(durable, "pid_alive", lambda pid: pid != me and real(pid)):
        yield


def _oracle_ok(home: Path) -> None:
    report = check_home(
        FileSessionStore(home, read_only=True),
        HomePaths(home).memory,
        read_workspace_id(HomePaths(home).workspace.workspace_id),
        drained=True,
    )
    assert report.ok, report.violations


def _consumed(home: Path) -> list[str]:
    lines = (home / "memory/.dagmem/txlog.jsonl").read_text().splitlines()
    return sorted(source for line in lines for source in json.loads(line)["consumed"])


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    home = tmp_path_factory.mktemp("forget") / "home"
    texts = build_home(home, 7, sessions=2, turns=6)
    user = next(s for s, t in sorted(texts.items()) if s.startswith("s0/") and "Robin" not in t)
    return home, texts[user].split()[2]  # a token only that turn says


def _counting(home: Path, secret: str) -> int:
    sites: list[str] = []
    with faults.armed(sites.append):
        forget(home, plan_forget(home, match=secret), fsync=False)
    return len(sites)


def test_a_crash_at_every_fault_site_of_forget_is_finished_by_the_redo(
    prepared: tuple[Path, str], tmp_path: Path
) -> None:
    source, secret = prepared
    total = _counting(_copy(source, tmp_path / "count"), secret)
    assert total > 10
    consumed = _consumed(source)
    for n in range(1, total + 1):
        home = _copy(source, tmp_path / f"run{n}")
        seen = 0

        def hook(site: str, n: int = n) -> None:
            nonlocal seen
            seen += 1
            if seen == n:
                raise faults.InjectedCrash(site)

        with pytest.raises(faults.InjectedCrash), faults.armed(hook):
            forget(home, plan_forget(home, match=secret), fsync=False)
        with restarted():
            finish_pending(home, fsync=False)
            # A crash before the journal landed forgot nothing yet: the rerun the user makes does it.
            forget(home, plan_forget(home, match=secret), fsync=False)
        assert verify_forgotten(home) == [], f"crash at site {n}"
        assert plan_forget(home, match=secret).targets == ()
        assert _consumed(home) == consumed
        _oracle_ok(home)
        shutil.rmtree(home.parent)


def _copy(source: Path, where: Path) -> Path:
    shutil.copytree(source, where / "home", symlinks=True)
    return where / "home"


_KILLER = """
import os, signal, sys
from pathlib import Path
from dagmem.memory import faults
from dagmem.memory.forget import forget, plan_forget
home, secret, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
seen = 0
def hook(site):
    global seen
    seen += 1
    if seen == n:
        os.kill(os.getpid(), signal.SIGKILL)
with faults.armed(hook):
    forget(home, plan_forget(home, match=secret))
"""


def test_sigkill_at_a_sample_of_sites_then_dagmem_forget_again_leaves_no_copy(
    prepared: tuple[Path, str], tmp_path: Path
) -> None:
    source, secret = prepared
    total = _counting(_copy(source, tmp_path / "count"), secret)
    for n in sorted({1, 3, total // 3, total // 2, (2 * total) // 3, total - 1}):  # bounded: six kills
        home = _copy(source, tmp_path / f"kill{n}")
        killed = subprocess.run([sys.executable, "-c", _KILLER, str(home), secret, str(n)], check=False)
        assert killed.returncode == -9
        again = subprocess.run(
            [sys.executable, "-m", "dagmem", "forget", "--home", str(home), "--match", secret, "--yes"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert again.returncode == 0, again.stdout + again.stderr
        assert verify_forgotten(home) == [], f"SIGKILL at site {n}"
        _oracle_ok(home)
        shutil.rmtree(home.parent)
