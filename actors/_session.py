"""The session actor: one per live session (DESIGN §5).

A thin shell around the pure `SessionMachine` (memory.policy), which owns the session's DAG view, planner
and lifecycle and makes every decision. The actor receives a message, does its I/O (the store appends a
node, moves the head; a delivery task hands a batch to the writer, so a slow writer never blocks a turn),
feeds what happened to the machine as one event, and performs the actions it returns: trace, send a batch,
answer callers, set the timer, publish the session's snapshot, retire. The writer applies a batch whole
(archive → install → mark) and the view learns of the marks from its answer. A crash loses nothing: the
restarted actor rebuilds from disk, and a batch that was in flight is simply offered again (the writer
then only marks it).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio

from ..memory import faults
from ..memory.errors import DagmemError, InvalidInput, SessionInvalid
from ..memory.format import count_tokens
from ..memory.outcomes import ReasonCode, WriteFailure, classify
from ..memory.policy import (
    Batch,
    Carryover,
    DagView,
    SessionMachine,
    SessionPlanner,
    SessionSnapshot,
    exponential_backoff,
)
from ..memory.policy import machine as m
from ..memory.write import Applied
from ..supervision import Supervisor
from ._context import Context
from ._mailbox import ActorStopped, Envelope, Mailbox, MailboxClosed, Reply
from ._messages import (
    AdoptTurn,
    Append,
    BatchDone,
    EndSession,
    Flush,
    ReloadHead,
    Rewind,
    SessionMessage,
    SetHead,
    Wake,
    WriteBatch,
)
from ._timer import Timer

__all__ = ["SessionActor", "SessionCrashed", "SessionHandle"]

log = logging.getLogger("dagmem.session")


class SessionCrashed(DagmemError):
    """The session actor crashed while handling this call; it has been restarted from disk."""


@dataclass(eq=False)
class SessionHandle:
    """A session's address: its mailbox and timer outlive actor restarts."""

    session_id: str
    mailbox: Mailbox[SessionMessage]
    timer: Timer
    child_id: str
    supervisor: Supervisor | None = None
    actor: SessionActor | None = None
    generation: int = 0
    retire_after_flush: bool = False
    retired: bool = False
    # The lifecycle's part that outlives an actor restart: a boundary in progress, an end, the waiters.
    carry: Carryover[Reply[object]] = field(default_factory=Carryover)
    on_retire: Callable[[SessionHandle], None] | None = None
    # What others may read of the session, published by its actor after each event it handles: one
    # immutable value replaced by the actor's own task, so `Runtime.status()` reads it synchronously and
    # never walks a planner another task is changing.
    snapshot: SessionSnapshot = field(default_factory=SessionSnapshot)
    stopped: anyio.Event = field(default_factory=anyio.Event)  # its supervisor's run has ended

    def close(self, error: BaseException | None = None) -> None:
        """For good: refuse new messages and fail every call still waiting on this session."""
        self.mailbox.close(error)
        waiters, self.carry.waiters = self.carry.waiters, []
        for waiter in waiters:
            waiter.fail(error or ActorStopped(f"session {self.session_id!r} stopped before it answered"))


