"""The one write core (`BatchWriter`), as both drivers meet it: a status file that cannot be written, a
full disk (a real one: a small tmpfs), and a runtime that dies while `flush` waits."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

import dagmem
from dagmem import FileSessionStore, Runtime, RuntimeCrashed
from dagmem.actors import RuntimeConfig
from dagmem.memory import faults
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.faults import InjectedCrash
from dagmem.memory.outcomes import ReasonCode
from dagmem.memory.policy import is_marked
from dagmem.memory.writing import write_home
from dagmem.sim import check_home
from dagmem.tests._cli import dagmem_run

pytestmark = pytest.mark.anyio


def turn(i: int) -> str:
    return f"turn {i}: the plan for the trip to Lisbon, part {i}, with the museums and the trams"


def marked_records(home: Path) -> tuple[int, int]:
    """(records marked for the home's workspace, records) from the files alone."""
    workspace_id = read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")
    assert workspace_id is not None
    store = FileSessionStore(home, read_only=True)
    marked = total = 0
    for session_id in store.session_ids():
        for node in store.load(session_id).nodes.values():
            if node.role in ("user", "assistant"):
                total += 1
                marked += is_marked(node.metadata, workspace_id)
    return marked, total


def oracle_ok(home: Path) -> None:
    workspace_id = read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")
    report = check_home(FileSessionStore(home, read_only=True), home / "memory", workspace_id, drained=True)
    assert report.violations == []


async def test_a_status_file_that_cannot_be_written_never_stops_the_writer(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "memory" / ".dagmem" / "status.json").mkdir(parents=True)  # someone made it a directory
    async with Runtime.open(home) as rt:
        for i in range(6):
            await rt.append("s", "user" if i % 2 == 0 else "assistant", turn(i))
        await rt.flush(force=True)
        status = rt.status()
        assert status.pending_turns == 0
        assert status.last_outcome == "success"  # kept in memory
        assert status.status_problem is not None
        assert "status.json" in status.status_problem
        # The runtime is alive and keeps writing.
        await rt.append("s", "user", turn(6))
        await rt.flush(force=True)
        assert rt.status().pending_turns == 0
    assert marked_records(home) == (7, 7)
    oracle_ok(home)


def test_the_write_pass_carries_on_when_the_status_file_cannot_be_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = FileSessionStore(home)
    for i in range(4):
        store.append("s", "user" if i % 2 == 0 else "assistant", turn(i))
    (home / "memory" / ".dagmem" / "status.json").mkdir(parents=True)
    results = write_home(home, force=True)
    assert [(r.outcome, r.records) for r in results] == [("written", 4)]
    assert marked_records(home) == (4, 4)


async def test_flush_raises_when_the_runtime_dies_during_it_and_never_returns_with_turns_owed(
    tmp_path: Path,
) -> None:
    config = RuntimeConfig(root_intensity=2, root_period=60.0, retry_base=0.01)

    def always_crash(site: str) -> None:
        if site == "writer:batch":
            raise InjectedCrash(site)

    async def run() -> None:
        async with Runtime.open(tmp_path / "home", config=config) as rt:
            for i in range(6):
                await rt.append("s", "user" if i % 2 == 0 else "assistant", turn(i))
            with faults.armed(always_crash), anyio.fail_after(30):
                await rt.flush(force=True)  # must raise: the writer can never write
            pytest.fail(f"flush returned with {rt.status().pending_turns} turns owed")

    with pytest.raises(RuntimeCrashed):
        await run()


# -- a real full disk ------------------------------------------------------------------------------------


@contextlib.contextmanager
def small_disk(tmp_path: Path, size: str = "3m") -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], check=False, capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"needs root to mount a small tmpfs: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    """Fill the disk to the last byte with a ballast file; returns it (delete it to free the space)."""
    ballast = disk / "ballast"
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        for size in (65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return ballast


async def test_a_full_disk_is_waited_out_by_the_runtime_and_nothing_is_lost(tmp_path: Path) -> None:
    with small_disk(tmp_path) as disk:
        home = disk / "home"
        config = RuntimeConfig(retry_base=0.02, max_attempts=2)
        full: list[str] = []  # a batch failed on the full disk: one trace event per attempt
        past_max_attempts = anyio.Event()

        def trace(kind: str, fields: dict[str, object]) -> None:
            if kind == "failed" and fields["code"] == ReasonCode.DISK_FULL:
                full.append(kind)
                if len(full) > config.max_attempts:
                    past_max_attempts.set()

        async with Runtime.open(home, config=config, trace=trace) as rt:
            for i in range(8):
                await rt.append("s", "user" if i % 2 == 0 else "assistant", turn(i))
            ballast = fill(disk)
            # Appends on a full disk fail cleanly (retryable DISK_FULL), the session actor stays up.
            with pytest.raises(dagmem.WriteFailure) as failed:
                await rt.append("s", "user", "this turn has no room " * 200)
            assert failed.value.code is ReasonCode.DISK_FULL
            assert failed.value.retryable
            async with anyio.create_task_group() as tg:
                flushed = anyio.Event()

                async def flush() -> None:
                    await rt.flush(force=True)
                    flushed.set()

                tg.start_soon(flush)
                with anyio.fail_after(30):
                    await past_max_attempts.wait()  # more attempts than max_attempts: it must not give up
                failure = rt.status().last_failure
                assert failure is not None
                assert failure.reason_code is ReasonCode.DISK_FULL
                assert failure.retryable
                assert not flushed.is_set()
                ballast.unlink()
                with anyio.fail_after(60):
                    await flushed.wait()
            assert rt.status().pending_turns == 0
            await rt.append("s", "user", turn(9))  # and it carries on
            await rt.flush(force=True)
        assert marked_records(home) == (9, 9)
        oracle_ok(home)


def test_dagmem_write_on_a_full_disk_exits_75_without_a_traceback(tmp_path: Path) -> None:
    with small_disk(tmp_path) as disk:
        home = disk / "home"
        store = FileSessionStore(home)
        for i in range(6):
            store.append("s", "user" if i % 2 == 0 else "assistant", turn(i))
        ballast = fill(disk)
        command = ["write", "--force", "--json", "--home", str(home)]
        full = dagmem_run(*command)
        assert full.returncode == 75, full.stdout + full.stderr
        assert "Traceback" not in full.stderr
        out = json.loads(full.stdout)  # the whole pass could not start, or its session failed
        codes = [out["code"]] if "error" in out else [s["reason_code"] for s in out["sessions"]]
        assert codes == ["DISK_FULL"]
        ballast.unlink()
        done = dagmem_run(*command)
        assert done.returncode == 0, done.stdout + done.stderr
        assert marked_records(home) == (6, 6)
        shutil.rmtree(home / "memory" / ".dagmem" / "stage", ignore_errors=True)
        oracle_ok(home)
