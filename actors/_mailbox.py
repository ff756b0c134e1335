"""Bounded mailboxes with request/reply.

A mailbox belongs to an actor's *address*, not to one incarnation of it: when a supervisor restarts the
actor, queued messages wait for the new one (nothing sent is lost to a crash). The message being handled
when an actor crashes gets the crash as its reply, so no caller waits forever. Sending to a full mailbox
waits (backpressure); sending to a closed one raises `MailboxClosed`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..memory.errors import DagmemError

__all__ = ["ActorStopped", "Envelope", "Mailbox", "MailboxClosed", "Reply"]

M = TypeVar("M")
T = TypeVar("T")


class MailboxClosed(DagmemError):
    """The actor behind this mailbox has stopped for good."""


class ActorStopped(DagmemError):
    """The actor stopped (or crashed) before it answered."""


class Reply(Generic[T]):
    """A one-shot answer to a request."""

    __slots__ = ("_error", "_event", "_value")

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    @property
    def done(self) -> bool:
        return self._event.is_set()

    def set(self, value: T) -> None:
        if not self._event.is_set():
            self._value = value
            self._event.set()

    def fail(self, error: BaseException) -> None:
        if not self._event.is_set():
            self._error = error
            self._event.set()

    async def wait(self) -> T:
        await self._event.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Envelope(Generic[M]):
    message: M
    reply: Reply[object] | None = None


class Mailbox(Generic[M]):
    def __init__(self, name: str, capacity: int) -> None:
        self.name = name
        send, receive = anyio.create_memory_object_stream[Envelope[M]](capacity)
        self._send: MemoryObjectSendStream[Envelope[M]] = send
        self._receive: MemoryObjectReceiveStream[Envelope[M]] = receive
        self.closed = False

    def __len__(self) -> int:
        return self._receive.statistics().current_buffer_used

    async def send(self, message: M) -> None:
        """Deliver a message, waiting while the mailbox is full."""
        await self._put(Envelope(message))

    def send_nowait(self, message: M) -> bool:
        """Deliver a message if there is room; False if the mailbox is full."""
        try:
            self._send.send_nowait(Envelope(message))
        except anyio.WouldBlock:
            return False
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise MailboxClosed(f"{self.name} is closed") from None
        return True

    async def request(self, message: M) -> object:
        """Send a message and wait for its reply (an error reply is raised here)."""
        reply: Reply[object] = Reply()
        await self._put(Envelope(message, reply))
        return await reply.wait()

    async def _put(self, envelope: Envelope[M]) -> None:
        try:
            await self._send.send(envelope)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise MailboxClosed(f"{self.name} is closed") from None

    async def receive(self) -> Envelope[M]:
        return await self._receive.receive()

    def receive_nowait(self) -> Envelope[M] | None:
        try:
            return self._receive.receive_nowait()
        except anyio.WouldBlock:
            return None

    def close(self, error: BaseException | None = None) -> None:
        """Stop accepting messages and fail the replies of those still queued."""
        if self.closed:
            return
        self.closed = True
        self._send.close()
        while True:
            try:
                envelope = self._receive.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream):
                break
            if envelope.reply is not None:
                envelope.reply.fail(error or ActorStopped(f"{self.name} stopped before it answered"))
        self._receive.close()
