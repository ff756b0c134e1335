"""`dagmem.Runtime`: the public facade that starts the actor tree and stops it cleanly (DESIGN §5, §7).

    root (one_for_one)
     ├─ writer                      one per workspace; serialises transactions
     └─ sessions (one_for_one)      a dynamic supervisor of per-session supervisors
          └─ session:<sid> (one_for_all): the session actor and its timer

A session's supervisor is started on its first message and retires when the session has ended (or gone
idle) and owes nothing. If the root gives up (its restart intensity is exceeded), every pending and later
call raises `RuntimeCrashed`, and so does leaving the `async with` block: never a silent stall.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict

from ..memory.durable import LastFailure, ensure_workspace_id
from ..memory.errors import DagmemError, InvalidInput
from ..memory.format import HEAD, HeadType, Node, Role, check_id
from ..memory.store import FileSessionStore, SessionStore
from ..memory.workspace import check_workspace_paths
from ..memory.write import Distiller, ExtractiveDistiller
from ..supervision import ChildSpec, Restart, RestartIntensityExceeded, Strategy, Supervisor
from ._context import Context, RuntimeConfig, Trace
from ._mailbox import Mailbox, MailboxClosed
from ._messages import Append, EndSession, Flush, HeadMoved, Rewind, SessionMessage, SetHead, TurnAdded
from ._session import SessionActor, SessionHandle
from ._timer import Timer
from ._writer import WriterActor

__all__ = ["Runtime", "RuntimeCrashed", "RuntimeStatus"]

log = logging.getLogger("dagmem.runtime")


class RuntimeCrashed(DagmemError):
    """The runtime's root supervisor gave up (restart intensity exceeded); the cause is chained."""


class RuntimeStatus(BaseModel):
    model_config = ConfigDict(frozen=True)
    last_outcome: str | None
    last_success_at: float | None
    last_failure: LastFailure | None
    pending_turns: int  # records the live sessions still owe (each counted once)
    live_sessions: int


