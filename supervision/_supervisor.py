"""`Supervisor`: one anyio task group that starts, watches, restarts and stops children, OTP-style.

Shape of a run. `run()` owns the task group. Each child runs in a wrapper task (`Run.main`, in
`_child`) inside its own `CancelScope`; the wrapper never raises a crash into the task group (that would
cancel every sibling at once) but records it and posts the run to the supervisor's mailbox. `run()`'s
own task reads the mailbox and applies restart type, intensity, backoff and strategy, one exit at a
time. Every change to the set of children (restart sequences, `start_child`, `terminate_child`,
shutdown) happens under one lock, so a strategy always sees a stable list.

Why child scopes get shielded. Once a child is started it is shielded from cancellation coming from
outside `run()`: when the surrounding scope is cancelled, `run()` itself stops the children one by one
in reverse start order, as it does on `stop()` and on escalation, instead of anyio cancelling them all
at once in no particular order. (A session actor flushing to its writer on the way down needs the writer
to still be there.) A child that swallows cancellation therefore delays shutdown: there is no
`brutal_kill`.
"""

from __future__ import annotations

import functools
import logging
import math
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._backoff import Backoff
from ._child import Child, Run, fatal_error
from ._spec import (
    ChildInfo,
    ChildSpec,
    EventKind,
    Restart,
    RestartIntensityExceeded,
    Strategy,
    SupervisorEvent,
)

__all__ = ["Supervisor"]

logger = logging.getLogger("dagmem.supervision")


@dataclass(eq=False)
class _Live:
    """What exists only while `run()` runs."""

    tg: anyio.abc.TaskGroup
    exits: MemoryObjectSendStream[Run | None]  # None only wakes the loop (`stop()`)
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    closing: bool = False
    starting: Run | None = None
    fatal: BaseException | None = None  # a child's KeyboardInterrupt/SystemExit, re-raised by run()
    sleeping: anyio.CancelScope | None = None


