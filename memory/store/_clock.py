"""A clock for runs that must write the same bytes (the simulator, the benchmarks, the tests): the epoch
seconds a store or a runtime stamps its files with, read off no wall clock."""

from __future__ import annotations

import anyio

__all__ = ["FakeClock"]


class FakeClock:
    """Epoch seconds from `start`. Each read moves it `step` seconds on first (every node gets a time of
    its own); with `step=0` it stands where its owner sets `now`. With `follows_loop` it reads `start`
    plus the event loop's clock instead: under virtual time, an hour slept is an hour in the files too."""

    def __init__(
        self, start: float = 1_750_000_000.0, *, step: float = 1.0, follows_loop: bool = False
    ) -> None:
        self.now = start
        self.step = step
        self.follows_loop = follows_loop

    def __call__(self) -> float:
        if self.follows_loop:
            return self.now + anyio.current_time()
        self.now += self.step
        return self.now
