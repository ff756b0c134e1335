"""`dagmem write` says why records stay owed: those a failed batch left are "owed after a failure", with
its reason and when they are tried again (the next `dagmem write` for a retryable one; for a permanent
one, not until its cause is fixed), never "owed but not yet due", which only a batch not due yet is."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.memory import faults
from dagmem.tests._cli import dagmem_run


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    store = FileSessionStore(home)
    for i in range(4):
        store.append(
            "s", "user" if i % 2 == 0 else "assistant", f"Turn {i}: the shed roof leaks at the back."
        )
    return home


def _fail_every(code: int) -> faults.Hook:
    def hook(site: str) -> None:
        if site.startswith("archive:"):
            raise OSError(code, os.strerror(code), site)

    return hook


@pytest.mark.parametrize(
    ("code", "reason", "when"),
    [
        (errno.ENOSPC, "DISK_FULL", "tried again by the next `dagmem write`"),
        (errno.EACCES, "PERMISSION_DENIED", "until the cause named above is fixed"),
    ],
)
def test_records_a_failure_left_are_owed_after_it_not_not_yet_due(
    tmp_path: Path, code: int, reason: str, when: str
) -> None:
    home = _home(tmp_path)
    with faults.armed(_fail_every(code)):
        failed = dagmem_run("write", "--force", "--home", str(home))
    assert failed.returncode in (1, 75), failed.stdout + failed.stderr
    assert "not yet due" not in failed.stdout
    owed = [line for line in failed.stdout.splitlines() if "owed after a failure" in line]
    assert len(owed) == 1, failed.stdout
    assert owed[0].startswith("4 records owed after a failure")
    assert reason in owed[0]
    assert when in owed[0]
    done = dagmem_run("write", "--force", "--home", str(home))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "owed after a failure" not in done.stdout
    assert "0 records owed but not yet due" in done.stdout


def test_records_not_due_yet_are_said_to_be_so(tmp_path: Path) -> None:
    home = _home(tmp_path)
    result = dagmem_run("write", "--home", str(home))  # under the threshold and not idle: nothing due
    assert result.returncode == 0, result.stderr
    assert "4 records owed but not yet due (use --force to write them)" in result.stdout
