"""One supervised child and its incarnations: how a child is run, observed and stopped.

`Child` is the supervisor's record of a spec (restart counts, the current run). `Run` is one incarnation:
its own `CancelScope`, an `Event` set when it has finished, and how it ended. `Run.main` is the task the
supervisor starts; it never lets a crash escape into the task group (that would cancel every sibling at
once), it records the outcome and hands the run to the supervisor instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import anyio
import anyio.abc

from ._spec import ChildSpec

__all__ = ["Child", "Run", "fatal_error"]


class Run:
    """One incarnation of a child, from the call of its `start` until it has finished."""

    def __init__(self, child: Child) -> None:
        self.child = child
        self.scope = anyio.CancelScope()
        self.done = anyio.Event()
        self.began_at = self.ended_at = anyio.current_time()
        self.ready = False  # it called task_status.started()
        self.stopping = False  # the supervisor cancelled it: how it ends is not a crash
        self.error: BaseException | None = None  # None: it returned (or was stopped)

    @property
    def running(self) -> bool:
        return self.ready and not self.done.is_set()

    async def main(self, ended: Callable[[Run], None], *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Run the child's `start`; then tell `ended`, unless cancellation from outside interrupted it."""
        try:
            with self.scope:
                await self.child.spec.start(task_status=_Ready(self, task_status))
        except anyio.get_cancelled_exc_class():
            raise  # cancelled from outside its own scope, before it was ready: run() is going down
        except BaseException as exc:  # a crash (InjectedCrash included), or KeyboardInterrupt/SystemExit
            self.error = exc
        finally:
            self.ended_at = anyio.current_time()
            self.done.set()
        if not self.ready:
            task_status.started()  # let the starter go on; it reads the outcome from here
        ended(self)

    async def stop(self) -> None:
        """Cancel it and wait until it has finished, even if the caller is being cancelled."""
        if self.done.is_set():
            return
        self.stopping = True
        self.scope.cancel()
        with anyio.CancelScope(shield=True):
            await self.done.wait()


@dataclass(eq=False)
class Child:
    spec: ChildSpec
    run: Run | None = None
    restarts: int = 0
    consecutive: int = 0  # failures in a row, for the backoff

    @property
    def running(self) -> bool:
        return self.run is not None and self.run.running


class _Ready(anyio.abc.TaskStatus[None]):
    """The `task_status` a child sees: marks its run ready, then lets the starter go on."""

    def __init__(self, run: Run, outer: anyio.abc.TaskStatus[None]) -> None:
        self._run = run
        self._outer = outer

    def started(self, value: None = None) -> None:
        if self._run.ready:
            raise RuntimeError(f"child {self._run.child.spec.id!r} called task_status.started() twice")
        self._run.ready = True
        self._outer.started()


def fatal_error(error: BaseException | None) -> BaseException | None:
    """The `KeyboardInterrupt`/`SystemExit` in `error`, if any: those end the process, not a child."""
    if isinstance(error, KeyboardInterrupt | SystemExit):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            if (found := fatal_error(inner)) is not None:
                return found
    return None