class Supervisor:
    """Starts children in order, restarts them by `strategy` and restart type, stops them in reverse.

    A crash is any exception escaping a child's `start` other than cancellation, including
    `BaseException`s such as `dagmem.memory.faults.InjectedCrash`; a return is a normal exit. More than
    `intensity` restarts within `period` seconds (event-loop clock) make `run()` stop every child and
    raise `RestartIntensityExceeded`, which a parent supervisor treats as this child's crash.
    """

    def __init__(
        self,
        name: str,
        children: Sequence[ChildSpec] = (),
        *,
        strategy: Strategy = Strategy.ONE_FOR_ONE,
        intensity: int = 3,
        period: float = 5.0,
        backoff: Backoff | None = None,
        rng: random.Random | None = None,
        on_event: Callable[[SupervisorEvent], None] | None = None,
    ) -> None:
        if intensity < 0 or not period > 0:
            raise ValueError(f"supervisor {name!r}: need intensity >= 0 and period > 0")
        ids = [spec.id for spec in children]
        if len(set(ids)) != len(ids):
            raise ValueError(f"supervisor {name!r}: duplicate child ids in {ids}")
        self.name = name
        self.strategy = Strategy(strategy)
        self.intensity = intensity
        self.period = period
        self.backoff = backoff if backoff is not None else Backoff()
        self._reset_after = period if self.backoff.reset_after is None else self.backoff.reset_after
        self._rng = rng if rng is not None else random.Random(0)
        self._on_event = on_event
        self._specs = tuple(children)
        # Children by id, in start order: a dynamic supervisor of 10,000 sessions finds, adds and removes
        # one in O(1) (a list made each start O(children)).
        self._children: dict[str, Child] = {spec.id: Child(spec) for spec in self._specs}
        self._restarts: deque[float] = deque()  # times of recent restarts, oldest first
        self._live: _Live | None = None
        self._active = False  # run() is in progress (set before _live exists)
        self._stop_requested = False

    # -- public API ----------------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Start the children in order, report started, supervise until cancelled, `stop()` or escalation.

        Each run starts from the specs given to the constructor (dynamic children and restart history of
        a previous run are gone, as when OTP restarts a supervisor). Returns normally after `stop()`.
        """
        if self._active:
            raise RuntimeError(f"supervisor {self.name!r} is already running")
        self._active = True
        self._children = {spec.id: Child(spec) for spec in self._specs}
        self._restarts.clear()
        outcome: BaseException | None = None
        send, receive = anyio.create_memory_object_stream[Run | None](math.inf)
        try:
            with send, receive:
                async with anyio.create_task_group() as tg:
                    live = self._live = _Live(tg, send)
                    try:
                        outcome = await self._supervise(live, receive, task_status)
                    finally:
                        with anyio.CancelScope(shield=True):
                            await self._shutdown(live)
        finally:
            self._live = None
            self._active = self._stop_requested = False
        if live.fatal is not None:
            raise live.fatal
        if outcome is not None:
            raise outcome  # RestartIntensityExceeded, its __cause__ already set

    def stop(self) -> None:
        """Ask `run()` to stop the children in reverse start order and return normally.

        Also interrupts a backoff delay. Called before `run()`, the next `run()` starts no child: it
        reports started and returns.
        """
        self._stop_requested = True
        if (live := self._live) is not None:
            live.exits.send_nowait(None)
            if live.sleeping is not None:
                live.sleeping.cancel()

    async def start_child(self, spec: ChildSpec) -> None:
        """Add a child after the others and start it; return once it called `task_status.started()`.

        As in OTP, a child that fails to start (raises or returns before `started()`) is discarded and
        the error is raised here; it does not count as a restart. Duplicate id: `ValueError`.
        """
        live = self._require_live()
        async with live.lock:
            self._require_live()
            if spec.id in self._children:
                raise ValueError(f"supervisor {self.name!r} already has a child {spec.id!r}")
            child = Child(spec)
            self._children[spec.id] = child
            run: Run | None = None
            try:
                run = await self._start(live, child)
            finally:
                if run is None or not run.ready:
                    del self._children[spec.id]
                    child.run = None  # its exit, already posted, is stale
        if not run.ready:
            self._emit("crashed" if run.error is not None else "exited", spec.id, run.error, run.ended_at)
            if run.error is not None:
                raise run.error
            reason = "was stopped" if run.stopping else "returned"
            raise RuntimeError(f"child {spec.id!r} {reason} before calling task_status.started()")

    async def terminate_child(self, child_id: str) -> None:
        """Stop a child (cancel it, wait until it finished) and remove it. Unknown id: `KeyError`."""
        live = self._require_live()
        async with live.lock:
            child = self._children.get(child_id)
            if child is None:
                raise KeyError(child_id)
            await self._stop(child)
            del self._children[child_id]

    def which_children(self) -> list[ChildInfo]:
        """The children in start order."""
        return [
            ChildInfo(child.spec.id, child.running, child.restarts, child.spec.restart)
            for child in self._children.values()
        ]

    # -- the supervising task ------------------------------------------------------------------------

    async def _supervise(
        self,
        live: _Live,
        exits: MemoryObjectReceiveStream[Run | None],
        task_status: anyio.abc.TaskStatus[None],
    ) -> BaseException | None:
        async with live.lock:
            for child in list(self._children.values()):
                if self._stop_requested:
                    break
                await self._start(live, child)
        task_status.started()
        while not self._stop_requested and live.fatal is None:
            run = await exits.receive()
            if run is None:
                continue
            async with live.lock:
                outcome = await self._on_exit(live, run)
            if outcome is not None:
                return outcome
        return None

    async def _on_exit(self, live: _Live, run: Run) -> BaseException | None:
        """Apply the policy to a child that ended on its own; return what `run()` must raise, if any."""
        child = run.child
        if child.run is not run or run.stopping:
            return None  # stopped by the supervisor or replaced since it ended: old news
        child.run = None
        crashed = run.error is not None
        self._emit("crashed" if crashed else "exited", child.spec.id, run.error, run.ended_at)
        policy = child.spec.restart
        if policy is Restart.TEMPORARY or (policy is Restart.TRANSIENT and not crashed):
            if policy is Restart.TEMPORARY:
                del self._children[child.spec.id]
            return None

        now = anyio.current_time()
        self._restarts.append(now)
        while self._restarts[0] < now - self.period:
            self._restarts.popleft()
        if len(self._restarts) > self.intensity:
            error = RestartIntensityExceeded(self.name, child.spec.id, len(self._restarts), self.period)
            error.__cause__ = run.error
            logger.warning("%s; stopping all children", error)
            self._emit("escalated", child.spec.id, run.error)
            return error

        ran = run.ended_at - run.began_at
        child.consecutive = 1 if ran >= self._reset_after else child.consecutive + 1
        await self._restart(live, child, self.backoff.delay(child.consecutive, self._rng))
        return None

    async def _restart(self, live: _Live, failed: Child, delay: float) -> None:
        """Stop the siblings the strategy names (reverse order), wait `delay`, start them all in order."""
        if self.strategy is Strategy.ONE_FOR_ONE:
            siblings: list[Child] = []
        elif self.strategy is Strategy.ONE_FOR_ALL:
            siblings = [child for child in self._children.values() if child is not failed]
        else:
            order = list(self._children.values())
            siblings = order[order.index(failed) + 1 :]
        stopped = []
        for sibling in reversed(siblings):
            if not await self._stop(sibling):
                continue  # not running (a transient that exited normally): it stays as it is
            if sibling.spec.restart is Restart.TEMPORARY:
                del self._children[sibling.spec.id]
            else:
                stopped.append(sibling)
        again = [child for child in self._children.values() if child is failed or child in stopped]
        for child in again:
            child.restarts += 1
            self._emit("restarting", child.spec.id)
        logger.info(
            "supervisor %r (%s): restarting %s in %.3g s after %r",
            self.name,
            self.strategy,
            [child.spec.id for child in again],
            delay,
            failed.spec.id,
        )
        if not self._stop_requested:
            with anyio.CancelScope() as live.sleeping:  # stop() cancels it
                await anyio.sleep(delay)
            live.sleeping = None
        for child in again:
            if self._stop_requested:
                return
            await self._start(live, child)

    async def _start(self, live: _Live, child: Child) -> Run:
        """Start one incarnation; return once it is ready or has already ended."""
        run = child.run = Run(child)
        live.starting = run
        try:
            await live.tg.start(run.main, functools.partial(self._ended, live))
        finally:
            live.starting = None
        if run.ready:
            if not run.done.is_set():
                # Only now that the starter is past tg.start(), not cancelled: see the module docstring.
                run.scope.shield = True
            self._emit("started", child.spec.id)
        return run

    def _ended(self, live: _Live, run: Run) -> None:
        """Called by a child's task as it finishes: post it to the mailbox, or wake run() to re-raise."""
        if (fatal := fatal_error(run.error)) is not None:
            logger.warning("supervisor %r: child %r raised %r", self.name, run.child.spec.id, fatal)
            if live.fatal is None:
                live.fatal = fatal
            live.exits.send_nowait(None)  # wake run(): it stops everything and re-raises
        elif not run.stopping:
            live.exits.send_nowait(run)

    async def _stop(self, child: Child) -> bool:
        """Stop the child's current run, if any, and wait for it; whether there was one."""
        run = child.run
        if run is None:
            return False
        child.run = None
        if not run.done.is_set():
            await run.stop()
            self._emit("terminated", child.spec.id, run.error)
        return True

    async def _shutdown(self, live: _Live) -> None:
        live.closing = True
        if (starting := live.starting) is not None:  # a start_child() waiting for its child
            starting.stopping = True
            starting.scope.cancel()
        async with live.lock:
            for child in reversed(self._children.values()):
                await self._stop(child)

    # -- helpers -------------------------------------------------------------------------------------

    def _require_live(self) -> _Live:
        live = self._live
        if live is None or live.closing:
            raise RuntimeError(f"supervisor {self.name!r} is not running")
        return live

    def _emit(
        self, kind: EventKind, child: str | None, error: BaseException | None = None, at: float | None = None
    ) -> None:
        if self._on_event is None:
            return
        event = SupervisorEvent(self.name, kind, child, anyio.current_time() if at is None else at, error)
        try:
            self._on_event(event)
        except Exception:  # an observer must not take the supervision tree down
            logger.exception("supervisor %r: on_event failed for %r", self.name, event)
