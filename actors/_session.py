"""The session actor: one per live session (DESIGN §5).

It holds the session's DAG view and planner (ids, edges, token counts, marks; never the text), applies
turns and head moves, and sends due batches to the writer one at a time through a delivery task, so a
slow writer never blocks a turn. What is due, when the session is idle or ended, whom to answer and when
to retire are decided by the pure `SessionLifecycle` (memory.policy); this actor does the I/O and performs
the actions it returns. The writer applies a batch whole (archive → install → mark) and the view learns of
the marks from its answer. A crash loses nothing: the restarted actor rebuilds from disk, and a
batch that was in flight is simply offered again (the writer then only marks it).
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
from ..memory.format import Node, count_tokens
from ..memory.outcomes import ReasonCode, WriteFailure, classify
from ..memory.policy import (
    Batch,
    Carryover,
    DagView,
    SessionLifecycle,
    SessionPlanner,
    exponential_backoff,
    is_marked,
    is_record_node,
)
from ..memory.write import Applied
from ..supervision import Supervisor
from ._context import Context
from ._mailbox import ActorStopped, Envelope, Mailbox, MailboxClosed, Reply
from ._messages import (
    Append,
    BatchDone,
    EndSession,
    Flush,
    HeadMoved,
    Rewind,
    SessionMessage,
    SetHead,
    Tick,
    TurnAdded,
    WriteRequest,
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
    stopped: anyio.Event = field(default_factory=anyio.Event)  # its supervisor's run has ended

    def close(self, error: BaseException | None = None) -> None:
        """For good: refuse new messages and fail every call still waiting on this session."""
        self.mailbox.close(error)
        waiters, self.carry.waiters = self.carry.waiters, []
        for waiter in waiters:
            waiter.fail(error or ActorStopped(f"session {self.session_id!r} stopped before it answered"))


class SessionActor:
    """A thin shell: it does the I/O and performs what its `SessionLifecycle` decides."""

    life: SessionLifecycle[Reply[object]]  # made once the view is rebuilt

    def __init__(self, handle: SessionHandle, ctx: Context) -> None:
        self.handle = handle
        self.ctx = ctx
        self.sid = handle.session_id
        self.planner: SessionPlanner | None = None
        self.invalid: SessionInvalid | None = None
        self._started_at = anyio.current_time()  # idle_after counts from here until the first activity
        self._tg: anyio.abc.TaskGroup | None = None

    # -- life ------------------------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        handle = self.handle
        handle.generation += 1
        handle.actor = self
        await self._rebuild()
        self.life = SessionLifecycle(
            self.planner,
            handle.carry,
            idle_after=self.ctx.config.idle_after,
            now=self._started_at,
            retire_when_done=handle.retire_after_flush,
        )
        async with anyio.create_task_group() as tg:
            self._tg = tg
            task_status.started()
            self._pump()
            while True:
                try:
                    envelope = await handle.mailbox.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    break
                if await self._handle(envelope):
                    self._retire()
                    break
            tg.cancel_scope.cancel()

    async def _rebuild(self) -> None:
        """The view from disk: O(session), once per start (a crash restart or a revival)."""
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
                return
            view = DagView.from_nodes(self.sid, snapshot.nodes.values(), ctx.workspace_id, count_tokens)
            head = snapshot.meta.head
        config = ctx.config
        self.planner = SessionPlanner(
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
        try:
            await self._dispatch(message, reply)
        except InvalidInput as exc:  # the caller's mistake: answer it, stay up
            if reply is not None:
                reply.fail(exc)
        except (OSError, sqlite3.Error) as exc:  # the store could not write (a full disk): nothing was
            if reply is not None:  # written; the caller gets a classified, retryable-or-not failure
                reply.fail(classify(exc))
        except BaseException as exc:
            if reply is not None:
                reply.fail(SessionCrashed(f"session {self.sid!r} crashed: {exc!r}"))
            raise
        return self._pump(queued=len(self.handle.mailbox))

    async def _dispatch(self, message: SessionMessage, reply: Reply[object] | None) -> None:
        ctx, now, life = self.ctx, anyio.current_time(), self.life
        if isinstance(message, BatchDone):
            await self._batch_done(message)
            return
        if isinstance(message, Tick):
            if life.tick(now):
                ctx.emit("idle", session=self.sid)
            return
        if isinstance(message, EndSession):
            life.end(reply)
            return
        if isinstance(message, Flush):
            life.flush(reply, force=message.force)
            return
        if self.invalid is not None:
            raise self.invalid
        planner = self.planner
        assert planner is not None
        store = ctx.store
        life.activity(now)
        if isinstance(message, Append):
            faults.hit("session:append")
            node = await ctx.io(
                store.append,
                self.sid,
                message.role,
                message.content,
                predecessor=message.predecessor,
                node_id=message.node_id,
                metadata=message.metadata,
                spawned=message.spawned,
                spawned_from=message.spawned_from,
            )
            if node.id not in planner.view:  # else a retried append, already on disk: the store did nothing
                self._added(node)
            if reply is not None:
                reply.set(node)
        elif isinstance(message, SetHead):
            await ctx.io(store.set_head, self.sid, message.node_id)
            self._head_moved(message.node_id)
            if reply is not None:
                reply.set(None)
        elif isinstance(message, Rewind):
            rewound = await ctx.io(store.rewind, self.sid, message.node_id)
            planner.on_rewound(rewound)
            ctx.emit("rewind", session=self.sid, nodes=rewound)
            self._head_moved(store.head(self.sid))
            if reply is not None:
                reply.set(rewound)
        elif isinstance(message, TurnAdded):
            await ctx.io(store.adopt_node, self.sid, message.node)
            if message.node.id not in planner.view:  # a revived actor may have read it from disk already
                self._added(message.node)
            if reply is not None:
                reply.set(message.node)
        elif isinstance(message, HeadMoved):
            await ctx.io(store.reload_meta, self.sid)
            self._head_moved(message.node_id)
            if reply is not None:
                reply.set(None)

    def _added(self, node: Node) -> None:
        planner = self.planner
        assert planner is not None
        record = is_record_node(node)
        planner.on_turn(
            node.id,
            node.predecessor,
            count_tokens(node.content) if record else 0,
            marked=record and is_marked(node.metadata, self.ctx.workspace_id),
        )
        self.ctx.emit("turn", session=self.sid, node=node.id, predecessor=node.predecessor, record=record)
        self._head_moved(self.ctx.store.head(self.sid))

    def _head_moved(self, head: str | None) -> None:
        planner = self.planner
        assert planner is not None
        if head != planner.head:
            planner.on_head(head, anyio.current_time())
            self.ctx.emit("head", session=self.sid, head=head)

    async def _batch_done(self, message: BatchDone) -> None:
        planner = self.planner
        if message.generation != self.handle.generation or planner is None:
            return  # an answer to an earlier incarnation: its batch is offered again anyway
        batch = message.batch
        if message.outcome is not None:  # installed (or found consumed) and marked by the delivery task
            self.life.written(batch, message.outcome.node_ids)
            self.ctx.emit(
                "written", session=self.sid, nodes=list(message.outcome.node_ids), tx=message.outcome.tx
            )
        else:
            failure = message.failure or WriteFailure(ReasonCode.WRITER_FAILURE_UNKNOWN)
            # A full disk is waited out (retried at the capped backoff), never parked: space comes back.
            wait_out = failure.code is ReasonCode.DISK_FULL
            self.life.failed(
                batch,
                retryable=failure.retryable,
                now=anyio.current_time(),
                wait_out=wait_out,
                retry_after=failure.retry_after,
            )
            self.ctx.emit("failed", session=self.sid, nodes=list(batch.node_ids), code=str(failure.code))

    # -- after every message ---------------------------------------------------------------------------

    def _pump(self, *, queued: int | None = None) -> bool:
        """Do what the lifecycle decides: start the next due batch, answer waiters, set the timer.
        Returns whether to retire (only after a message: `queued` is what else waits in the mailbox)."""
        actions = self.life.pump(anyio.current_time(), queued=queued)
        if actions.start is not None:
            assert self._tg is not None
            self._tg.start_soon(self._deliver, actions.start, self.handle.generation)
        for waiter in actions.answer:
            waiter.set(None)
        self.handle.timer.set(actions.timer)
        return actions.retire

    async def _deliver(self, batch: Batch, generation: int) -> None:
        """Hand one batch to the writer (which writes and marks it) and bring its answer back through
        the mailbox: the view learns of the marks only once they are all on disk."""
        self.ctx.emit("batch", session=self.sid, nodes=list(batch.node_ids), forced=batch.forced)
        try:
            answer = await self.ctx.writer.request(WriteRequest(batch))
        except (ActorStopped, MailboxClosed) as exc:
            answer = Applied(batch, failure=WriteFailure(ReasonCode.WRITER_CRASHED, str(exc)))
        assert isinstance(answer, Applied)
        done = BatchDone(batch, outcome=answer.outcome, failure=answer.failure, generation=generation)
        with contextlib.suppress(MailboxClosed):
            await self.handle.mailbox.send(done)

    def _retire(self) -> None:
        self.handle.retired = True
        self.ctx.emit("retire", session=self.sid)
        if self.handle.on_retire is not None:
            self.handle.on_retire(self.handle)
