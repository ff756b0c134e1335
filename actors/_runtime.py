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
import dataclasses
import functools
import logging
import os
import stat
import time
from collections.abc import AsyncIterator, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, computed_field

from ..memory.checkout import reader_at
from ..memory.currency import SessionShape, parse_spawned_from
from ..memory.durable import LastFailure, ensure_workspace_id
from ..memory.errors import DagmemError, InvalidInput, MemoryOff, UnknownSession
from ..memory.forget import ForgetReport, finish_pending, plan_forget
from ..memory.forget import forget as forget_home
from ..memory.format import (
    HEAD,
    GitContext,
    HeadType,
    HomePaths,
    Node,
    Role,
    WorkspacePaths,
    check_content,
    check_id,
    check_metadata,
    git_context_of,
)
from ..memory.outcomes import ReasonCode, WriteFailure
from ..memory.recall import (
    RECALL_FLOOR,
    Hit,
    RecallIndex,
    RecallQuery,
    Siblings,
    code_checks,
    core_for,
    reader_for,
    search,
    visible,
)
from ..memory.settings import DEFAULTS, memory_off
from ..memory.shapes import ShapeCache
from ..memory.store import FileSessionStore, SessionStore, Turn
from ..memory.trust import OutOfScope, Scope
from ..memory.workspace import ServingLock, Workspace, check_workspace_paths
from ..memory.write import (
    Distiller,
    ExtractiveDistiller,
    Reorganised,
    distiller_named,
    one_path_in,
    reorganise,
)
from ..supervision import (
    ChildSpec,
    Restart,
    RestartIntensityExceeded,
    Strategy,
    Supervisor,
    SupervisorEvent,
)
from ._context import Context, RuntimeConfig, Trace, run_blocking
from ._mailbox import ActorStopped, Mailbox, MailboxClosed
from ._messages import AdoptTurn, Append, EndSession, Flush, ReloadHead, Rewind, SessionMessage, SetHead
from ._session import SessionActor, SessionHandle
from ._timer import Timer
from ._writer import WriterActor, run_on_workspace

__all__ = [
    "EventHandler",
    "FailureStatus",
    "Runtime",
    "RuntimeClosed",
    "RuntimeCrashed",
    "RuntimeStatus",
    "WaitOutStatus",
]

log = logging.getLogger("dagmem.runtime")


class RuntimeCrashed(DagmemError):
    """The runtime's root supervisor gave up (restart intensity exceeded); the cause is chained."""


class RuntimeClosed(MailboxClosed):
    """The runtime was closed (its `async with` block has ended): it takes no more calls."""


EventHandler = Callable[[SupervisorEvent], None]


def _schedule(at: float | Callable[[float], float | None] | None) -> Callable[[float], float | None] | None:
    if at is None or callable(at):
        return at
    if isinstance(at, bool) or not isinstance(at, int | float) or not 0 < at < float("inf"):
        raise InvalidInput(f"reorganise_at must be a period in seconds above 0, or a function, not {at!r}")
    period = float(at)
    return lambda now: now + period


def _config_of(
    config: RuntimeConfig | None, *, token_threshold: int, idle_after: float, abandon_after: float
) -> RuntimeConfig:
    """`config`, or one of the settings given beside it (not both: `config=` sets all)."""
    if config is None:
        return RuntimeConfig(
            token_threshold=token_threshold, idle_after=idle_after, abandon_after=abandon_after
        )
    beside = {"token_threshold": token_threshold, "idle_after": idle_after, "abandon_after": abandon_after}
    clash = [name for name, value in beside.items() if value != getattr(DEFAULTS, name)]
    if clash:
        raise InvalidInput(f"pass {', '.join(clash)} inside config=, not beside it (config= sets all)")
    return config


