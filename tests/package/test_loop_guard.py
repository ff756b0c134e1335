"""The suite's guard against blocking the event loop (`tests/_loop_guard.py`): it records the file I/O
dagmem does on a running loop's thread, from its async code or its actor runtime, and nothing else: not
the same call in a worker thread, not a test's own I/O, not a runtime's inline I/O under `offload=False`."""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio
import pytest

import dagmem
from dagmem import MemorySessionStore, Runtime
from dagmem.tests._loop_guard import blocking_calls

pytestmark = pytest.mark.anyio

Probe = Callable[..., Coroutine[Any, Any, Any]]

# Coroutines compiled as dagmem's own (the guard knows dagmem's code by its files): the package has none
# that blocks, and must not have one for this test to show what one would do.
_PROBES = """
import os

async def read(path):
    return path.read_text()

async def fsync(fd):
    os.fsync(fd)

async def read_inline(path, offload=False):
    return path.read_text()
"""


def dagmem_coroutine(name: str) -> Probe:
    namespace: dict[str, Any] = {}
    exec(compile(_PROBES, str(Path(dagmem.__file__).parent / "_probe.py"), "exec"), namespace)
    probe: Probe = namespace[name]
    return probe


def run_by_hand(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never awaits to its end without any event loop; its result."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("the probe awaited")


async def test_a_dagmem_coroutine_reading_a_file_on_the_loop_is_recorded(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("x")
    with blocking_calls() as calls:
        assert await dagmem_coroutine("read")(path) == "x"
    assert calls == [f"open {path}, by _probe.py:5 (read)"]


async def test_an_fsync_on_the_loop_is_recorded_though_it_raises_no_audit_event(tmp_path: Path) -> None:
    fd = await anyio.to_thread.run_sync(os.open, str(tmp_path / "f"), os.O_CREAT | os.O_WRONLY)
    try:
        with blocking_calls() as calls:
            await dagmem_coroutine("fsync")(fd)
    finally:
        os.close(fd)
    assert calls == [f"os.fsync of fd {fd}, by _probe.py:8 (fsync)"]


async def test_the_same_read_in_a_worker_thread_or_by_the_test_itself_is_not(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("x")
    read = dagmem_coroutine("read")
    with blocking_calls() as calls:
        assert await anyio.to_thread.run_sync(run_by_hand, read(path)) == "x"
        assert path.read_text() == "x"
    assert calls == []


async def test_inline_io_under_offload_false_is_the_documented_exception(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("x")
    with blocking_calls() as calls:
        assert await dagmem_coroutine("read_inline")(path) == "x"
    assert calls == []


async def test_runtime_core_on_the_loop_is_recorded_and_core_async_is_not(tmp_path: Path) -> None:
    async with Runtime.open(tmp_path) as rt:
        with blocking_calls() as calls:
            assert await rt.core_async() == ""
        assert calls == []
        with blocking_calls() as calls:
            assert rt.core() == ""
        assert len(calls) == 1
        assert calls[0].startswith(f"open {tmp_path / 'memory' / 'core.md'}, by actors/_runtime.py:")
        assert calls[0].endswith(" (core)")
    with blocking_calls() as calls:  # an in-memory store: the runtime runs its I/O inline, as documented
        async with Runtime.open(tmp_path, store=MemorySessionStore()) as rt:
            assert await rt.core_async() == ""
    assert calls == []


def test_nothing_is_recorded_without_a_running_loop(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("x")
    with blocking_calls() as calls:
        assert run_by_hand(dagmem_coroutine("read")(path)) == "x"
    assert calls == []
