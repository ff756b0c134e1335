"""A session's timer: one deadline at a time (idle, an abandoned branch, a retry), on the event-loop
clock so virtual time works. When it passes, the timer sends `Wake` to the session's mailbox."""

from __future__ import annotations

import anyio

from ._mailbox import Mailbox, MailboxClosed
from ._messages import SessionMessage, Wake

__all__ = ["Timer"]


class Timer:
    """The state outlives a crash of the timer task: a restarted timer keeps the deadline."""

    def __init__(self, target: Mailbox[SessionMessage]) -> None:
        self.target = target
        self.at: float | None = None
        self._changed = anyio.Event()

    def set(self, at: float | None) -> None:
        if at != self.at:
            self.at = at
            self._changed.set()

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            self._changed = anyio.Event()
            at = self.at
            if at is None:
                await self._changed.wait()
                continue
            delay = at - anyio.current_time()
            if delay > 0:
                with anyio.move_on_after(delay):
                    await self._changed.wait()
                continue  # re-read the deadline (changed, or now due)
            self.at = None
            try:
                await self.target.send(Wake())
            except MailboxClosed:
                return
