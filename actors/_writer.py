"""The writer actor: one per workspace, it serialises every session's transactions (DESIGN §5).

It owns the open `Workspace` (a restart reopens it, which recovers what a crash left). A write's
failure is an answer, not a crash: it is recorded in `status.json` and sent back to the session, which
retries with backoff or parks. A crash (a bug, or an injected process death) fails the request in hand
with `ActorStopped`; the batch stays owed and is offered again.
"""

from __future__ import annotations

import logging

import anyio

from ..memory import faults
from ..memory.outcomes import WriteFailure, classify
from ..memory.policy import Batch
from ..memory.workspace import Workspace
from ..memory.write import WriteOutcome, records_of, write_batch
from ._context import Context
from ._mailbox import ActorStopped, Envelope
from ._messages import WriteRequest

__all__ = ["WriterActor"]

log = logging.getLogger("dagmem.writer")


class WriterActor:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        ctx = self.ctx
        workspace = await ctx.io(
            Workspace,
            ctx.workspace_root,
            fsync=ctx.config.fsync,
            clock=ctx.epoch,
            workspace_id=ctx.workspace_id,
        )
        try:
            ctx.status = workspace.status()
            task_status.started()
            while True:
                try:
                    envelope = await ctx.writer.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return
                await self._handle(workspace, envelope)
        finally:
            workspace.close()

    async def _handle(self, workspace: Workspace, envelope: Envelope[WriteRequest]) -> None:
        batch = envelope.message.batch
        reply = envelope.reply
        try:
            faults.hit("writer:batch")
            answer = await self.ctx.io(self._write, workspace, batch)
        except BaseException as exc:
            if reply is not None:
                reply.fail(ActorStopped(f"the writer stopped while writing {batch.session_id}: {exc!r}"))
            raise
        if isinstance(answer, WriteOutcome):
            self.ctx.emit("write", session=batch.session_id, nodes=len(batch.node_ids), tx=answer.tx)
        else:
            self.ctx.emit("write", session=batch.session_id, nodes=len(batch.node_ids), code=str(answer.code))
        if reply is not None:
            reply.set(answer)

    def _write(self, workspace: Workspace, batch: Batch) -> WriteOutcome | WriteFailure:
        """Runs in a worker thread when the store does real I/O."""
        ctx = self.ctx
        try:
            nodes = ctx.store.read_nodes(batch.session_id, batch.node_ids)
            outcome = write_batch(
                workspace, batch.session_id, records_of(batch.session_id, nodes), ctx.distiller
            )
        except Exception as exc:  # write_batch raises WriteFailure; a store read can fail too
            failure = classify(exc)
            log.warning(
                "session %s: batch of %d records failed: %s", batch.session_id, len(batch.node_ids), failure
            )
            ctx.status = workspace.record_failure(failure.code, failure.retryable)
            return failure
        ctx.status = workspace.record_success()
        return outcome
