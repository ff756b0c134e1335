"""One live session's memory policy (DESIGN §3, §5) as one pure machine: the session actor's brain.

The actor receives a message, does its I/O (appends a node, moves the head, hands a batch to the writer),
and passes what happened here as one event: a turn, a head move, a rewind, a refused call, a timer tick, a
flush, an end, a batch written / failed / lost with a crashed writer. The machine owns the planner (which
batch is due), decides the lifecycle (idle, end, waiters, retirement) and returns, in order, the actions
to perform: trace this, wait out that failure, send this batch, answer these callers, arm or cancel the
timer, publish a snapshot, retire. Every decision is here: which node is a record and how many tokens it
counts, when a branch is due, that a full disk is waited out and never parked, the backoff. It does no I/O
and reads no clock (times are event-loop seconds passed in), so tests drive it without an event loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..format import SPAWNED_KEY, Node, count_tokens
from ..outcomes import ReasonCode, WriteFailure
from ._planner import Batch, SessionPlanner
from ._records import is_marked, is_record_node

__all__ = [
    "Action",
    "ArmTimer",
    "BatchCrashed",
    "BatchFailed",
    "BatchWritten",
    "CancelTimer",
    "Carryover",
    "Emit",
    "EndAsked",
    "Event",
    "FlushAsked",
    "HeadMoved",
    "NodeAdded",
    "Publish",
    "Refused",
    "Reply",
    "Retire",
    "Rewound",
    "SendBatch",
    "SessionMachine",
    "SessionSnapshot",
    "TimerFired",
    "WaitOut",
]

W = TypeVar("W")  # a waiting caller; opaque here (the actor's reply handle)

# Failures whose cause is outside and passes (space comes back): retried at the capped backoff for as long
# as it takes, never parked.
WAITED_OUT = frozenset({ReasonCode.DISK_FULL})


# -- events: what happened (the actor has done the I/O) ----------------------------------------------------


@dataclass(frozen=True)
class NodeAdded:
    """A node is on disk (appended, or written by the host); `head` is the store's head after it.
    `arrived`: when the message arrived (activity counts from then, before its I/O)."""

    node: Node
    head: str | None
    arrived: float


@dataclass(frozen=True)
class HeadMoved:
    """The head is now `head` (set by a caller or by the host)."""

    head: str | None
    arrived: float


@dataclass(frozen=True)
class Rewound:
    """The head branch was rewound: `node_ids` are no longer records; `head` is the head after it."""

    node_ids: tuple[str, ...]
    head: str | None
    arrived: float


@dataclass(frozen=True)
class Refused:
    """A turn or head message whose I/O failed: nothing changed, but it is activity all the same."""

    arrived: float


@dataclass(frozen=True)
class TimerFired:
    """The timer fired: a deadline (idle, an abandoned branch, a retry) may have passed."""


@dataclass(frozen=True)
class FlushAsked(Generic[W]):
    """A flush was asked for: `waiter` (None: nobody) waits until nothing is due or in flight; `force`
    first starts a boundary."""

    waiter: W | None = None
    force: bool = False


@dataclass(frozen=True)
class EndAsked(Generic[W]):
    """The session's end was asked for: boundary-write it (head first), answer `waiter` when nothing is
    owed, retire."""

    waiter: W | None = None


@dataclass(frozen=True)
class BatchWritten:
    """The writer installed (or found consumed) and marked `node_ids` of `batch` in transaction `tx`.
    `generation`: the incarnation that sent it (an earlier one's answer is ignored: it is offered again)."""

    batch: Batch
    node_ids: tuple[str, ...]
    tx: object
    generation: int


@dataclass(frozen=True)
class BatchFailed:
    """The writer did not write `batch`: `failure` says why (its code, whether retryable, Retry-After)."""

    batch: Batch
    failure: WriteFailure
    generation: int


@dataclass(frozen=True)
class BatchCrashed:
    """The writer stopped before it answered for `batch`."""

    batch: Batch
    detail: str
    generation: int


Event = (
    NodeAdded
    | HeadMoved
    | Rewound
    | Refused
    | TimerFired
    | FlushAsked[W]
    | EndAsked[W]
    | BatchWritten
    | BatchFailed
    | BatchCrashed
)


# -- actions: what the actor does, in the order given ------------------------------------------------------


@dataclass(frozen=True)
class Emit:
    """A trace event."""

    kind: str
    fields: Mapping[str, Any]


@dataclass(frozen=True)
class WaitOut:
    """A retryable failure whose cause passes (a full disk): the batch is tried again in `seconds`, and
    again after that for as long as it takes, never parked."""

    code: ReasonCode
    seconds: float


@dataclass(frozen=True)
class SendBatch:
    """Hand this batch to the writer (it is in flight until its answer comes back as an event)."""

    batch: Batch


@dataclass(frozen=True)
class Reply(Generic[W]):
    """Answer this waiting caller: nothing is due or in flight."""

    waiter: W


@dataclass(frozen=True)
class ArmTimer:
    """The session's next deadline, in event-loop seconds."""

    at: float


@dataclass(frozen=True)
class CancelTimer:
    """The session has no deadline."""


@dataclass(frozen=True)
class SessionSnapshot:
    """What others may read of a session (`Runtime.status()`), published by its actor after an event."""

    pending_records: int = 0  # records its branches still owe, each counted once


@dataclass(frozen=True)
class Publish:
    """Replace the session's published snapshot with this one."""

    snapshot: SessionSnapshot


@dataclass(frozen=True)
class Retire:
    """The session ended and owes nothing: give back its memory."""


Action = Emit | WaitOut | SendBatch | Reply[W] | ArmTimer | CancelTimer | Publish | Retire


# -- the machine -------------------------------------------------------------------------------------------


@dataclass(eq=False)
class Carryover(Generic[W]):
    """What outlives an actor restart (the session's handle holds it). A boundary asked for by an end or
    a forced flush and not finished yet, so that a restarted actor carries on with it instead of
    answering the waiting callers at once while the session still owes records; whether the session was
    ended; and the callers waiting for nothing to be due."""

    boundary: bool = False
    ended: bool = False
    waiters: list[W] = field(default_factory=list)


@dataclass(eq=False)
class SessionMachine(Generic[W]):
    """One session's policy: its planner (which batch is due) and its lifecycle (idle, boundary, end,
    waiters, retirement). Made when its actor (re)starts, over a planner rebuilt from disk (None: the
    session is invalid and no memory is written for it); that is the restart event. Times are event-loop
    seconds."""

    session_id: str
    planner: SessionPlanner | None
    carry: Carryover[W]
    workspace_id: str
    idle_after: float
    now: float  # when the actor started: idle_after counts from here until the first activity
    generation: int = 0  # the actor's incarnation: answers to an earlier one are ignored
    retire_when_done: bool = False  # started only to flush a session that was not live
    last_activity: float = field(init=False)
    idle_armed: bool = field(init=False, default=False)  # idle_after without activity ends the session
    ending: bool = field(init=False)  # ended, gone idle, or started only to flush: retire once done
    _dirty: bool = field(init=False, default=True)  # the view changed since the last snapshot

    def __post_init__(self) -> None:
        self.last_activity = self.now
        self.ending = self.retire_when_done or self.carry.ended
        planner = self.planner
        if planner is None:
            return
        if len(planner.view):
            self.idle_armed = True  # a session revived from disk ends after idle_after too
            planner.check_all_tips()
        if self.carry.boundary:
            planner.on_boundary()  # the previous incarnation crashed in the middle of it

    def start(self, now: float) -> list[Action[W]]:
        """What to do once the actor is up, before its first message (it never retires here)."""
        return self._settle(now, queued=None)

    def receive(self, event: Event[W], now: float, *, queued: int) -> list[Action[W]]:
        """Take one event (one message handled at `now`, `queued` more waiting in the mailbox) and return
        what to do, in order."""
        actions = self._apply(event, now)
        actions.extend(self._settle(now, queued=queued))
        return actions

    # -- one event -------------------------------------------------------------------------------------

    def _apply(self, event: Event[W], now: float) -> list[Action[W]]:
        planner = self.planner
        out: list[Action[W]] = []
        if isinstance(event, TimerFired):
            if self._idle(now):
                out.append(self._emit("idle"))
        elif isinstance(event, EndAsked):
            self.ending = self.carry.ended = True
            self._flush(event.waiter, force=True)
        elif isinstance(event, FlushAsked):
            self._flush(event.waiter, force=event.force)
        elif isinstance(event, BatchWritten | BatchFailed | BatchCrashed):
            if event.generation == self.generation and planner is not None:
                self._batch_done(event, now, out)
        elif planner is not None:  # activity (counted before its I/O: a refused append is activity)
            self.last_activity = event.arrived
            self.idle_armed = True
            if isinstance(event, NodeAdded):
                if event.node.id not in planner.view:  # else already known (a retried append, or read
                    self._turn(event.node, out)  # from disk by a revived actor): nothing changes
                    self._head(event.head, now, out)
            elif isinstance(event, HeadMoved):
                self._head(event.head, now, out)
            elif isinstance(event, Rewound):
                planner.on_rewound(event.node_ids)
                self._dirty = True
                out.append(self._emit("rewind", nodes=list(event.node_ids)))
                self._head(event.head, now, out)
        return out

    def _idle(self, now: float) -> bool:
        """The timer fired: True when this began the idle boundary (`idle_after` without activity)."""
        if self.planner is None or not self.idle_armed or now < self.last_activity + self.idle_after:
            return False
        self.idle_armed = False
        self.ending = True
        self.planner.on_boundary()
        return True

    def _flush(self, waiter: W | None, *, force: bool) -> None:
        """`waiter` waits until nothing is due or in flight; `force` first starts a boundary write."""
        if force:
            self.carry.boundary = True
            if self.planner is not None:
                self.planner.on_boundary()
        if waiter is not None:
            self.carry.waiters.append(waiter)

    def _turn(self, node: Node, out: list[Action[W]]) -> None:
        """Which node is a record, its tokens, and whether this workspace marked it already."""
        assert self.planner is not None
        record = is_record_node(node)
        self.planner.on_turn(
            node.id,
            node.predecessor,
            count_tokens(node.content) if record else 0,
            marked=record and is_marked(node.metadata, self.workspace_id),
            role=str(node.role),
            spawned=node.metadata.get(SPAWNED_KEY) is True,
        )
        self._dirty = True
        out.append(self._emit("turn", node=node.id, predecessor=node.predecessor, record=record))

    def _head(self, head: str | None, now: float, out: list[Action[W]]) -> None:
        assert self.planner is not None
        if head != self.planner.head:
            self.planner.on_head(head, now)
            out.append(self._emit("head", head=head))

    def _batch_done(
        self, event: BatchWritten | BatchFailed | BatchCrashed, now: float, out: list[Action[W]]
    ) -> None:
        assert self.planner is not None
        batch = event.batch
        if isinstance(event, BatchWritten):
            self.planner.on_written(batch, event.node_ids)
            self._dirty = True
            out.append(self._emit("written", nodes=list(event.node_ids), tx=event.tx))
            return
        failure = (
            event.failure
            if isinstance(event, BatchFailed)
            else WriteFailure(ReasonCode.WRITER_CRASHED, event.detail)
        )
        wait_out = failure.code in WAITED_OUT
        self.planner.on_failed(
            batch,
            retryable=failure.retryable,
            now=now,
            wait_out=wait_out,
            retry_after=failure.retry_after,
        )
        out.append(self._emit("failed", nodes=list(batch.node_ids), code=str(failure.code)))
        retry_at = self.planner.retry_at
        if wait_out and failure.retryable and retry_at is not None:
            out.append(WaitOut(failure.code, retry_at - now))

    def _emit(self, kind: str, **fields: Any) -> Emit:
        return Emit(kind, {"session": self.session_id, **fields})

    # -- after every event -----------------------------------------------------------------------------

    def _settle(self, now: float, *, queued: int | None) -> list[Action[W]]:
        """Start the next due batch, answer the waiters, set the timer, publish, and maybe retire. After a
        message, `queued` is how many more wait in the mailbox (a session with messages waiting never
        retires); None when the actor has just started (it retires only after a message)."""
        planner = self.planner
        out: list[Action[W]] = []
        start = planner.next_batch(now) if planner is not None and planner.inflight is None else None
        if start is not None:
            out.append(SendBatch(start))
        if planner is None or not planner.busy():
            self.carry.boundary = False
            waiters, self.carry.waiters = self.carry.waiters, []
            out.extend(Reply(waiter) for waiter in waiters)
        deadlines: list[float] = []
        if planner is not None:
            if self.idle_armed:
                deadlines.append(self.last_activity + self.idle_after)
            if (deadline := planner.next_deadline()) is not None:
                deadlines.append(deadline)
        out.append(ArmTimer(min(deadlines)) if deadlines else CancelTimer())
        if self._dirty:  # a walk over what is owed: only when the view changed
            self._dirty = False
            out.append(Publish(self.snapshot()))
        if queued is not None and self._may_retire(queued):
            out.append(Retire())
        return out

    def _may_retire(self, queued: int) -> bool:
        """After an end or idle boundary, a session that owes nothing gives back its memory."""
        if not self.ending or self.carry.waiters or queued:
            return False
        planner = self.planner
        if planner is None:
            return True
        return planner.inflight is None and not planner.busy() and not planner.owes()

    def snapshot(self) -> SessionSnapshot:
        planner = self.planner
        return SessionSnapshot(planner.view.pending_records() if planner is not None else 0)
