"""The MCP `flush` tool on a disk that stays full: it returns (not waiting for space) with the status,
whose `waiting_out` says why nothing is written (DISK_FULL) and that the writes are retried, and whose
times carry ISO strings beside the epoch floats. Once space returns, a flush writes everything. A real
MCP client, in process, on both backends."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the `mcp` extra")

from mcp import Client

from dagmem import Runtime, RuntimeConfig
from dagmem.memory import faults
from dagmem.serve._server import build_server
from dagmem.serve._tools import MemoryTools

pytestmark = pytest.mark.anyio


def _disk_full(site: str) -> None:
    if site.startswith("archive:"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), site)


async def test_flush_on_a_full_disk_returns_saying_why_nothing_is_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with Runtime.open(home, config=RuntimeConfig(retry_base=0.01, max_attempts=1)) as runtime:
        async with Client(build_server(MemoryTools(runtime, home))) as client:
            await client.call_tool(
                "append_turn", {"session_id": "s", "role": "user", "content": "Gate code 7781."}
            )
            with faults.armed(_disk_full), anyio.fail_after(60):
                answer = await client.call_tool("flush", {})
            assert not answer.is_error, answer.content
            status = answer.structured_content
            assert status is not None
            assert status["pending_turns"] == 1
            assert status["waiting_out"]["reason_code"] == "DISK_FULL"
            assert "retrying" in status["waiting_out"]["message"]
            assert status["last_failure"]["reason_code"] == "DISK_FULL"
            assert status["last_failure"]["at_iso"].endswith("+00:00")
            with anyio.fail_after(60):
                done = (await client.call_tool("flush", {})).structured_content
            assert done is not None
            assert done["waiting_out"] is None
            assert done["pending_turns"] == 0
            assert done["last_success_at_iso"].endswith("+00:00")
