"""The writer actor: one per workspace, it serialises every session's transactions (DESIGN §5).

It owns the open `Workspace` (a restart reopens it, which recovers what a crash left), opened for writing
with the runtime's recall updater, and hands each batch to the batch writer (`BatchWriter`: the write
core's archive → distil → install, then mark, then the status). It is the runtime's one door into the
workspace: a reorganisation or a forget is a job it runs between two batches (`RunOnWorkspace`). A write's
failure is an answer, not a crash: it is sent back to the session, which retries with backoff or parks. A
crash (a bug, or an injected process death) fails the requests in hand with `ActorStopped`; their batches
stay owed and are offered again.

One batch's marks (node file rewrites: mostly the kernel's file creation and fsync waits) run in a task of
their own while the next batch is installed (mostly Python): on two cores the two overlap. Transactions
stay serial (installs run one after another, in this task), each batch is marked only after its install
committed, marks run one batch at a time and in order, and outcomes are recorded in batch order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar, cast

import anyio
import anyio.abc

from ..memory import faults
from ..memory.format import token_encoding
from ..memory.recall import load_model
from ..memory.workspace import Workspace
from ..memory.write import Applied, BatchWriter, Installed
from ..memory.writing import open_for_writing
from ._context import Context
from ._mailbox import ActorStopped, Envelope, Reply
from ._messages import RunOnWorkspace, WriterMessage

__all__ = ["WriterActor", "run_on_workspace"]

log = logging.getLogger("dagmem.writer")

T = TypeVar("T")


async def run_on_workspace(ctx: Context, job: Callable[[Workspace], T]) -> T:
    """`job`'s answer, run on the workspace by its writer between two batches: the runtime's one door into
    the workspace, so that its transactions stay serial (its failure is raised here)."""
    return cast(T, await ctx.writer.request(RunOnWorkspace(job)))


class WriterActor:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        # A death in a marking task, raised by the actor's own task at its next step: the marking task
        # must never cancel it (a cancelled `receive` could lose the request it was handed).
        self._died: BaseException | None = None

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        ctx = self.ctx
        self._died = None
        workspace = await ctx.io(
            open_for_writing,
            ctx.home,
            recall=ctx.recall,
            fsync=ctx.config.fsync,
            clock=ctx.epoch,
            workspace_id=ctx.workspace_id,
        )
        closing: list[BatchWriter] = []
        try:
            await ctx.io(load_model)  # every install indexes its blocks: load the model before the first
            await ctx.io(token_encoding)  # the sessions count tokens on the loop: read their table here
            writer = await ctx.io(BatchWriter, workspace, ctx.store, ctx.distiller)  # opens its caches
            closing.append(writer)
            ctx.status = writer.status
            task_status.started()
            async with anyio.create_task_group() as tg:
                marking: anyio.Event | None = None  # set when the batch being marked is answered
                while True:
                    try:
                        envelope = await ctx.writer.receive()
                    except (anyio.EndOfStream, anyio.ClosedResourceError):
                        if marking is not None:
                            await marking.wait()
                        self._raise_death()
                        return
                    marking = await self._handle(writer, envelope, marking, tg)
        finally:
            with anyio.CancelScope(shield=True):  # closing saves an unsaved status: never cut short
                for writer in closing:
                    await ctx.io(writer.close)
                await ctx.io(workspace.close)

    async def _handle(
        self,
        writer: BatchWriter,
        envelope: Envelope[WriterMessage],
        marking: anyio.Event | None,
        tg: anyio.abc.TaskGroup,
    ) -> anyio.Event | None:
        """Install one batch (while the one before may still be marked) and start its marks, or run a job
        once no batch is in flight. Returns the event of the marks now under way, if any."""
        message, reply = envelope.message, envelope.reply
        if isinstance(message, RunOnWorkspace):
            await self._run(writer, message, reply, marking)
            return None
        batch = message.batch
        try:
            self._raise_death()
            faults.hit("writer:batch")
            step = await self.ctx.io(writer.install, batch)
            if marking is not None:
                await marking.wait()  # outcomes in batch order; one batch's marks at a time
                self._raise_death()
            if isinstance(step, Applied):
                await self.ctx.io(writer.record, step)  # status.json: a death there fails this request
        except BaseException as exc:
            _stopped(reply, f"writing {batch.session_id}", exc)
            raise
        if isinstance(step, Applied):
            self._answer(writer, step, reply)
            return None
        done = anyio.Event()
        tg.start_soon(self._mark, writer, step, reply, done)
        return done

    async def _run(
        self,
        writer: BatchWriter,
        message: RunOnWorkspace,
        reply: Reply[object] | None,
        marking: anyio.Event | None,
    ) -> None:
        """Run a job between two batches: after the marks under way, before the next install, with the
        writer's slot index let go (a forget deletes its file). Its own failure is its caller's answer (the
        writer carries on); a death stops the writer."""
        try:
            if marking is not None:
                await marking.wait()
            self._raise_death()
            try:
                answer = await self.ctx.io(_let_go_and_run, writer, message.job)
            except Exception as exc:  # InjectedCrash is a BaseException: a simulated death propagates
                if reply is not None:
                    reply.fail(exc)
                return
        except BaseException as exc:
            _stopped(reply, "running a job", exc)
            raise
        if reply is not None:
            reply.set(answer)

    async def _mark(
        self, writer: BatchWriter, installed: Installed, reply: Reply[object] | None, done: anyio.Event
    ) -> None:
        try:
            applied = await self.ctx.io(writer.mark, installed)
        except BaseException as exc:
            _stopped(reply, f"writing {installed.batch.session_id}", exc)
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                raise
            self._died = exc  # the batch stays owed; the actor dies at its next step
            return
        finally:
            done.set()
        self._answer(writer, applied, reply)

    def _raise_death(self) -> None:
        if self._died is not None:
            raise self._died

    def _answer(self, writer: BatchWriter, applied: Applied, reply: Reply[object] | None) -> None:
        batch = applied.batch
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


def _let_go_and_run(writer: BatchWriter, job: Callable[[Workspace], T]) -> T:
    writer.let_go()
    return job(writer.workspace)


def _stopped(reply: Reply[object] | None, doing: str, exc: BaseException) -> None:
    if reply is not None:
        reply.fail(ActorStopped(f"the writer stopped while {doing}: {exc!r}"))