async def _claim(home: Path, store: SessionStore, *, fsync: bool, offload: bool) -> tuple[str, ServingLock]:
    """The workspace's id (made on first use) and the home's serving lock, once the workspace is found safe
    (a symlink or a FIFO in it is refused before any write) and a forget a crash left part done is
    finished. One live runtime per home: a second one fails here, at once (`HomeBusy`), never interleaves."""
    paths = HomePaths(home).workspace
    check_workspace_paths(paths.root)
    workspace_id = await run_blocking(offload, ensure_workspace_id, paths.workspace_id, fsync=fsync)
    if isinstance(store, FileSessionStore) and paths.forgotten.exists():
        await run_blocking(offload, finish_pending, home, fsync=fsync)
    return workspace_id, await run_blocking(offload, ServingLock.acquire, paths.serving_lock)


def _check_home(home: Path) -> None:
    """A home is a directory (or not there yet: the first append creates it); anything else is the
    caller's mistake, refused before anything is opened."""
    try:
        info = os.stat(home)
    except FileNotFoundError:
        if home.is_symlink():
            raise InvalidInput(f"home {home} is a broken symbolic link") from None
        return
    except NotADirectoryError:
        raise InvalidInput(f"home {home}: a parent of it is a file, not a directory") from None
    if not stat.S_ISDIR(info.st_mode):
        raise InvalidInput(f"home {home} is not a directory")


def _git_given(checkout: str | os.PathLike[str] | None, git: GitContext | None) -> GitContext | None:
    """`append`'s `git`, when it may be kept: a `GitContext` (within its bounds: the `Turn` checks), never
    beside a `checkout` to read one from."""
    if checkout is not None and git is not None:
        raise InvalidInput("give checkout or git, not both")
    if git is not None and not isinstance(git, GitContext):
        raise InvalidInput(f"git must be a GitContext within its bounds, not {git!r}")
    return git


def _git_at(checkout: str | os.PathLike[str]) -> GitContext | None:
    """Where in git a turn said in `checkout` is: read from its files (None outside a git worktree, or
    out of a context's bounds)."""
    from ..memory.checkout import read_checkout

    found = read_checkout(os.fspath(checkout))
    if found is None:
        return None  # not a git worktree: no git context, as for any work outside git
    return git_context_of(GitContext(found.repo, found.branch, found.commit))


def _iso(at: float | None) -> str | None:
    return None if at is None else datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