class SessionActor:
    """A thin shell: it does the I/O, feeds its `SessionMachine`, and performs the actions it returns."""

    machine: SessionMachine[Reply[object]]  # made once the view is rebuilt

    def __init__(self, handle: SessionHandle, ctx: Context) -> None:
        self.handle = handle
        self.ctx = ctx
        self.sid = handle.session_id
        self.invalid: SessionInvalid | None = None
        self._started_at = anyio.current_time()  # idle_after counts from here until the first activity
        self._tg: anyio.abc.TaskGroup | None = None

    @property
    def planner(self) -> SessionPlanner | None:
        """The machine's planner (None before the view is rebuilt, or for an invalid session)."""
        machine = getattr(self, "machine", None)
        return machine.planner if machine is not None else None

    # -- life ------------------------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        handle = self.handle
        handle.generation += 1
        handle.actor = self
        planner = await self._rebuild()
        self.machine = SessionMachine(
            self.sid,
            planner,
            handle.carry,
            workspace_id=self.ctx.workspace_id,
            idle_after=self.ctx.config.idle_after,
            now=self._started_at,
            generation=handle.generation,
            retire_when_done=handle.retire_after_flush,
        )
        async with anyio.create_task_group() as tg:
            self._tg = tg
            task_status.started()
            self._perform(self.machine.start(anyio.current_time()))
            while True:
                try:
                    envelope = await handle.mailbox.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    break
                if await self._handle(envelope):
                    self._retire()
                    break
            tg.cancel_scope.cancel()

    async def _rebuild(self) -> SessionPlanner | None:
        """The view from disk: O(session), once per start (a crash restart or a revival). None: the
        session is invalid (no memory is written for it)."""
        ctx = self.ctx
        if not ctx.store.has_session(self.sid):
            view, head = DagView(self.sid), None
        else:
            snapshot = await ctx.io(ctx.store.load, self.sid)
            if not snapshot.valid:
                first = snapshot.problems[0]
                self.invalid = SessionInvalid(self.sid, first.path, first.reason)
                log.error("%s: no memory will be written for it", self.invalid)
                ctx.emit("session-invalid", session=self.sid, reason=first.reason)
                return None
            view = DagView.from_nodes(self.sid, snapshot.nodes.values(), ctx.workspace_id, count_tokens)
            head = snapshot.meta.head
        config = ctx.config
        return SessionPlanner(
            view,
            head,
            threshold=config.token_threshold,
            abandon_after=config.abandon_after,
            max_attempts=config.max_attempts,
            backoff=exponential_backoff(config.retry_base),
        )

    # -- messages --------------------------------------------------------------------------------------

    async def _handle(self, envelope: Envelope[SessionMessage]) -> bool:
        """Handle one message; True when the session should retire now."""
        message, reply = envelope.message, envelope.reply
        arrived = anyio.current_time()
        try:
            event = await self._event(message, reply, arrived)
        except InvalidInput as exc:  # the caller's mistake: answer it, stay up
            event = m.Refused(arrived)
            if reply is not None:
                reply.fail(exc)
        except (OSError, sqlite3.Error) as exc:  # the store could not write (a full disk): nothing was
            event = m.Refused(arrived)  # written; the caller gets a classified, retryable-or-not failure
            if reply is not None:
                reply.fail(classify(exc))
        except BaseException as exc:
            if reply is not None:
                reply.fail(SessionCrashed(f"session {self.sid!r} crashed: {exc!r}"))
            raise
        actions = self.machine.receive(event, anyio.current_time(), queued=len(self.handle.mailbox))
        return self._perform(actions)

    async def _event(
        self, message: SessionMessage, reply: Reply[object] | None, arrived: float
    ) -> m.Event[Reply[object]]:
        """Do the message's I/O and answer its caller; return what happened, for the machine."""
        if isinstance(message, BatchDone):
            return self._batch_done(message)
        if isinstance(message, Wake):
            return m.TimerFired()
        if isinstance(message, EndSession):
            return m.EndAsked(reply)
        if isinstance(message, Flush):
            return m.FlushAsked(reply, force=message.force)
        if self.invalid is not None:
            raise self.invalid
        ctx, store = self.ctx, self.ctx.store
        event: m.Event[Reply[object]]
        result: object = None
        if isinstance(message, Append):
            faults.hit("session:append")
            node = await ctx.io(store.append_turn, self.sid, message.turn)
            event, result = m.NodeAdded(node, store.head(self.sid), arrived), node
        elif isinstance(message, SetHead):
            await ctx.io(store.set_head, self.sid, message.node_id)
            event = m.HeadMoved(message.node_id, arrived)
        elif isinstance(message, Rewind):
            rewound = await ctx.io(store.rewind, self.sid, message.node_id)
            event, result = m.Rewound(tuple(rewound), store.head(self.sid), arrived), rewound
        elif isinstance(message, AdoptTurn):
            await ctx.io(store.adopt_node, self.sid, message.node)
            event, result = m.NodeAdded(message.node, store.head(self.sid), arrived), message.node
        else:
            assert isinstance(message, ReloadHead)
            await ctx.io(store.reload_meta, self.sid)
            event = m.HeadMoved(message.node_id, arrived)
        if reply is not None:
            reply.set(result)
        return event

    def _batch_done(self, message: BatchDone) -> m.Event[Reply[object]]:
        batch, generation = message.batch, message.generation
        if message.outcome is not None:  # installed (or found consumed) and marked by the delivery task
            outcome = message.outcome
            return m.BatchWritten(batch, tuple(outcome.node_ids), outcome.tx, generation)
        if message.crashed is not None:
            return m.BatchCrashed(batch, message.crashed, generation)
        failure = message.failure or WriteFailure(ReasonCode.WRITER_FAILURE_UNKNOWN)
        return m.BatchFailed(batch, failure, generation)

    # -- actions ---------------------------------------------------------------------------------------

    def _perform(self, actions: list[m.Action[Reply[object]]]) -> bool:
        """Do what the machine decided, in order. Returns whether to retire."""
        retire = False
        for action in actions:
            if isinstance(action, m.Emit):
                if action.kind == "written":
                    self.ctx.waited_out(self.sid)
                self.ctx.emit(action.kind, **action.fields)
            elif isinstance(action, m.SendBatch):
                assert self._tg is not None
                self._tg.start_soon(self._deliver, action.batch, self.handle.generation)
            elif isinstance(action, m.Reply):
                action.waiter.set(None)
            elif isinstance(action, m.ArmTimer):
                self.handle.timer.set(action.at)
            elif isinstance(action, m.CancelTimer):
                self.handle.timer.set(None)
            elif isinstance(action, m.Publish):
                self.handle.snapshot = action.snapshot
            elif isinstance(action, m.WaitOut):
                log.info(
                    "session %r: %s, waiting it out (next try in %.1f s)",
                    self.sid,
                    action.code,
                    action.seconds,
                )
                self.ctx.wait_out(self.sid, action.code, action.seconds)
            else:
                assert isinstance(action, m.Retire)
                self.ctx.waited_out(self.sid)
                retire = True
        return retire

    async def _deliver(self, batch: Batch, generation: int) -> None:
        """Hand one batch to the writer (which writes and marks it) and bring its answer back through
        the mailbox: the view learns of the marks only once they are all on disk."""
        self.ctx.emit("batch", session=self.sid, nodes=list(batch.node_ids), forced=batch.forced)
        try:
            answer = await self.ctx.writer.request(WriteBatch(batch))
        except (ActorStopped, MailboxClosed) as exc:
            done = BatchDone(batch, crashed=str(exc), generation=generation)
        else:
            assert isinstance(answer, Applied)
            done = BatchDone(batch, outcome=answer.outcome, failure=answer.failure, generation=generation)
        with contextlib.suppress(MailboxClosed):
            await self.handle.mailbox.send(done)

    def _retire(self) -> None:
        self.handle.retired = True
        self.ctx.emit("retire", session=self.sid)
        if self.handle.on_retire is not None:
            self.handle.on_retire(self.handle)
