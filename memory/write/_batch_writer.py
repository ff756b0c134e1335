"""The batch writer: drives the write core (`write_batch`, then `mark_nodes`) one batch at a time, and
records each outcome.

Both drivers use it: the runtime's writer actor (one batch at a time, for every session) and `dagmem
write` (`write_session`, over a home). It is synchronous and owns what a batch's fate depends on beyond
the write itself, so the two cannot drift: reading the batch's nodes fresh from the store, step 3
(marking, in chunks so a host's appends interleave under the store's session lock), classifying any
failure into a closed reason code, the no-progress guard, and `status.json`. A failure is returned,
never raised; an injected crash (a simulated process death) is the only thing that propagates.

Recording the status can fail too (a full disk, a `status.json` someone replaced with a directory). That
must never stop the writer or cost a turn: the outcome is kept in memory (what `Runtime.status()` shows),
the problem is logged once and kept in `status_problem`, and the next good write clears it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from .. import faults
from ..currency import SessionShape, parse_spawned_from
from ..durable import WriterStatus, save_status
from ..outcomes import ReasonCode, WriteFailure, classify
from ..policy import Batch, DagView, is_record_node
from ..shapes import ShapeCache
from ..store import SessionStore
from ..workspace import Workspace
from ._core import WriteOutcome, mark_nodes, records_of, write_batch
from ._current import InstallCurrency, ShapeUpdate
from ._distill import Distiller
from ._lineage import lineage
from ._slot_index import SlotIndex

__all__ = ["Applied", "BatchWriter", "Installed"]

log = logging.getLogger("dagmem.write")

# Node files marked per store call: fsynced together, each shard directory once; a host's appends
# interleave between chunks.
MARK_CHUNK = 128
# Seconds (the workspace's clock) within which a pass's success that follows a success is not saved on its
# own: only `last_success_at` would move, and saving it is two fsyncs a batch. The next save (any other
# outcome, or a success after this long) or `close` writes it. Only for a pass, which closes its writer
# when it ends; a runtime's writer may then sit idle for hours, so it saves every outcome.
STATUS_EVERY = 1.0


@dataclass(frozen=True)
class Installed:
    """A batch whose records are installed (or were found consumed), not marked yet."""

    batch: Batch
    outcome: WriteOutcome


@dataclass(frozen=True)
class Applied:
    """What applying one batch did: `outcome` when its records (all, or a leading run found consumed
    already) are installed and marked; otherwise `failure`, and the batch is still owed."""

    batch: Batch
    outcome: WriteOutcome | None = None
    failure: WriteFailure | None = None

    @property
    def node_ids(self) -> tuple[str, ...]:
        return () if self.outcome is None else self.outcome.node_ids


def _left_a_branch(dag: DagView, old: str | None, new: str | None) -> bool:
    """Whether moving the head from `old` to `new` may have left a branch: unless the new head continues
    the old one's path through no fork (an append that goes on leaves nothing). O(the nodes between)."""
    if old == new:
        return False
    if old is None or new is None or old not in dag or new not in dag or not dag.is_ancestor(old, new):
        return True
    node = dag.predecessor(new)
    while node is not None:
        if dag.child_count(node) > 1:
            return True  # a fork on the way: its other children are alternatives the head left
        if node == old:
            return False
        node = dag.predecessor(node)
    return False


