"""What the actors of one runtime share: configuration, the store, the writer's address, and how blocking
work is run (in a worker thread for real files, inline for the in-memory store under virtual time)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import anyio

from ..memory.durable import WriterStatus
from ..memory.errors import InvalidInput
from ..memory.outcomes import ReasonCode
from ..memory.recall import RecallUpdater
from ..memory.settings import DEFAULTS, check_seconds, check_threshold
from ..memory.store import SessionStore
from ..memory.write import Distiller
from ._mailbox import Mailbox
from ._messages import WriteBatch

__all__ = ["Context", "RuntimeConfig", "Trace", "WaitingOut"]

log = logging.getLogger("dagmem.actors")

P = ParamSpec("P")
T = TypeVar("T")

Trace = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class RuntimeConfig:
    token_threshold: int = DEFAULTS.token_threshold
    idle_after: float = DEFAULTS.idle_after  # seconds of silence that end a session (event-loop clock)
    abandon_after: float = DEFAULTS.abandon_after  # seconds before a branch the head left is force-written
    session_mailbox: int = 64  # messages a session actor queues before `append` waits
    writer_mailbox: int = 256  # batches queued for the writer before delivery waits
    max_attempts: int = 5  # tries of a retryable failure before the session parks
    retry_base: float = 0.5  # first retry delay; doubles, capped at 60 s
    session_intensity: int = 5  # restarts of a session's actors within session_period before escalating
    session_period: float = 30.0
    sessions_intensity: int = 100
    sessions_period: float = 60.0
    root_intensity: int = 5
    root_period: float = 60.0
    fsync: bool = True

    def __post_init__(self) -> None:
        """Refuse, with `InvalidInput` naming the field, what would be coerced or never fire: NaN compares
        false with everything, so `idle_after=nan` would pass a `<= 0` check and never end a session."""
        check_threshold(self.token_threshold, "token_threshold")
        check_seconds("idle_after", self.idle_after, zero_ok=False)
        check_seconds("abandon_after", self.abandon_after, zero_ok=True)
        check_seconds("retry_base", self.retry_base, zero_ok=True)
        for name in ("session_period", "sessions_period", "root_period"):
            check_seconds(name, getattr(self, name), zero_ok=False)
        for name in ("session_mailbox", "writer_mailbox", "max_attempts"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInput(f"{name} must be a whole number of at least 1, not {value!r}")


@dataclass(frozen=True)
class WaitingOut:
    """One session's batch waiting out a cause that passes. Epoch seconds (the runtime's `epoch` clock)."""

    code: ReasonCode
    since: float  # the first failed attempt of this wait
    next_try_at: float


_WHY = {ReasonCode.DISK_FULL: "the disk is full (DISK_FULL)"}


@dataclass
class Context:
    config: RuntimeConfig
    store: SessionStore
    workspace_root: Path
    workspace_id: str
    distiller: Distiller
    writer: Mailbox[WriteBatch]
    epoch: Callable[[], float]  # wall-clock epoch seconds for files (virtual in the simulator)
    offload: bool  # run blocking work in worker threads
    trace: Trace | None = None
    status: WriterStatus = field(default_factory=WriterStatus)
    status_problem: str | None = None  # why status.json could not be written, while it cannot
    # Recall's writer: the install hook of every workspace the runtime opens to write (its writer actor,
    # a reorganisation); it holds the index it last wrote for as long as the runtime lives.
    recall: RecallUpdater = field(default_factory=RecallUpdater)
    # The sessions whose batch is waiting out a cause that passes (a full disk): what `status()` reports,
    # and what a `flush(wait_out=False)` returns on instead of waiting for ever.
    waiting_out: dict[str, WaitingOut] = field(default_factory=dict)
    waits: int = 0  # attempts that failed on such a cause, so far
    _noted: anyio.Event = field(default_factory=anyio.Event)  # set (and replaced) at each one

    async def next_wait_out(self) -> None:
        """Return once an attempt fails on a cause that passes (after this call began)."""
        start = self.waits
        while self.waits == start:
            await self._noted.wait()

    def wait_out(self, session_id: str, code: ReasonCode, seconds: float) -> None:
        """A session's batch failed on a cause that passes and is tried again in `seconds`."""
        now = self.epoch()
        earlier = self.waiting_out.get(session_id)
        if not self.waiting_out:  # said once, when nothing can be written any more: not at every retry
            log.warning(
                "nothing is written: %s; retrying until it passes (nothing is lost)", _WHY.get(code, code)
            )
        self.waiting_out[session_id] = WaitingOut(code, earlier.since if earlier else now, now + seconds)
        self.waits += 1
        noted, self._noted = self._noted, anyio.Event()
        noted.set()

    def waited_out(self, session_id: str) -> None:
        """The session wrote a batch (or retired): it waits out nothing any more."""
        if self.waiting_out.pop(session_id, None) is not None and not self.waiting_out:
            log.warning("writing again: the cause of the wait has passed")

    async def io(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run blocking work: in a worker thread for real I/O, inline otherwise (virtual time must not
        see threads, or the clock jumps while they run)."""
        call = functools.partial(fn, *args, **kwargs)
        if self.offload:
            return await anyio.to_thread.run_sync(call)
        return call()

    def emit(self, kind: str, **fields: Any) -> None:
        if self.trace is not None:
            self.trace(kind, fields)