class Runtime:
    """Embeds dagmem in a host: append turns, move heads, end sessions; memory is written behind."""

    def __init__(self, ctx: Context, *, on_event: Any = None) -> None:
        self._ctx = ctx
        self._sessions: dict[str, SessionHandle] = {}
        self._incarnations = 0
        self._failed: RuntimeCrashed | None = None
        self._closing = False
        self._tg: anyio.abc.TaskGroup | None = None
        config = ctx.config
        self._sessions_sup = Supervisor(
            "sessions",
            strategy=Strategy.ONE_FOR_ONE,
            intensity=config.sessions_intensity,
            period=config.sessions_period,
            on_event=on_event,
        )
        self._root = Supervisor(
            "root",
            [
                ChildSpec("writer", WriterActor(ctx).run),
                ChildSpec("sessions", self._run_sessions),
            ],
            strategy=Strategy.ONE_FOR_ONE,
            intensity=config.root_intensity,
            period=config.root_period,
            on_event=on_event,
        )
        self._on_event = on_event

    # -- opening and closing ---------------------------------------------------------------------------

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        home: Path | str,
        distiller: Distiller | None = None,
        token_threshold: int = 16_000,
        idle_after: float = 1800.0,
        git: bool = False,
        *,
        abandon_after: float = 60.0,
        store: SessionStore | None = None,
        config: RuntimeConfig | None = None,
        trace: Trace | None = None,
        epoch: Any = None,
        on_event: Any = None,
        offload: bool | None = None,
    ) -> AsyncIterator[Runtime]:
        """Start the actor tree over `home` (`sessions/` and `memory/`) and stop it on exit.

        `store` replaces the file store (the simulator passes an in-memory one). Blocking work runs in
        worker threads when the store does real I/O; `offload=False` runs it inline instead, which
        blocks the event loop but keeps a virtual clock exact (threads let it jump) and runs
        deterministic. `epoch` is the clock for times written to files (default `time.time`)."""
        home = Path(home)
        if config is None:
            config = RuntimeConfig(
                token_threshold=token_threshold, idle_after=idle_after, abandon_after=abandon_after
            )
        store = store if store is not None else FileSessionStore(home, git=git, fsync=config.fsync)
        memory = home / "memory"
        offload = store.blocking if offload is None else offload
        check_workspace_paths(memory)  # a symlink or a FIFO in the workspace: refused before any write
        workspace_id = (
            await anyio.to_thread.run_sync(ensure_workspace_id, memory / ".dagmem" / "workspace-id")
            if offload
            else ensure_workspace_id(memory / ".dagmem" / "workspace-id", fsync=config.fsync)
        )
        ctx = Context(
            config=config,
            store=store,
            workspace_root=memory,
            workspace_id=workspace_id,
            distiller=distiller or ExtractiveDistiller(),
            writer=Mailbox("writer", config.writer_mailbox),
            epoch=epoch or time.time,
            offload=offload,
            trace=trace,
        )
        runtime = cls(ctx, on_event=on_event)
        try:
            async with anyio.create_task_group() as tg:
                runtime._tg = tg
                await tg.start(runtime._run_root)
                try:
                    yield runtime
                finally:
                    runtime._closing = True
                    with anyio.CancelScope(shield=True), anyio.move_on_after(60):
                        await runtime._stop_sessions()
                    runtime._root.stop()
        except BaseExceptionGroup as group:
            # The host's own exception (or our RuntimeCrashed) comes out as itself, not in a group.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        if runtime._failed is not None:
            raise runtime._failed

    async def _run_root(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        try:
            await self._root.run(task_status=task_status)
        except RestartIntensityExceeded as exc:
            self._failed = RuntimeCrashed(f"the dagmem runtime stopped: {exc}")
            self._failed.__cause__ = exc
            log.error("%s", self._failed)
        finally:
            error = self._failed or MailboxClosed("the dagmem runtime is closed")
            self._ctx.writer.close(error)
            for handle in list(self._sessions.values()):
                handle.close(error)
            self._sessions.clear()

    async def _run_sessions(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        # A (re)started sessions supervisor has no children: forget the old addresses (their queued calls
        # fail and are retried by the caller against a fresh actor).
        for handle in list(self._sessions.values()):
            handle.close(MailboxClosed(f"session {handle.session_id!r} was restarted"))
        self._sessions.clear()
        await self._sessions_sup.run(task_status=task_status)

    # -- sessions --------------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._failed is not None:
            raise self._failed
        if self._closing:
            raise MailboxClosed("the dagmem runtime is closed")

    async def _handle(self, session_id: str, *, retire_after_flush: bool = False) -> SessionHandle:
        self._check_open()
        handle = self._sessions.get(session_id)
        if handle is not None:
            return handle
        self._incarnations += 1
        mailbox: Mailbox[SessionMessage] = Mailbox(
            f"session {session_id!r}", self._ctx.config.session_mailbox
        )
        handle = SessionHandle(
            session_id,
            mailbox,
            Timer(mailbox),
            child_id=f"session:{session_id}:{self._incarnations}",
            retire_after_flush=retire_after_flush,
            on_retire=self._retire,
        )
        self._sessions[session_id] = handle
        try:
            await self._sessions_sup.start_child(
                ChildSpec(handle.child_id, functools.partial(self._run_session, handle), Restart.TRANSIENT)
            )
        except BaseException:
            if self._sessions.get(session_id) is handle:
                del self._sessions[session_id]
            handle.close()
            raise
        return handle

    async def _stop_sessions(self) -> None:
        """Stop every session's supervisor at once. A dynamic supervisor's children need no order (as in
        OTP's simple_one_for_one), and one cancellation each beats 10,000 stopped one by one: anyio's
        asyncio backend re-delivers a pending cancellation to every shielded scope on each loop turn."""
        handles = list(self._sessions.values())
        for handle in handles:
            if handle.supervisor is not None:
                handle.supervisor.stop()
        for handle in handles:
            if handle.supervisor is not None:
                await handle.stopped.wait()

    async def _run_session(
        self, handle: SessionHandle, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        config = self._ctx.config
        supervisor = Supervisor(
            f"session:{handle.session_id}",
            [
                ChildSpec("actor", lambda **kw: SessionActor(handle, self._ctx).run(**kw), Restart.TRANSIENT),
                ChildSpec("timer", handle.timer.run, Restart.TRANSIENT),
            ],
            strategy=Strategy.ONE_FOR_ALL,
            intensity=config.session_intensity,
            period=config.session_period,
            on_event=self._on_event,
        )
        handle.supervisor = supervisor
        handle.stopped = anyio.Event()
        try:
            await supervisor.run(task_status=task_status)
        finally:
            handle.stopped.set()

    def _retire(self, handle: SessionHandle) -> None:
        """The session ended and owes nothing: drop its address now (a new call starts a fresh actor)
        and remove its supervisor in the background."""
        if self._sessions.get(handle.session_id) is handle:
            del self._sessions[handle.session_id]
        handle.close()
        self._ctx.store.forget(handle.session_id)
        if handle.supervisor is not None:
            handle.supervisor.stop()
        if self._tg is not None and not self._closing:
            self._tg.start_soon(self._remove_child, handle.child_id)

    async def _remove_child(self, child_id: str) -> None:
        with contextlib.suppress(KeyError, RuntimeError):
            await self._sessions_sup.terminate_child(child_id)

    async def _request(self, session_id: str, message: SessionMessage) -> object:
        """Send a request to a session, starting its actor if needed; a session that retired between
        lookup and send is revived."""
        check_id(session_id, "session id")
        for _attempt in range(3):
            handle = await self._handle(session_id)
            try:
                return await handle.mailbox.request(message)
            except MailboxClosed:
                self._check_open()
                if not handle.retired:
                    raise
        raise MailboxClosed(f"session {session_id!r} keeps retiring")

    # -- the public API --------------------------------------------------------------------------------

    async def append(
        self,
        session_id: str,
        role: Role | str,
        content: str,
        *,
        predecessor: str | HeadType | None = HEAD,
        node_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """Append a turn and return its node id. `predecessor=HEAD` continues the head (which moves),
        `None` starts a new root, an id forks there. Bad input raises `InvalidInput`; nothing is written."""
        if not isinstance(content, str):
            raise InvalidInput(f"content must be a string, not {type(content).__name__}")
        if node_id is not None:
            check_id(node_id, "node id")
        if predecessor is not None and predecessor is not HEAD:
            check_id(predecessor, "predecessor id")
        message = Append(role, content, predecessor, node_id, None if metadata is None else dict(metadata))
        node = await self._request(session_id, message)
        assert isinstance(node, Node)
        return node.id

    async def set_head(self, session_id: str, node_id: str | None) -> None:
        """Move the head; the branch it leaves is force-written after `abandon_after` unless it returns."""
        if node_id is not None:
            check_id(node_id, "node id")
        await self._request(session_id, SetHead(node_id))

    async def rewind(self, session_id: str, node_id: str) -> list[str]:
        """Undo the head branch back to `node_id` (inclusive); rewound turns are no longer records."""
        check_id(node_id, "node id")
        rewound = await self._request(session_id, Rewind(node_id))
        assert isinstance(rewound, list)
        return rewound

    async def end_session(self, session_id: str) -> None:
        """Boundary-write every branch of the session (head first); return when nothing is owed."""
        await self._request(session_id, EndSession())

    async def flush(self, force: bool = False) -> None:
        """Return when every due batch is written and marked. `force=True` first boundary-writes every
        session of the store (live or not), so nothing is owed afterwards."""
        self._check_open()
        if force:
            store = self._ctx.store
            ids = await self._ctx.io(store.session_ids)
            limiter = anyio.CapacityLimiter(32)

            async def force_one(session_id: str) -> None:
                # A runtime that dies meanwhile is reported once, below, not as an exception group.
                async with limiter:
                    with contextlib.suppress(MailboxClosed, RuntimeCrashed):
                        live = session_id in self._sessions
                        handle = await self._handle(session_id, retire_after_flush=not live)
                        await handle.mailbox.request(Flush(force=True))

            async with anyio.create_task_group() as tg:
                for session_id in ids:
                    tg.start_soon(force_one, session_id)
        else:
            async with anyio.create_task_group() as tg:
                for handle in list(self._sessions.values()):
                    tg.start_soon(self._flush_one, handle)
        self._check_open()

    @staticmethod
    async def _flush_one(handle: SessionHandle) -> None:
        with contextlib.suppress(MailboxClosed, RuntimeCrashed):
            await handle.mailbox.request(Flush())

    def status(self) -> RuntimeStatus:
        """The writer's last outcome and the records the live sessions still owe."""
        pending = 0
        for handle in self._sessions.values():
            actor = handle.actor
            if actor is not None and actor.planner is not None:
                pending += actor.planner.view.pending_records()
        status = self._ctx.status
        return RuntimeStatus(
            last_outcome=status.last_outcome,
            last_success_at=status.last_success_at,
            last_failure=status.last_failure,
            pending_turns=pending,
            live_sessions=len(self._sessions),
        )

    async def recall(
        self, query: str, session_id: str | None = None, tip: str | None = None, k: int = 5
    ) -> list[dict[str, Any]]:
        """Search memory (branch-aware when a tip is given). Not built yet: returns no hits."""
        if not isinstance(query, str):
            raise InvalidInput("query must be a string")
        return []

    # -- the adapter protocol, for hosts that write their own session files ----------------------------

    async def notify_turn(self, session_id: str, node: Node) -> None:
        """The host wrote `node`'s file itself (DESIGN §2 format): account for it like an append."""
        await self._request(session_id, TurnAdded(node))

    async def notify_head(self, session_id: str, node_id: str | None) -> None:
        """The host moved the head in its own `meta.json`."""
        await self._request(session_id, HeadMoved(node_id))

    # -- for tests and the simulator ---------------------------------------------------------------------

    @property
    def workspace_id(self) -> str:
        return self._ctx.workspace_id

    def live_sessions(self) -> list[str]:
        return list(self._sessions)
