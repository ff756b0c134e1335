"""The vocabulary of supervision, in OTP's words: strategies, restart types, child specs and events.

Plain data, no event loop: `_supervisor` acts on it, `_backoff` computes delays, and callers (the actor
layer, tests, the simulator) build and read it.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from ..memory.errors import DagmemError

__all__ = [
    "ChildInfo",
    "ChildSpec",
    "EventKind",
    "Restart",
    "RestartIntensityExceeded",
    "Strategy",
    "SupervisorEvent",
]


class Strategy(enum.StrEnum):
    """Which children a supervisor restarts when one of them terminates and is to be restarted."""

    ONE_FOR_ONE = "one_for_one"
    """Only the failed child."""
    ONE_FOR_ALL = "one_for_all"
    """All children: the others are stopped (reverse start order), then all are started again (in order)."""
    REST_FOR_ONE = "rest_for_one"
    """The failed child and the children started after it (stopped in reverse, started in order)."""


class Restart(enum.StrEnum):
    """When a terminated child is restarted."""

    PERMANENT = "permanent"
    """Always, after a crash or a normal exit."""
    TRANSIENT = "transient"
    """Only after a crash; after a normal exit it stays in the children, not running."""
    TEMPORARY = "temporary"
    """Never; it is removed from the children when it terminates or a strategy stops it."""


@dataclass(frozen=True)
class ChildSpec:
    """How to start one child.

    `start` is called as `await start(task_status=status)`. It must call `status.started()` once it is
    ready to serve, then run until it returns (a normal exit) or raises (a crash). Cancellation means the
    supervisor is stopping it; `KeyboardInterrupt` and `SystemExit` are not crashes and stop the whole
    supervisor, which re-raises them.
    """

    id: str
    start: Callable[..., Awaitable[None]]
    restart: Restart = Restart.PERMANENT


@dataclass(frozen=True)
class ChildInfo:
    """One row of `Supervisor.which_children()`."""

    id: str
    running: bool
    restarts: int
    """How many times this child was started again, by its own termination or by a strategy."""
    restart: Restart


EventKind = Literal["started", "exited", "crashed", "restarting", "terminated", "escalated"]


@dataclass(frozen=True)
class SupervisorEvent:
    """What a supervisor reports to its `on_event` callback.

    - `started`: the child called `task_status.started()`;
    - `exited` / `crashed`: it returned / raised (`error`) on its own; `at` is when it ended;
    - `restarting`: it is about to be started again (before the backoff delay);
    - `terminated`: the supervisor stopped it (a strategy, `terminate_child`, `stop()`, shutdown);
    - `escalated`: restart intensity was exceeded (`child` is the one whose restart was refused).
    """

    supervisor: str
    kind: EventKind
    child: str | None
    at: float
    error: BaseException | None = None


class RestartIntensityExceeded(DagmemError):
    """More than `intensity` restarts happened within `period` seconds: the supervisor gave up.

    Raised by `Supervisor.run()` after all its children were stopped, chained (`__cause__`) from the
    crash that asked for the refused restart (`None` if that child exited normally). A parent supervisor
    sees it as its child's crash: that is escalation.
    """

    def __init__(self, supervisor: str, child: str, restarts: int, period: float) -> None:
        super().__init__(
            f"supervisor {supervisor!r}: child {child!r} would be restart number {restarts} "
            f"within {period:g} s, more than its intensity allows"
        )
        self.supervisor = supervisor
        self.child = child
        self.restarts = restarts
        """Restarts within the period, counting the refused one (so `intensity + 1`)."""
        self.period = period
