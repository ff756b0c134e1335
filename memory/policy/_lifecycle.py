"""A live session's lifecycle (DESIGN §3, §5) as a pure state machine, next to the planner it drives.

The session machine (`machine.py`) feeds it events: activity (a turn or a head move) at time t, a timer
tick at t, a flush, an end, a batch written or failed; a restart is a new machine. After every event it
asks `pump` what to do: start this batch, answer these waiters, set the timer to T, retire. It does no
I/O and reads no clock (times are passed in and the actor performs the actions), so the same decisions
run on asyncio, trio and virtual time, and tests drive them without an event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ._planner import Batch, SessionPlanner

__all__ = ["Actions", "Carryover", "SessionLifecycle"]

W = TypeVar("W")  # a waiting caller; opaque here (the actor's reply handle)


@dataclass(eq=False)
class Carryover(Generic[W]):
    """What outlives an actor restart (the session's handle holds it). A boundary asked for by `end` or
    `flush(force=True)` and not finished yet, so that a restarted actor carries on with it instead of
    answering the waiting callers at once while the session still owes records; whether the session was
    ended; and the callers waiting for nothing to be due."""

    boundary: bool = False
    ended: bool = False
    waiters: list[W] = field(default_factory=list)


@dataclass(frozen=True)
class Actions(Generic[W]):
    """What the actor does after a message, in this order."""

    start: Batch | None = None  # hand this batch to the writer (the planner holds it in flight)
    answer: tuple[W, ...] = ()  # answer these callers: nothing is due or in flight
    timer: float | None = None  # the session's next deadline (None: none)
    retire: bool = False  # the session ended and owes nothing: give back its memory


class SessionLifecycle(Generic[W]):
    """Idle, boundary, end, waiters and retirement of one session. Times are event-loop seconds."""

    def __init__(
        self,
        planner: SessionPlanner | None,
        carry: Carryover[W],
        *,
        idle_after: float,
        now: float,
        retire_when_done: bool = False,
    ) -> None:
        """The restart event: an actor (re)started at `now` over a planner rebuilt from disk (None: the
        session is invalid, and no memory is written for it). `retire_when_done`: the actor was started only
        to flush the session (it was not live), so it retires once that is done."""
        self.planner = planner
        self.carry = carry
        self.idle_after = idle_after
        self.last_activity = now
        self.idle_armed = False
        self.ending = retire_when_done or carry.ended
        if planner is None:
            return
        if len(planner.view):
            self.idle_armed = True  # a session revived from disk ends after idle_after too
            planner.check_all_tips()
        if carry.boundary:
            planner.on_boundary()  # the previous incarnation crashed in the middle of it

    # -- events ----------------------------------------------------------------------------------------

    def activity(self, now: float) -> None:
        """A turn or a head move arrived at `now` (counted before its I/O: a refused append is activity)."""
        self.last_activity = now
        self.idle_armed = True

    def tick(self, now: float) -> bool:
        """The timer fired. True when this began the idle boundary (`idle_after` without activity)."""
        if self.planner is None or not self.idle_armed or now < self.last_activity + self.idle_after:
            return False
        self.idle_armed = False
        self.ending = True
        self.planner.on_boundary()
        return True

    def flush(self, waiter: W | None = None, *, force: bool = False) -> None:
        """A caller waits until nothing is due or in flight; `force` first starts a boundary write."""
        if force:
            self._boundary()
        if waiter is not None:
            self.carry.waiters.append(waiter)

    def end(self, waiter: W | None = None) -> None:
        """The session ended: boundary-write it, answer the caller when nothing is owed, then retire."""
        self.ending = self.carry.ended = True
        self.flush(waiter, force=True)

    def written(self, batch: Batch, node_ids: Sequence[str] | None = None) -> None:
        """The batch in flight (or its leading `node_ids`) was installed or found consumed, and marked."""
        if self.planner is not None:
            self.planner.on_written(batch, node_ids)

    def failed(
        self,
        batch: Batch,
        *,
        retryable: bool,
        now: float,
        wait_out: bool = False,
        retry_after: float | None = None,
    ) -> None:
        """The batch in flight was not written: it stays owed (retried with backoff, or parked; never
        parked when `wait_out`: a cause that passes, such as a full disk; not before `retry_after`)."""
        if self.planner is not None:
            self.planner.on_failed(
                batch, retryable=retryable, now=now, wait_out=wait_out, retry_after=retry_after
            )

    def _boundary(self) -> None:
        self.carry.boundary = True
        if self.planner is not None:
            self.planner.on_boundary()

    # -- decisions -------------------------------------------------------------------------------------

    def pump(self, now: float, *, queued: int | None = None) -> Actions[W]:
        """What to do now. After a message, `queued` is how many more wait in the mailbox (a session with
        messages waiting never retires); None when the actor has just started (it retires only after a
        message)."""
        planner = self.planner
        start = planner.next_batch(now) if planner is not None and planner.inflight is None else None
        answer: tuple[W, ...] = ()
        if planner is None or not planner.busy():
            self.carry.boundary = False
            answer, self.carry.waiters = tuple(self.carry.waiters), []
        deadlines: list[float] = []
        if planner is not None:
            if self.idle_armed:
                deadlines.append(self.last_activity + self.idle_after)
            if (deadline := planner.next_deadline()) is not None:
                deadlines.append(deadline)
        retire = queued is not None and self._may_retire(queued)
        return Actions(start, answer, min(deadlines, default=None), retire)

    def _may_retire(self, queued: int) -> bool:
        """After an end or idle boundary, a session that owes nothing gives back its memory."""
        if not self.ending or self.carry.waiters or queued:
            return False
        planner = self.planner
        if planner is None:
            return True
        return planner.inflight is None and not planner.busy() and not planner.owes()
