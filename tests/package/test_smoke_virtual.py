from __future__ import annotations

import time

import anyio
import pytest

pytestmark = pytest.mark.anyio


@pytest.mark.virtual_time
async def test_an_hour_of_virtual_sleep_costs_milliseconds() -> None:
    wall = time.monotonic()
    start = anyio.current_time()
    await anyio.sleep(3600)
    assert anyio.current_time() - start >= 3600
    assert time.monotonic() - wall < 5
