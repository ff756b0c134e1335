"""Deterministic virtual time: trio's `MockClock` with seeded scheduling, and the trace that proves it.

Trio shuffles each batch of runnable tasks (so that no code comes to rely on an order) with a private,
unseeded `random.Random`. Its private switch `_ALLOW_DETERMINISTIC_SCHEDULING` (what Hypothesis' trio
plugin sets) sorts each batch by task creation order before shuffling, and seeding the private generator
then fixes the order: the same program gives the same schedule in every process. Both are restored
afterwards. This is private API: trio is pinned in pyproject.toml, and a test runs one seed in two
processes and compares trace hashes.

Trio also breaks deadline ties by `id()` of the cancel scopes, which differs between processes; the
workload draws every time from a continuous distribution, so no two deadlines of a run coincide.

The trace is the stream of `(virtual time, kind, fields)` events, each serialised canonically (sorted
keys, no whitespace) and hashed as it comes: `trace_sha256` names a run. Nothing measured on the wall
clock goes into it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any, TypeVar

import anyio
import trio
import trio._core._run as trio_run
from trio.testing import MockClock

__all__ = ["Trace", "Watchdog", "deterministic_scheduling", "run_virtual"]

T = TypeVar("T")


@contextmanager
def deterministic_scheduling(seed: int | str) -> Iterator[None]:
    """Make trio's scheduler a function of `seed` for the duration of the block."""
    flag = trio_run._ALLOW_DETERMINISTIC_SCHEDULING
    state = trio_run._r.getstate()
    setattr(trio_run, "_ALLOW_DETERMINISTIC_SCHEDULING", True)  # noqa: B010 (a Final in trio)
    trio_run._r.seed(f"dagmem-sim:scheduler:{seed}")
    try:
        yield
    finally:
        setattr(trio_run, "_ALLOW_DETERMINISTIC_SCHEDULING", flag)  # noqa: B010
        trio_run._r.setstate(state)


def run_virtual(main: Callable[[], Awaitable[T]], seed: int | str) -> T:
    """Run `main` on trio in virtual time (the clock jumps whenever every task waits), deterministically."""
    with deterministic_scheduling(seed):
        return anyio.run(main, backend="trio", backend_options={"clock": MockClock(autojump_threshold=0)})


class Trace:
    """Hashes events canonically as they come; optionally writes them (JSON lines) to `sink`."""

    def __init__(self, sink: IO[str] | None = None) -> None:
        self._sha = hashlib.sha256()
        self._sink = sink
        self.events = 0
        self.kinds: Counter[str] = Counter()

    def record(self, kind: str, fields: dict[str, Any]) -> None:
        line = json.dumps(
            [anyio.current_time(), kind, fields],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            default=str,
        )
        self._sha.update(line.encode())
        self._sha.update(b"\n")
        self.events += 1
        self.kinds[kind] += 1
        if self._sink is not None:
            self._sink.write(line + "\n")

    def hexdigest(self) -> str:
        return self._sha.hexdigest()


class Watchdog(trio.abc.Instrument):
    """Turns a livelock into a failure. In virtual time a loop that keeps tasks runnable at one instant
    (a timer set to a deadline already past, say) stops the clock for good: the run would never end.
    After `limit` task steps with neither a trace event (`poke`) nor the clock moving, it cancels `scope`
    and says when in `fired`."""

    def __init__(self, scope: anyio.CancelScope, limit: int = 2_000_000) -> None:
        self.scope = scope
        self.limit = limit
        self.steps = 0
        self.at = -1.0
        self.fired: float | None = None

    def poke(self) -> None:
        self.steps = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.steps += 1
        if self.steps < self.limit:
            return
        now = trio.current_time()
        self.steps = 0
        if now != self.at:
            self.at = now
            return
        if self.fired is None:
            self.fired = now
            self.scope.cancel()
