"""`dagmem write`: the write pass of DESIGN §3 over a home, for hosts that keep sessions in dagmem's
on-disk format and do not embed the runtime.

Every tip gets the per-turn rule (complete batches only); sessions idle for `idle_after` (or all, with
`force`) get the boundary rule (head branch first, then every tip, until nothing is owed). A malformed
session is refused with `INVALID_INPUT` naming the file, and every other session proceeds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import SessionInvalid, UnknownSession
from ..format import HomePaths, check_id, count_tokens
from ..outcomes import ReasonCode, WriteFailure
from ..policy import DEFAULT_THRESHOLD, DagView, SessionPlanner, check_threshold, exponential_backoff
from ..settings import DEFAULTS, check_seconds
from ..store import FileSessionStore, SessionStore
from ..workspace import Workspace
from ._batch_writer import BatchWriter
from ._distill import Distiller, ExtractiveDistiller

__all__ = [
    "SessionResult",
    "pending_by_session",
    "write_pass",
    "write_session",
]

log = logging.getLogger("dagmem.writepass")

DEFAULT_IDLE_AFTER = DEFAULTS.idle_after
MAX_RETRY_WAIT = 30.0  # the longest `Retry-After` a pass sleeps through; beyond it, exit 75 and come back


@dataclass
class SessionResult:
    session: str
    outcome: Literal["written", "nothing-due", "failed", "invalid"]
    batches: int = 0
    records: int = 0
    pending: int = 0  # records still owed afterwards (not yet due, or left by a failure)
    reason_code: ReasonCode | None = None
    retryable: bool | None = None
    detail: str | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "session": self.session,
            "outcome": self.outcome,
            "batches": self.batches,
            "records": self.records,
            "pending": self.pending,
            "reason_code": None if self.reason_code is None else str(self.reason_code),
            "retryable": self.retryable,
            "detail": self.detail,
        }


def write_session(
    store: SessionStore,
    workspace: Workspace,
    session_id: str,
    *,
    boundary: bool,
    distiller: Distiller,
    threshold: int = DEFAULT_THRESHOLD,
    attempts: int = 3,
    retry_delay: float = 0.2,
    sleep: Callable[[float], None] = time.sleep,
    writer: BatchWriter | None = None,
) -> SessionResult:
    """Write what one session owes now. Never raises for a problem of this session: it is in the result
    (a bad `threshold` is the caller's, and raises `InvalidInput` before anything is read)."""
    check_threshold(threshold, "threshold")
    if writer is None:
        with BatchWriter(workspace, store, distiller, one_pass=True) as own:
            return _write_session(store, session_id, own, boundary, threshold, attempts, retry_delay, sleep)
    return _write_session(store, session_id, writer, boundary, threshold, attempts, retry_delay, sleep)


def _write_session(  # noqa: PLR0917  # the public one's keywords, passed on
    store: SessionStore,
    session_id: str,
    writer: BatchWriter,
    boundary: bool,
    threshold: int,
    attempts: int,
    retry_delay: float,
    sleep: Callable[[float], None],
) -> SessionResult:
    try:
        snapshot = store.load(session_id)
        snapshot.require_valid()
    except UnknownSession as exc:  # removed since it was listed: nothing of it to write, no failure
        return SessionResult(
            session_id, "invalid", reason_code=ReasonCode.INVALID_INPUT, retryable=False, detail=str(exc)
        )
    except SessionInvalid as exc:
        writer.record_invalid()
        return SessionResult(
            session_id, "invalid", reason_code=ReasonCode.INVALID_INPUT, retryable=False, detail=str(exc)
        )
    view = DagView.from_nodes(
        session_id, snapshot.nodes.values(), writer.workspace.workspace_id, count_tokens
    )
    planner = SessionPlanner(
        view,
        snapshot.meta.head,
        threshold=threshold,
        max_attempts=attempts,
        backoff=exponential_backoff(retry_delay),
    )
    if boundary:
        planner.on_boundary()
    else:
        planner.check_all_tips()
    result = SessionResult(session_id, "nothing-due")
    clock = time.monotonic
    while True:
        batch = planner.next_batch(clock())
        if batch is None:
            deadline = planner.next_deadline()
            if planner.inflight is None and deadline is not None and planner.busy():
                sleep(max(0.0, deadline - clock()))
                continue
            break
        applied = writer.apply(batch)
        if applied.failure is not None:
            if (applied.failure.retry_after or 0.0) > MAX_RETRY_WAIT:
                _failed(result, applied.failure)  # asked to come back much later: exit 75, retry then
                break
            planner.on_failed(
                batch,
                retryable=applied.failure.retryable,
                now=clock(),
                retry_after=applied.failure.retry_after,
            )
            if planner.parked:
                _failed(result, applied.failure)
                break
            continue
        planner.on_written(batch, applied.node_ids)
        result.outcome = "written"
        result.batches += 1
        result.records += len(applied.node_ids)
    result.pending = view.pending_records()
    return result


def _failed(result: SessionResult, failure: WriteFailure) -> None:
    result.outcome = "failed"
    result.reason_code = failure.code
    result.retryable = failure.retryable
    result.detail = failure.detail


def write_pass(
    home: Path,
    *,
    open_workspace: Callable[[Path], Workspace] | None = None,
    sessions: Iterable[str] | None = None,
    force: bool = False,
    distiller: Distiller | None = None,
    threshold: int = DEFAULT_THRESHOLD,
    idle_after: float = DEFAULT_IDLE_AFTER,
    now: float | None = None,
    on_session: Callable[[SessionResult], None] | None = None,
) -> list[SessionResult]:
    """The write pass over a home (one result per session, in session-id order). A bad `threshold` or
    `idle_after` raises `InvalidInput` before anything is opened. `open_workspace`: how the home's
    workspace is opened (`dagmem.memory.writing.write_home` opens it for writing, recall's updater
    attached); by default with no install hook."""
    check_threshold(threshold, "threshold")
    check_seconds("idle_after", idle_after, zero_ok=True)  # 0: every session counts as ended now
    store = FileSessionStore(home)
    if sessions is not None:
        # A session the caller named that is not there is the caller's mistake, not the writer's: refused
        # before anything is opened, and never recorded as a failure in status.json.
        sessions = sorted(set(sessions))
        for session_id in sessions:
            check_id(session_id, "session id")
            if not store.has_session(session_id):
                raise UnknownSession(session_id)
    distiller = distiller or ExtractiveDistiller()
    now = time.time() if now is None else now
    results: list[SessionResult] = []
    with (
        (open_workspace or _plain)(home) as workspace,
        BatchWriter(workspace, store, distiller, one_pass=True) as writer,
    ):
        for session_id in sessions if sessions is not None else store.session_ids():
            boundary = force
            if not boundary and store.has_session(session_id):
                try:
                    boundary = now - store.meta(session_id).updated_at >= idle_after
                except Exception:  # a malformed meta.json: write_session reports it
                    boundary = False
            result = write_session(
                store,
                workspace,
                session_id,
                boundary=boundary,
                distiller=distiller,
                threshold=threshold,
                writer=writer,
            )
            store.forget(session_id)
            results.append(result)
            if on_session is not None:
                on_session(result)
        if sessions is None and all(r.outcome in ("written", "nothing-due") for r in results):
            writer.record_clean_pass()  # every session is fine now: an old failure is stale
    return results


def _plain(home: Path) -> Workspace:
    return Workspace(HomePaths(home).memory)


def pending_by_session(home: Path, workspace_id: str | None) -> dict[str, int | str]:
    """Records each session still owes this workspace (or why it cannot be read). Read-only."""
    store = FileSessionStore(home, read_only=True)
    out: dict[str, int | str] = {}
    for session_id in store.session_ids():
        try:
            snapshot = store.load(session_id)
            snapshot.require_valid()
        except SessionInvalid as exc:
            out[session_id] = f"invalid: {exc}"
            continue
        view = DagView.from_nodes(session_id, snapshot.nodes.values(), workspace_id or "w-none", count_tokens)
        out[session_id] = view.pending_records()
    return out
