"""Shared fixtures. Every async test runs on asyncio and on trio (anyio's own pytest plugin).

Every test fails when dagmem blocks a running event loop on file I/O (`_loop_guard.py`: the calls are
watched, not timed).

Mark a test `@pytest.mark.virtual_time` to run it on a virtual clock on both backends (trio's
`MockClock(autojump_threshold=0)`, asyncio with `looptime`): an hour of `anyio.sleep` costs milliseconds.
Tests marked `slow` run only with `--slow`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dagmem import FileSessionStore, MemorySessionStore, SessionStore
from dagmem.memory.store import FakeClock
from dagmem.tests import _loop_guard

# The BPE table's per-machine cache (`memory/recall/_bpe_cache.py`): the suite's own (each process's, its
# children inherit it), never the user's `~/.cache/dagmem`. Removed when the process ends.
if not os.environ.get("DAGMEM_CACHE_DIR"):
    os.environ["DAGMEM_CACHE_DIR"] = tempfile.mkdtemp(prefix="dagmem-test-cache-")
    atexit.register(shutil.rmtree, os.environ["DAGMEM_CACHE_DIR"], ignore_errors=True)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", help="also run tests marked slow")


# The files whose tests take longest (`--durations=0` summed per file, on this project's 2-core machine),
# slowest first. They run first, whole (a module's fixtures are made once), and every other file after
# them in its usual order: so the suite ends on short tests, and with `--dist worksteal` (./dev.sh) a
# worker that runs out takes half of the other's queue instead of waiting for its last long test.
FIRST = (
    "cluster/test_cluster.py",  # Ray restarting killed actors: mostly waiting, started early
    "memory/test_input.py",  # the largest turn, written end to end on each backend
    "sim/test_sim.py",
    "bench/test_bench_report.py",
    "crash/test_crash_kill.py",
    "sim/test_sim_homes.py",
    "crash/test_crash.py",
    "bench/test_bench_runtime.py",
    "serve/test_hostile_mcp.py",
    "memory/adopt/test_import.py",
    "memory/adopt/test_import_killed.py",
    "memory/write/test_llm.py",
    "serve/test_mcp.py",
    "actors/test_runtime.py",
    "crash/test_crash_forget.py",
    "crash/test_crash_import.py",
    "hooks/test_hooks_claude_code.py",
)


def _first(item: pytest.Item) -> int:
    path = item.path.relative_to(Path(__file__).parent).as_posix()
    return FIRST.index(path) if path in FIRST else len(FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=_first)  # stable: each file's tests keep their order
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


_loop_guard.install()


@pytest.fixture(autouse=True)
def _event_loop_never_blocks_on_io() -> Iterator[None]:
    with _loop_guard.blocking_calls() as calls:
        yield
    if calls:
        shown = "\n  ".join(dict.fromkeys(calls))  # each call once, in order
        pytest.fail(f"dagmem blocked the event loop on file I/O ({len(calls)} calls):\n  {shown}")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> Any:
    name = str(request.param)
    if request.node.get_closest_marker("virtual_time") is None:
        return name
    if name == "trio":
        from trio.testing import MockClock

        return ("trio", {"clock": MockClock(autojump_threshold=0)})
    import looptime

    return ("asyncio", {"loop_factory": looptime.new_event_loop})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["file", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock) -> Iterator[SessionStore]:
    if request.param == "file":
        yield FileSessionStore(tmp_path / "home", clock=clock)
    else:
        yield MemorySessionStore(clock=clock)


@pytest.fixture
def locomo() -> Path:
    """The LoCoMo development split (CC BY-NC 4.0, never part of the repository): `$DAGMEM_LOCOMO`, else
    `tests/data/locomo-dev.json`, else `shared/data/locomo-dev.json` beside the checkout (where the
    project's shared folder lies). Skips, saying where it looked, when there is none."""
    named = os.environ.get("DAGMEM_LOCOMO")
    here = Path(__file__).resolve().parent
    candidates = [Path(named)] if named else [here / "data", here.parent.parent / "shared" / "data"]
    paths = [c if c.suffix == ".json" else c / "locomo-dev.json" for c in candidates]
    for path in paths:
        if path.is_file():
            return path
    pytest.skip(
        f"no LoCoMo data at {', '.join(map(str, paths))}: set DAGMEM_LOCOMO to a LoCoMo-format JSON file "
        "(CC BY-NC 4.0, kept out of the repository)"
    )
