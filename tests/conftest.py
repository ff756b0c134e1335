"""Shared fixtures. Every async test runs on asyncio and on trio (anyio's own pytest plugin)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dagmem import FileSessionStore, MemorySessionStore, SessionStore


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class FakeClock:
    """A settable epoch clock for stores, so times in files are predictable."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["file", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock) -> Iterator[SessionStore]:
    if request.param == "file":
        yield FileSessionStore(tmp_path / "home", clock=clock)
    else:
        yield MemorySessionStore(clock=clock)