class FailureStatus(LastFailure):
    """The writer's last failure, its time also as ISO 8601 (UTC) beside the epoch seconds."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def at_iso(self) -> str:
        return _iso(self.at) or ""


class WaitOutStatus(BaseModel):
    """Nothing is written while a cause that passes lasts (a full disk): why, since when, the next try.
    The writes are retried until it passes; nothing is lost. Times are epoch seconds, each also as ISO."""

    model_config = ConfigDict(frozen=True)
    reason_code: ReasonCode
    since: float
    next_try_at: float
    sessions: int  # the sessions whose batch waits
    message: str

    @computed_field  # type: ignore[prop-decorator]
    @property
    def since_iso(self) -> str:
        return _iso(self.since) or ""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def next_try_at_iso(self) -> str:
        return _iso(self.next_try_at) or ""


class RuntimeStatus(BaseModel):
    """What `Runtime.status()` reports. The times are epoch seconds (as they always were) with an ISO 8601
    string (UTC) beside each, for people and logs."""

    model_config = ConfigDict(frozen=True)
    last_outcome: str | None
    last_success_at: float | None
    last_failure: FailureStatus | None
    pending_turns: int  # records the live sessions still owe (each counted once)
    live_sessions: int
    status_problem: str | None = None  # why status.json could not be written (the writer carries on)
    waiting_out: WaitOutStatus | None = None  # nothing is written until this passes (a full disk)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def last_success_at_iso(self) -> str | None:
        return _iso(self.last_success_at)


class Runtime:
    """Embeds dagmem in a host: append turns, move heads, end sessions; memory is written behind."""

    def __init__(self, ctx: Context, *, on_event: EventHandler | None = None) -> None:
        self._ctx = ctx
        self._sessions: dict[str, SessionHandle] = {}
        self._incarnations = 0
        self._failed: RuntimeCrashed | None = None
        self._closing = False
        self._tg: anyio.abc.TaskGroup | None = None
        self._recall: RecallIndex | None = None  # opened on the first recall
        self._shapes: ShapeCache | None = None  # the sessions' DAG shapes recall reads, likewise
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
        distiller: Distiller | str | None = None,
        token_threshold: int = DEFAULTS.token_threshold,
        idle_after: float = DEFAULTS.idle_after,
        git: bool = False,
        *,
        abandon_after: float = DEFAULTS.abandon_after,
        store: SessionStore | None = None,
        config: RuntimeConfig | None = None,
        trace: Trace | None = None,
        epoch: Callable[[], float] | None = None,
        on_event: EventHandler | None = None,
        offload: bool | None = None,
        reorganise_at: float | Callable[[float], float | None] | None = None,
        memory: bool = True,
    ) -> AsyncIterator[Runtime]:
        """Start the actor tree over `home` (`sessions/` and `memory/`) and stop it on exit.

        `store` replaces the file store (the simulator passes an in-memory one). Blocking work runs in
        worker threads when the store does real I/O; `offload=False` runs it inline instead, which
        blocks the event loop but keeps a virtual clock exact (threads let it jump) and runs
        deterministic. `epoch` is the clock for times written to files (default `time.time`).

        `distiller` is a `Distiller` or a name: "extractive" (the default) or "openai" (settings from
        `DAGMEM_LLM_*` and `<home>/llm.toml`, read now). `reorganise_at` (opt-in) schedules consolidation
        passes on the event-loop clock: a number is a period in seconds; a function of the loop time of
        the last pass (or of the start) gives the loop time of the next one, or None to stop.

        `memory=False`, or `DAGMEM_MEMORY=off` in the environment, switches memory off: `MemoryOff` is
        raised before anything is opened or created (no workspace, no lock, no session file)."""
        if not memory or memory_off():
            raise MemoryOff(f"Runtime.open({str(home)!r})")
        home = Path(home)
        _check_home(home)
        if isinstance(distiller, str):  # "extractive" or "openai" (its settings are read now, off the loop)
            named = functools.partial(distiller_named, distiller, home)
            distiller = named() if offload is False else await anyio.to_thread.run_sync(named)
        config = _config_of(
            config, token_threshold=token_threshold, idle_after=idle_after, abandon_after=abandon_after
        )
        schedule = _schedule(reorganise_at)
        epoch = epoch or time.time
        if store is None:  # it stamps its nodes and meta with the runtime's clock, as the workspace its files
            store = FileSessionStore(home, git=git, fsync=config.fsync, clock=epoch)
        offload = store.blocking if offload is None else offload
        workspace_id, serving = await _claim(home, store, fsync=config.fsync, offload=offload)
        ctx = Context(  # nothing between here and the `try` below does I/O or can fail but by a bug
            config=config,
            store=store,
            workspace_root=HomePaths(home).memory,
            workspace_id=workspace_id,
            distiller=distiller or ExtractiveDistiller(),
            writer=Mailbox("writer", config.writer_mailbox),
            epoch=epoch,
            offload=offload,
            trace=trace,
        )
        runtime = cls(ctx, on_event=on_event)
        try:
            async with runtime._running(schedule):
                yield runtime
        finally:
            serving.release()
            runtime._let_go()
        if runtime._failed is not None:
            raise runtime._failed

    @contextlib.asynccontextmanager
    async def _running(self, schedule: Callable[[float], float | None] | None) -> AsyncIterator[None]:
        """The actor tree (and the scheduled consolidation passes) for the host's block, stopped when it
        ends. The host's own exception (or our `RuntimeCrashed`) comes out as itself, not in a group."""
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                await tg.start(self._run_root)
                consolidation = anyio.CancelScope()
                if schedule is not None:
                    tg.start_soon(self._reorganise_loop, schedule, consolidation)
                try:
                    yield
                finally:
                    consolidation.cancel()
                    await self._stop()
        except BaseExceptionGroup as group:
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise

    async def _stop(self) -> None:
        """No more calls; the sessions stopped (a minute at most, whatever cancels the host), then the root."""
        self._closing = True
        with anyio.CancelScope(shield=True), anyio.move_on_after(60):
            await self._stop_sessions()
        self._root.stop()

    def _let_go(self) -> None:
        """A closed runtime holds nothing: not the recall index its writer held, nor the shapes recall read."""
        self._ctx.recall.forget()
        if self._shapes is not None:
            self._shapes.close()

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
            raise RuntimeClosed("the dagmem runtime is closed")

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
        spawned: bool = False,
        spawned_from: str | None = None,
        origin: str | None = None,
        checkout: str | os.PathLike[str] | None = None,
        git: GitContext | None = None,
    ) -> str:
        """Append a turn and return its node id. `predecessor=HEAD` continues the head, `None` starts a new
        root, an id forks there; the head moves to the new node, so a fork (an edited prompt, a retry) goes
        on from there and the branch it leaves is force-written after `abandon_after`. `spawned=True` adds
        a side branch (a sub-agent's turns) and leaves the head where it was. `spawned_from="<sid>/<node>"`,
        at a session's first append, says where the session was spawned from. `origin` says where the text
        came from when it is not the role's default (`"tool"` for a user-role row that carries a pasted or
        fetched page): only text a person typed (`"user"`) may become a core fact. `checkout`, the directory
        the turn was said in: its git repository, branch and commit are read from its files and kept with
        the turn (`metadata["git"]`, nothing outside a git worktree); `git`, such a context already read
        (an importer's: what the transcript said). Bad input raises `InvalidInput`; nothing is written.
        The arguments but `checkout` are a `dagmem.Turn`'s: `append_turn` takes one made already."""
        # Checked here, once, as the `Turn` is made: bad input is the caller's answer before any actor
        # sees the call, never an actor crash (and a restart's backoff).
        check_id(session_id, "session id")
        turn = Turn(
            role,
            content,
            predecessor=predecessor,
            node_id=node_id,
            metadata=metadata,
            spawned=spawned,
            spawned_from=spawned_from,
            origin=origin,
            git=_git_given(checkout, git),
        )
        if checkout is not None:
            turn = dataclasses.replace(turn, git=await self._ctx.io(_git_at, checkout))
        return await self.append_turn(session_id, turn)

    async def append_turn(self, session_id: str, turn: Turn) -> str:
        """Append `turn` (a `dagmem.Turn`: `append`'s arguments as one value, checked when it was made)
        and return its node id."""
        if not isinstance(turn, Turn):
            raise InvalidInput(f"turn must be a dagmem.Turn, not {type(turn).__name__}")
        node = await self._request(session_id, Append(turn))
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
        """Boundary-write every branch of the session (head first); return when nothing is owed. An unknown
        session raises `UnknownSession`, as `set_head` does."""
        check_id(session_id, "session id")
        self._check_open()
        if not await self._ctx.io(self._ctx.store.has_session, session_id):
            raise UnknownSession(session_id)
        await self._request(session_id, EndSession())

    async def flush(self, force: bool = False, *, wait_out: bool = True) -> RuntimeStatus:
        """Return when every due batch is written and marked, with the status then. `force=True` first
        boundary-writes every session of the store (live or not), so nothing is owed afterwards. If the
        runtime dies meanwhile, raise `RuntimeCrashed`: never return with turns owed because an actor was
        restarted under us.

        A full disk is waited out: the writes are retried until space returns, and by default `flush`
        waits with them. `wait_out=False` returns as soon as an attempt made during the call fails for
        such a cause (a batch already waiting is tried at its next retry, at most a minute away): the
        status's `waiting_out` then says why (`DISK_FULL`), since when and when the next try is, and the
        writes go on being retried behind (nothing is lost)."""
        self._check_open()
        if wait_out:
            await self._flush(force)
            return self.status()
        try:
            async with anyio.create_task_group() as tg:

                async def flush() -> None:
                    await self._flush(force)
                    tg.cancel_scope.cancel()

                async def stuck() -> None:
                    await self._ctx.next_wait_out()
                    tg.cancel_scope.cancel()

                tg.start_soon(flush)
                tg.start_soon(stuck)
        except BaseExceptionGroup as group:  # `RuntimeCrashed` comes out as itself, as from `flush()`
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        self._check_open()
        return self.status()

    async def _flush(self, force: bool) -> None:
        if force:
            ids = await self._ctx.io(self._ctx.store.session_ids)
            limiter = anyio.CapacityLimiter(32)

            async def force_one(session_id: str) -> None:
                async with limiter:
                    await self._flush_session(session_id, Flush(force=True))

            async with anyio.create_task_group() as tg:
                for session_id in ids:
                    tg.start_soon(force_one, session_id)
        else:
            async with anyio.create_task_group() as tg:
                for session_id in list(self._sessions):
                    tg.start_soon(self._flush_session, session_id, Flush())
        self._check_open()  # a runtime that died meanwhile raises here, once

    async def _flush_session(self, session_id: str, message: Flush) -> None:
        with contextlib.suppress(RuntimeCrashed, MailboxClosed):  # raised once by `flush`, not per session
            await self._until_answered(session_id, message)

    async def _until_answered(self, session_id: str, message: Flush) -> None:
        """Ask one session to flush until it answers: a session (or the sessions supervisor) restarted
        mid-flush closes the mailbox we waited on, and the restarted actor, rebuilt from disk, is asked
        again. Ends when it answers, or raises when the runtime has died or is closing."""
        delay = 0.01
        while True:
            self._check_open()
            live = session_id in self._sessions
            handle = None
            try:
                handle = await self._handle(session_id, retire_after_flush=not live)
                await handle.mailbox.request(message)
                return
            except MailboxClosed:
                if handle is not None and handle.retired:
                    return  # it retired, which it does only when it owes nothing
            await anyio.sleep(delay)  # let the supervisor finish restarting it
            delay = min(1.0, delay * 2)

    def status(self, *, scope: Scope | None = None) -> RuntimeStatus:
        """The writer's last outcome and the records the live sessions still owe (under a `scope`, only
        the sessions it may see are counted)."""
        # Each session actor publishes its snapshot after every event it handles: summing them reads no
        # planner from this task, and status() stays synchronous.
        seen = {
            sid: handle
            for sid, handle in self._sessions.items()
            if scope is None or scope.allows_session(sid)
        }
        pending = sum(handle.snapshot.pending_records for handle in seen.values())
        status = self._ctx.status
        failure = status.last_failure
        return RuntimeStatus(
            last_outcome=status.last_outcome,
            last_success_at=status.last_success_at,
            last_failure=None if failure is None else FailureStatus(**failure.model_dump()),
            pending_turns=pending,
            live_sessions=len(seen),
            status_problem=self._ctx.status_problem,
            waiting_out=self._waiting_out(scope),
        )

    def _waiting_out(self, scope: Scope | None) -> WaitOutStatus | None:
        waits = [
            wait for sid, wait in self._ctx.waiting_out.items() if scope is None or scope.allows_session(sid)
        ]
        if not waits:
            return None
        code = waits[0].code
        why = "the disk is full" if code is ReasonCode.DISK_FULL else "a cause that passes"
        return WaitOutStatus(
            reason_code=code,
            since=min(w.since for w in waits),
            next_try_at=min(w.next_try_at for w in waits),
            sessions=len(waits),
            message=f"nothing is written: {why} ({code}); retrying until it passes (nothing is lost)",
        )

    async def recall(
        self,
        query: str,
        session_id: str | None = None,
        tip: str | None = None,
        k: int = 5,
        siblings: Siblings = "demote",
        *,
        history: bool = False,
        floor: float = RECALL_FLOOR,
        held: bool = False,
        scope: Scope | None = None,
        checkout: str | os.PathLike[str] | None = None,
    ) -> list[Hit]:
        """Search memory for `query`: the `k` best topic blocks, with their evidence. With a session, each
        hit has a branch class relative to `tip` (default: the head), and by default no hit from a sibling
        branch ranks above an on-branch one (`siblings="exclude"` drops them, `"include"` ranks them as
        any other). Each hit has a status (`current`, `superseded`, `left`): by default no superseded or
        left hit ranks above a current one; `history=True` ranks them by relevance ("what did I used
        to…"), labelled. Each claim comes once, and a hit scoring below `floor` times the best is left out
        (it only pads `k`; 0 keeps every one). Candidate core facts held for review come back only with
        `held=True` (labelled `held`). Under a `scope` only what it allows is returned; a session outside
        it (or held items it does not allow) raises `OutOfScope`, which names nothing else. `checkout`:
        the reader's git checkout (a directory in a worktree): each hit gets its git label (`Hit.git`:
        said on a branch not merged into the checkout's HEAD, or in another repository, it ranks below
        the reader's own, as a sibling does) and `Hit.code` when a file an edit it cites no longer holds
        what it wrote; the merge facts missing for this HEAD are computed first (`git`, in a worker
        thread, cached in the home). Reads files only: no lock, and never half a transaction. The arguments
        but `scope` and `checkout` are a `dagmem.RecallQuery`'s: `recall_query` takes one made already."""
        asked = RecallQuery(
            query,
            session_id=session_id,
            tip=tip,
            k=k,
            siblings=siblings,
            history=history,
            floor=floor,
            held=held,
        )
        return await self.recall_query(asked, scope=scope, checkout=checkout)

    async def recall_query(
        self,
        query: RecallQuery,
        *,
        scope: Scope | None = None,
        checkout: str | os.PathLike[str] | None = None,
    ) -> list[Hit]:
        """`recall` of a `dagmem.RecallQuery` (its arguments as one value, checked when it was made), for
        the reader `scope` allows, at the git `checkout` (both as for `recall`)."""
        if not isinstance(query, RecallQuery):
            raise InvalidInput(f"query must be a dagmem.RecallQuery, not {type(query).__name__}")
        session_id, tip = query.session_id, query.tip
        if scope is not None:
            if session_id is not None and not scope.allows_session(session_id):
                raise OutOfScope("that session")
            if query.held and not scope.held:
                raise OutOfScope("held items")
        if self._shapes is None:
            self._shapes = await self._ctx.io(ShapeCache, self._ctx.workspace_root, self._ctx.store)
        live = self._live_shape(session_id) if session_id is not None else None
        shapes = self._shapes.for_reader(session_id, tip, lambda _sid: live)
        index = self._recall
        if index is None:
            index = self._recall = await self._ctx.io(RecallIndex.open, self._ctx.workspace_root)
        keep = visible(held=query.held, scope=scope)

        where = None if checkout is None else os.fspath(checkout)
        memory = self._ctx.workspace_root

        def answer() -> list[Hit]:  # the reader and the search in one worker call: one thread hop, not two
            reader = reader_for(shapes, session_id, tip)
            git = None if where is None else reader_at(memory, where, run_git=True, write=True)
            hits = search(index, query, reader=reader, keep=keep, checkout=git)
            if git is None:
                return hits
            verdicts = code_checks(hits, git.checkout.repo, git.checkout.root)
            return [
                h if v is None else h.model_copy(update={"code": v})
                for h, v in zip(hits, verdicts, strict=True)
            ]

        return await self._ctx.io(answer)

    def _live_shape(self, session_id: str) -> SessionShape | None:
        """A live session's shape from its actor's DAG view (O(1), no file read), or None when it is not
        live: its nodes as of now, however many the actor appends meanwhile."""
        handle = self._sessions.get(session_id)
        actor = handle.actor if handle is not None else None
        planner = actor.planner if actor is not None else None
        if planner is None:
            return None
        spawned_from = parse_spawned_from(self._ctx.store.meta(session_id).spawned_from)
        return SessionShape.from_dag(planner.view, planner.head, spawned_from)

    def core(self, *, scope: Scope | None = None) -> str:
        """The rendered core block (`memory/core.md`), ready to inject; "" when there is none. Under a
        `scope`, only the facts whose evidence it may see (`OutOfScope` when it excludes the core).

        Synchronous (kept so: hosts call it outside any event loop, and inside one it is a small file's
        read); in async code prefer `await core_async()`, which reads it in a worker thread."""
        if scope is not None and not scope.is_owner:
            return core_for(self._ctx.workspace_root, scope)
        try:
            return WorkspacePaths(self._ctx.workspace_root).core.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    async def core_async(self, *, scope: Scope | None = None) -> str:
        """`core()`, its file read in a worker thread (inline under virtual time, as all of the
        runtime's blocking work): the event loop never waits on the disk for it."""
        return await self._ctx.io(functools.partial(self.core, scope=scope))

    async def forget(
        self,
        *,
        node: str | None = None,
        session: str | None = None,
        match: str | None = None,
        regex: bool = False,
    ) -> ForgetReport:
        """Forget turns from every copy the home keeps (`dagmem forget`): exactly one of `node`
        ("<sid>/<node_id>"), `session` or `match` (literal; a regular expression with `regex`). Returns
        the report; `report.clean` is False if the final scan still found a copy. Raises `InvalidInput`
        for a bad argument (nothing forgotten). The writer runs it between two batches. Never offered
        over MCP."""
        self._check_open()
        ctx = self._ctx
        if not isinstance(ctx.store, FileSessionStore):
            raise InvalidInput("forget needs a home on disk (this runtime's store is not one)")
        home = ctx.home

        def run(workspace: Workspace) -> ForgetReport:
            plan = plan_forget(home, node=node, session=session, match=match, regex=regex)
            report = forget_home(home, plan, fsync=ctx.config.fsync, clock=ctx.epoch, workspace=workspace)
            ctx.recall.forget()  # the index it held was rebuilt from the files: let go before the next install
            return report

        report = await run_on_workspace(ctx, run)
        self._recall = None
        for source in report.targets:
            ctx.store.forget(source.partition("/")[0])
        ctx.emit("forgotten", targets=report.targets, clean=report.clean)
        return report

    async def reorganise(self) -> Reorganised:
        """One consolidation pass now (see `dagmem reorganise`): duplicate blocks merged in one
        transaction, with the runtime's distiller as the judge when it can judge. The writer runs it
        between two batches (the batches due meanwhile wait for it). Raises `WriteFailure`."""
        self._check_open()
        ctx = self._ctx
        result = await run_on_workspace(
            ctx, lambda workspace: reorganise(workspace, judge=ctx.distiller, one_path=one_path_in(ctx.store))
        )
        ctx.emit("reorganised", tx=result.tx, files=list(result.changed), merged=result.merged)
        return result

    async def _reorganise_loop(
        self, schedule: Callable[[float], float | None], scope: anyio.CancelScope
    ) -> None:
        with scope:
            at = schedule(anyio.current_time())
            while at is not None:
                await anyio.sleep_until(at)
                try:
                    await self.reorganise()
                except WriteFailure as failure:  # the code only: a detail may quote a file
                    log.warning(
                        "scheduled reorganise failed: %s (retryable: %s)", failure.code, failure.retryable
                    )
                except ActorStopped:  # the writer died under the pass, and was restarted
                    log.warning("scheduled reorganise stopped with the writer; the next pass is at its time")
                except (RuntimeCrashed, MailboxClosed):
                    return
                at = schedule(anyio.current_time())

    # -- the adapter protocol, for hosts that write their own session files ----------------------------

    async def notify_turn(self, session_id: str, node: Node) -> None:
        """The host wrote `node`'s file itself (in dagmem's node file format): account for it like an append."""
        check_id(session_id, "session id")
        if not isinstance(node, Node):
            raise InvalidInput(f"node must be a dagmem.Node, not {type(node).__name__}")
        # What the archive could not hold would block the branch: refuse it now, with the reason.
        check_content(node.content, f"node {node.id!r}")
        check_metadata(node.metadata)
        await self._request(session_id, AdoptTurn(node))

    async def notify_head(self, session_id: str, node_id: str | None) -> None:
        """The host moved the head in its own `meta.json`."""
        if node_id is not None:
            check_id(node_id, "node id")
        await self._request(session_id, ReloadHead(node_id))

    # -- for tests and the simulator ---------------------------------------------------------------------

    @property
    def workspace_id(self) -> str:
        return self._ctx.workspace_id

    def live_sessions(self) -> list[str]:
        return list(self._sessions)