class BatchWriter:
    """Applies batches to one workspace. Not thread-safe: one caller at a time (the writer actor, or the
    write pass), which is what serialises a workspace's transactions within a process."""

    def __init__(
        self, workspace: Workspace, store: SessionStore, distiller: Distiller, *, one_pass: bool = False
    ) -> None:
        """`one_pass`: the writer of one pass (`dagmem write`), closed when the pass ends: successes in a row
        are saved at most once per `STATUS_EVERY` seconds, and the last on close."""
        self.workspace = workspace
        self._status_every = STATUS_EVERY if one_pass else 0.0
        self.store = store
        self.distiller = distiller
        self.shapes = ShapeCache(workspace.root, store, writable=True)
        self.slots = SlotIndex(workspace.root)  # kept open across batches (each catches up first)
        self.status: WriterStatus = workspace.status()
        self.status_problem: str | None = None  # why status.json could not be written, until it can
        self._saved_at: float | None = None  # when `status` was last saved (the workspace's clock)
        self._unsaved = False  # `status` holds a later success than status.json
        self._last: dict[str, tuple[str, ...]] = {}  # session -> the records its last batch wrote

    def apply(self, batch: Batch) -> Applied:
        """The whole batch: `install`, then `mark` (the write pass; the writer actor calls the two itself,
        so that one batch's marks run while the next batch is installed)."""
        step = self.install(batch)
        if isinstance(step, Applied):
            self.record(step)
            return step
        return self.mark(step)

    def install(self, batch: Batch) -> Installed | Applied:
        """Steps 1-2: archive, distil and install (or find the records consumed). A failure comes back as
        an `Applied` that is not recorded yet (`record`: the caller keeps the order of outcomes)."""
        session_id = batch.session_id
        if self._last.pop(session_id, None) == batch.node_ids:
            # The same records owed again right after they were written and marked: the marks did not
            # take (or the view is wrong). Writing again would spin; stop and say so.
            failure = WriteFailure(
                ReasonCode.WRITER_NO_PROGRESS, "the batch is still owed after it was written"
            )
            return Applied(batch, failure=failure)
        try:
            read = self.store.read_nodes(session_id, batch.node_ids)
            # A view planned before a forget may still name a forgotten node: its tombstone is no record
            # (never written, never marked), and the view counts it done.
            nodes = [node for node in read if is_record_node(node)]
            if not nodes:
                return Installed(batch, WriteOutcome(batch.node_ids, None))
            outcome = write_batch(
                self.workspace,
                session_id,
                records_of(session_id, nodes),
                self.distiller,
                lineage=functools.partial(lineage, self.store, session_id, nodes, batch.dag),
                currency=self._currency(batch),
                slots=self.slots,
            )
            if len(nodes) < len(read) and len(outcome.node_ids) == len(nodes):
                outcome = WriteOutcome(batch.node_ids, outcome.tx, outcome.files)
        except Exception as exc:  # InjectedCrash is a BaseException: a simulated death propagates
            return self._failed(batch, exc)
        return Installed(batch, outcome)

    def close(self) -> None:
        """Save a success not saved yet; close the shape cache and the slot index (the workspace is its
        opener's to close)."""
        if self._unsaved:
            self._save()
        self.shapes.close()
        self.slots.close()

    def let_go(self) -> None:
        """Close the slot index before a job runs on the workspace between two batches (`RunOnWorkspace`):
        a forget deletes its file, to be rebuilt from the topic files, and an index kept open would hold the
        deleted file (the forgotten words its rows name) until the next batch. The next batch opens the file
        as the job left it."""
        self.slots.close()

    def __enter__(self) -> BatchWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _currency(self, batch: Batch) -> InstallCurrency:
        """The currency of this batch's install, as values: its own session's shape from the DAG its actor
        holds (as it was when the batch was planned), every other from the cache; and the cache's update
        after it, which the core makes under the lock."""
        session_id, dag, cache = batch.session_id, batch.dag, self.shapes
        if not isinstance(dag, DagView) or not batch.known:
            return InstallCurrency(session_id, cache)  # no view: the files, read fresh
        spawned_from = self.store.meta(session_id).spawned_from
        own = SessionShape.from_dag(dag, batch.head, parse_spawned_from(spawned_from), known=batch.known)
        held, head = cache.cached_head(session_id)
        moved = not held or _left_a_branch(dag, head, batch.head)
        update = ShapeUpdate(dag, batch.head, batch.known, spawned_from)
        return InstallCurrency(session_id, cache, own, head_moved=moved, update=update)

    def mark(self, installed: Installed) -> Applied:
        """Step 3 for an installed batch, and its outcome recorded."""
        batch, outcome = installed.batch, installed.outcome
        try:
            self._mark(batch.session_id, outcome.node_ids)
        except Exception as exc:
            applied = self._failed(batch, exc)
            self.record(applied)
            return applied
        self._last[batch.session_id] = outcome.node_ids
        self._record(None)
        return Applied(batch, outcome=outcome)

    def record(self, applied: Applied) -> None:
        """Record a failed batch's outcome (`install` leaves that to its caller)."""
        if applied.failure is not None:
            self._record(applied.failure)

    def _failed(self, batch: Batch, exc: Exception) -> Applied:
        failure = classify(exc)
        log.warning(
            "session %s: batch of %d records failed: %s", batch.session_id, len(batch.node_ids), failure
        )
        return Applied(batch, failure=failure)

    def _mark(self, session_id: str, node_ids: Sequence[str]) -> None:
        """Step 3, only after the install committed (or found the records consumed)."""
        workspace_id = self.workspace.workspace_id
        for start in range(0, len(node_ids), MARK_CHUNK):
            faults.hit("write:mark")
            mark_nodes(self.store, session_id, node_ids[start : start + MARK_CHUNK], workspace_id)

    def record_invalid(self) -> None:
        """A session refused as invalid input counts as a permanent failure of the writer."""
        self._record(WriteFailure(ReasonCode.INVALID_INPUT, retryable=False))

    def record_clean_pass(self) -> None:
        """A pass over every session found nothing failing: a failure recorded earlier is stale."""
        if self.status.last_failure is None and self.status.last_outcome != "failure":
            return
        self.status = self.status.cleared()
        self._save()

    def _record(self, failure: WriteFailure | None) -> None:
        at = self.workspace.clock()
        if failure is None:
            again = self.status.last_outcome == "success" and self.status_problem is None
            self.status = self.status.succeeded(at)
            if again and self._saved_at is not None and 0 <= at - self._saved_at < self._status_every:
                self._unsaved = True  # only the time of the last success moved
                return
        else:
            self.status = self.status.failed(at, failure.code, failure.retryable)
        self._save()

    def _save(self) -> None:
        self._saved_at, self._unsaved = self.workspace.clock(), False
        try:
            save_status(self.workspace.status_path, self.status, fsync=self.workspace.fsync)
        except Exception as exc:  # never stops the writer: the outcome is in memory and in the result
            problem = f"could not write {self.workspace.status_path}: {exc}"
            if problem != self.status_problem:
                log.error("%s (the writer carries on; the status is kept in memory)", problem)
            self.status_problem = problem
        else:
            self.status_problem = None
