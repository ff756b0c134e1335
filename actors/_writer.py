"""The writer actor: one per workspace, it serialises every session's transactions (DESIGN §5).

It owns the open `Workspace` (a restart reopens it, which recovers what a crash left) and hands each batch
to the one write core (`BatchWriter.apply`: archive → distil → install → mark, status). A write's failure
is an answer, not a crash: it is sent back to the session, which retries with backoff or parks. A crash (a bug, or an injected process death) fails the request in hand
with `ActorStopped`; the batch stays owed and is offered again.
"""

from __future__ import annotations

import logging

import anyio

from ..memory import faults
from ..memory.recall import load_model
from ..memory.workspace import Workspace
from ..memory.write import BatchWriter
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
            await ctx.io(load_model)  # every install indexes its blocks: load the model before the first

            writer = BatchWriter(workspace, ctx.store, ctx.distiller)
            ctx.status = writer.status
            task_status.started()
            while True:
                try:
                    envelope = await ctx.writer.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    return
                await self._handle(writer, envelope)
        finally:
            workspace.close()

    async def _handle(self, writer: BatchWriter, envelope: Envelope[WriteRequest]) -> None:
        batch = envelope.message.batch
        reply = envelope.reply
        try:
            faults.hit("writer:batch")
            applied = await self.ctx.io(writer.apply, batch)
        except BaseException as exc:
            if reply is not None:
                reply.fail(ActorStopped(f"the writer stopped while writing {batch.session_id}: {exc!r}"))
            raise
        self.ctx.status = writer.status
        self.ctx.status_problem = writer.status_problem
        if applied.failure is None:
            self.ctx.emit(
                "write",
                session=batch.session_id,
                nodes=len(batch.node_ids),
                tx=applied.outcome and applied.outcome.tx,
            )
        else:
            self.ctx.emit(
                "write", session=batch.session_id, nodes=len(batch.node_ids), code=str(applied.failure.code)
            )
        if reply is not None:
            reply.set(applied)
