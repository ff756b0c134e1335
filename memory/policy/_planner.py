"""When a session's records are written, and in which batches (DESIGN §3), as a pure state machine.

The session machine (and `dagmem write`) feed it events — a turn, a head move, a boundary, marks landed, a
failure — and ask it for the next batch and the next deadline. It does no I/O and reads no clock, so the
same decisions run under asyncio, trio, virtual time and the CLI.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..format import PredecessorMap
from ..settings import DEFAULTS, check_threshold
from ._dagview import DagView

__all__ = [
    "DEFAULT_THRESHOLD",
    "Batch",
    "SessionPlanner",
    "check_threshold",
    "exponential_backoff",
    "split_batches",
]

DEFAULT_THRESHOLD = DEFAULTS.token_threshold


@dataclass(frozen=True)
class Batch:
    """Records to write together, oldest first; `target` is the node whose branch they come from."""

    session_id: str
    node_ids: tuple[str, ...]
    tokens: int
    target: str
    forced: bool
    # The session's DAG as its actor holds it, for the one walk to the root (`ancestors`) a distiller may
    # ask for: predecessors never change once added, so reading it from the writer's task is safe, and
    # the walk costs dictionary lookups instead of one node-file read per ancestor. None: read the store.
    dag: PredecessorMap | None = field(default=None, compare=False, repr=False)
    # The session's head when the batch was planned, and how many nodes `dag` held then: what the shape
    # cache of currency records at the install (the nodes a DagView added before are complete).
    head: str | None = field(default=None, compare=False, repr=False)
    known: int = field(default=0, compare=False, repr=False)


def split_batches(records: Sequence[tuple[str, int]], threshold: int) -> list[tuple[list[str], bool]]:
    """Split (id, tokens) records, oldest first, into batches: the shortest runs whose tokens reach the
    threshold; a record that alone exceeds it is a batch by itself (the run before it ends there).
    Returns (ids, complete) pairs; only the last batch can be incomplete."""
    out: list[tuple[list[str], bool]] = []
    run: list[str] = []
    total = 0
    for node_id, tokens in records:
        if tokens > threshold:
            if run:
                out.append((run, True))
                run, total = [], 0
            out.append(([node_id], True))
            continue
        run.append(node_id)
        total += tokens
        if total >= threshold:
            out.append((run, True))
            run, total = [], 0
    if run:
        out.append((run, False))
    return out


Backoff = Callable[[int], float]

MAX_BACKOFF = 60.0


def exponential_backoff(base: float, cap: float = MAX_BACKOFF) -> Backoff:
    """The retry delay of every driver: `base` after the first failure, doubling, at most `cap`."""

    def delay(attempt: int) -> float:
        return float(min(cap, base * 2 ** (attempt - 1)))

    return delay


_default_backoff = exponential_backoff(0.5)


class SessionPlanner:
    """Decides what one session writes next. Times are event-loop seconds passed in by the caller."""

    def __init__(
        self,
        view: DagView,
        head: str | None,
        *,
        threshold: int = DEFAULT_THRESHOLD,
        abandon_after: float = DEFAULTS.abandon_after,
        max_attempts: int = 5,
        backoff: Backoff = _default_backoff,
    ) -> None:
        check_threshold(threshold)
        self.view = view
        self.head = head
        self.threshold = threshold
        self.abandon_after = abandon_after
        self.max_attempts = max_attempts
        self._backoff = backoff
        self._due: dict[str, None] = {}  # tips whose unwritten tokens reached the threshold
        self._abandoned: dict[str, float] = {}  # old head -> when it is force-written
        self._boundary = False
        self.inflight: Batch | None = None
        self._attempts = 0
        self._retry_at: float | None = None
        self.parked = False  # a permanent failure (or retries exhausted): wait for the next boundary

    # -- events ----------------------------------------------------------------------------------------

    def on_turn(
        self,
        node_id: str,
        predecessor: str | None,
        tokens: int,
        *,
        marked: bool = False,
        role: str = "user",
        spawned: bool = False,
    ) -> None:
        """A node was appended (and, if the store moved the head, `on_head` follows)."""
        self.view.add(node_id, predecessor, tokens=tokens, marked=marked, role=role, spawned=spawned)
        if self.view.unwritten(node_id).tokens >= self.threshold:
            self._due[node_id] = None

    def on_head(self, new_head: str | None, now: float) -> None:
        """The head moved. The old head's branch is abandoned unless the new head continues it; a branch
        whose abandonment is pending is forgiven when the head returns to it."""
        old = self.head
        self.head = new_head
        if (
            old is not None
            and old != new_head
            and (new_head is None or not self.view.is_ancestor(old, new_head))
        ):
            self._abandoned.setdefault(old, now + self.abandon_after)
        if new_head is not None:
            for target in [t for t in self._abandoned if self.view.is_ancestor(t, new_head)]:
                del self._abandoned[target]

    def on_boundary(self) -> None:
        """Idle or ended: force-write the head branch, then every other tip, until nothing is owed."""
        self._boundary = True
        self.parked = False
        self._attempts = 0
        self._retry_at = None

    def check_all_tips(self) -> None:
        """Apply the per-turn rule to every tip (for a pass over a session loaded from disk)."""
        for tip in self.view.tips():
            if self.view.unwritten(tip).tokens >= self.threshold:
                self._due[tip] = None

    def on_written(self, batch: Batch, node_ids: Sequence[str] | None = None) -> None:
        """The batch (or the leading `node_ids` of it) was installed or found consumed, and marked."""
        self.view.mark(batch.node_ids if node_ids is None else node_ids)
        self.inflight = None
        self._attempts = 0
        self._retry_at = None

    def on_failed(
        self,
        batch: Batch,
        *,
        retryable: bool,
        now: float,
        wait_out: bool = False,
        retry_after: float | None = None,
    ) -> None:
        """The batch was not written: it stays owed. Retry with backoff, or park after a permanent failure.
        `wait_out`: the cause is outside and passes (a full disk): retry at the capped backoff for as long
        as it takes, never park. `retry_after`: the cause asked for at least this many seconds (a model
        server's `Retry-After`); the retry waits for the longer of it and the backoff."""
        self.inflight = None
        self._attempts += 1
        if retryable and (wait_out or self._attempts < self.max_attempts):
            delay = self._backoff(self._attempts)
            if retry_after is not None and retry_after > delay:
                delay = retry_after
            self._retry_at = now + delay
            return
        self.parked = True
        self._boundary = False
        self._retry_at = None
        self._attempts = 0

    def on_rewound(self, node_ids: Sequence[str]) -> None:
        for node_id in node_ids:
            self.view.set_tokens(node_id, 0)

    # -- decisions -------------------------------------------------------------------------------------

    def next_batch(self, now: float) -> Batch | None:
        """The next batch to write, or None (nothing due, one in flight, waiting to retry, or parked)."""
        if self.inflight is not None or (self._retry_at is not None and now < self._retry_at):
            return None
        batch = self._choose(now)
        if batch is not None:
            self.inflight = batch
        # Its time has come: the retry starts now, or what failed is no longer due (the head came back to
        # an abandoned branch, a tip grew): either way no retry is pending, and its past time is no deadline.
        self._retry_at = None
        return batch

    def _choose(self, now: float) -> Batch | None:
        if self._boundary:
            targets = ([self.head] if self.head is not None else []) + self.view.tips()
            for target in targets:
                batch = self._batch(target, forced=True)
                if batch is not None:
                    return batch
            self._boundary = False
            self._abandoned.clear()
            self._due.clear()
        if self.parked:
            return None
        for target, deadline in list(self._abandoned.items()):
            if deadline > now:
                continue
            batch = self._batch(target, forced=True)
            if batch is not None:
                return batch
            del self._abandoned[target]
        for tip in list(self._due):
            if (
                tip in self.view
                and self.view.is_tip(tip)
                and self.view.unwritten(tip).tokens >= self.threshold
            ):
                batch = self._batch(tip, forced=False)
                if batch is not None:
                    return batch
            del self._due[tip]
        return None

    def _batch(self, target: str, *, forced: bool) -> Batch | None:
        view = self.view
        ids = view.unwritten_records(target)
        if not ids:
            return None
        batches = split_batches([(i, view.tokens(i)) for i in ids], self.threshold)
        first, complete = batches[0]
        if not (complete or forced):
            return None
        tokens = sum(view.tokens(i) for i in first)
        return Batch(
            view.session_id, tuple(first), tokens, target, forced, dag=view, head=self.head, known=len(view)
        )

    def next_deadline(self) -> float | None:
        """The earliest time something becomes due without a new event (an abandoned branch, a retry).

        Only a time at which `next_batch` may start something: nothing starts while a batch is in flight
        (its answer is the next event) or while parked, and nothing before a pending retry. An abandoned
        branch whose time has passed while a retry waits is not a deadline of its own: a timer set to it
        would fire at once, again and again, and in virtual time the clock would never move."""
        if self.inflight is not None or self.parked:
            return None
        if self._retry_at is not None:
            return self._retry_at
        return min(self._abandoned.values(), default=None)

    @property
    def retry_at(self) -> float | None:
        """When the failed batch is tried again (None: no retry is pending)."""
        return self._retry_at

    def owes(self) -> bool:
        return any(self.view.unwritten(tip).records for tip in self.view.tips()) or (
            self.head is not None and self.view.unwritten(self.head).records > 0
        )

    def busy(self) -> bool:
        """True while something is due or in flight (what `flush()` waits for)."""
        if self.inflight is not None:
            return True
        if self.parked:
            return False
        return self._boundary or bool(self._due) or self._retry_at is not None
