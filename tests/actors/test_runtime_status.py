"""What `Runtime.status()` and `flush()` tell a host: the times as epoch floats (as always) with ISO 8601
strings beside them; a full disk said (DISK_FULL, since when, the next try) instead of retried silently,
and `flush(wait_out=False)` (the MCP `flush` tool's) returning with that status rather than waiting for
space. And what `Runtime.open` passes down: the configured `fsync` to the workspace id, the configured
clock to the session store; `core_async()` reads the core off the event loop."""

from __future__ import annotations

import errno
import logging
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from dagmem import Runtime, RuntimeConfig
from dagmem.actors import _runtime
from dagmem.memory import faults
from dagmem.memory.durable import ensure_workspace_id
from dagmem.memory.format import WorkspacePaths
from dagmem.memory.outcomes import ReasonCode

pytestmark = pytest.mark.anyio


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def _disk_full(site: str) -> None:
    if site.startswith("archive:"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), site)


async def test_status_times_have_iso_strings_beside_the_epoch_floats(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path / "home", config=RuntimeConfig(retry_base=0.01, max_attempts=1)) as rt:
        await rt.append("s", "user", "The dentist moved to Friday at nine.")
        status = await rt.flush(force=True)
        assert status == rt.status()
        assert isinstance(status.last_success_at, float)
        assert status.last_success_at_iso == _iso(status.last_success_at)
        assert status.last_success_at_iso in repr(status)
        dumped = status.model_dump(mode="json")
        assert dumped["last_success_at"] == status.last_success_at
        assert dumped["last_success_at_iso"] == status.last_success_at_iso


async def test_a_full_disk_is_said_in_status_and_flush_can_return_on_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = RuntimeConfig(retry_base=0.01, max_attempts=1)
    caplog.set_level(logging.WARNING, logger="dagmem")
    async with Runtime.open(tmp_path / "home", config=config) as rt:
        await rt.append("s", "user", "The boiler pressure should sit at 1.5 bar.")
        await rt.append("s", "assistant", "Noted: 1.5 bar.")
        with faults.armed(_disk_full):
            with anyio.fail_after(60):
                status = await rt.flush(force=True, wait_out=False)
            assert status.pending_turns == 2
            waiting = status.waiting_out
            assert waiting is not None
            assert waiting.reason_code is ReasonCode.DISK_FULL
            assert "DISK_FULL" in waiting.message
            assert "retrying" in waiting.message
            assert waiting.sessions == 1
            assert waiting.since <= waiting.next_try_at
            assert waiting.since_iso == _iso(waiting.since)
            assert status.last_failure is not None
            assert status.last_failure.reason_code is ReasonCode.DISK_FULL
            assert status.last_failure.at_iso == _iso(status.last_failure.at)
            retried = rt.status().waiting_out
            with anyio.fail_after(60):  # still retrying behind (several attempts, past max_attempts)
                while rt.status().waiting_out is None or rt.status().waiting_out == retried:  # noqa: ASYNC110
                    await anyio.sleep(0.01)
        said = [r for r in caplog.records if "nothing is written" in r.getMessage()]
        assert len(said) == 1  # once, when writing stopped: not at every retry
        assert "DISK_FULL" in said[0].getMessage()
        with anyio.fail_after(60):
            after = await rt.flush(force=True)
        assert after.waiting_out is None
        assert after.pending_turns == 0


async def test_open_passes_the_configured_fsync_and_clock_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    ensure = ensure_workspace_id

    def recording(path: Path, *, fsync: bool = True, new_id: str | None = None) -> str:
        seen.append(fsync)
        return ensure(path, fsync=fsync, new_id=new_id)

    monkeypatch.setattr(_runtime, "ensure_workspace_id", recording)
    at = 1_234_567_890.0
    async with Runtime.open(tmp_path / "home", config=RuntimeConfig(fsync=False), epoch=lambda: at) as rt:
        node = await rt.append("s", "user", "Bins go out on Thursday night.")
        stored = rt._ctx.store.load("s").nodes[node]
    assert seen == [False]
    assert stored.created_at == at


async def test_core_async_reads_the_core_in_a_worker_thread(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path / "home") as rt:
        await rt.append("s", "user", "I am allergic to penicillin.")
        await rt.flush(force=True)
        loop_thread = threading.get_ident()
        threads: list[int] = []
        core = rt.core

        def recording(**kwargs: Any) -> str:
            threads.append(threading.get_ident())
            return core(**kwargs)

        rt.core = recording  # type: ignore[method-assign]
        text = await rt.core_async()
        assert threads
        assert threads[0] != loop_thread
        assert text == WorkspacePaths(tmp_path / "home" / "memory").core.read_text(encoding="utf-8")
        assert "penicillin" in text
