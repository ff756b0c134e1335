"""`HomeServer`: the body of a home's Ray actor. It runs the ordinary `dagmem.Runtime` on that home in the
actor's event loop (an async actor), opened on the first call and kept open until `stop`.

Ray restarts the actor's process when it dies (`max_restarts`); the new incarnation opens the runtime again,
which recovers from disk exactly as after any crash (a torn txlog line, a stage, an owed batch), and takes
the serving lock: a second live actor for one home fails to open it at once (`HomeBusy`). A runtime that
dies while serving (its root supervisor gave up) ends the process, so that Ray restarts it fresh."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio

from ..actors import Runtime
from ..memory.durable import read_workspace_id
from ..memory.errors import DagmemError
from ..memory.format import HeadType, HomePaths
from ..memory.write import pending_by_session
from ._ray import require_ray
from ._wire import Reply, failure_of

__all__ = ["HomeServer"]

log = logging.getLogger("dagmem.cluster")

T = TypeVar("T")

# The exit status of an actor process whose runtime died under it: not a clean exit, so Ray restarts it.
EXIT_RUNTIME_DIED = 70


class HomeServer:
    """One home, served. Every method answers a `Reply` (see `_wire`), never raises a dagmem error."""

    def __init__(self, home_id: str, path: str, options: dict[str, Any]) -> None:
        self.home_id = home_id
        self.path = Path(path)
        self.options = options
        self.started_at = time.time()
        self._runtime: Runtime | None = None
        self._opening: asyncio.Future[Runtime] | None = None
        self._stop: asyncio.Event | None = None
        self._serving: asyncio.Task[None] | None = None

    # -- the runtime, kept open in this loop ---------------------------------------------------------

    async def _rt(self) -> Runtime:
        if self._runtime is not None:
            return self._runtime
        if self._opening is None:
            loop = asyncio.get_running_loop()
            self._opening, self._stop = loop.create_future(), asyncio.Event()
            self._serving = loop.create_task(self._serve(self._opening, self._stop))
        opening = self._opening
        try:
            return await asyncio.shield(opening)
        except BaseException:
            if self._opening is opening and opening.done():
                self._opening = None  # it could not open (the home is busy): the next call tries again
            raise

    async def _serve(self, opening: asyncio.Future[Runtime], stop: asyncio.Event) -> None:
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            async with Runtime.open(self.path, **self.options) as rt:
                self._runtime = rt
                opening.set_result(rt)
                await stop.wait()
        except BaseException as exc:
            if not opening.done():
                opening.set_exception(exc)
                return
            if stop.is_set():
                log.warning("home %s: closing its runtime raised %r", self.home_id, exc)
                return
            log.critical("home %s: its runtime died (%r); exiting for Ray to restart it", self.home_id, exc)
            os._exit(EXIT_RUNTIME_DIED)
        finally:
            self._runtime = None

    async def _answer(self, call: Callable[[Runtime], Awaitable[T]]) -> Reply:
        try:
            return ("ok", await call(await self._rt()))
        except DagmemError as exc:
            return ("error", failure_of(exc))

    # -- the runtime's API, with the home id already chosen ------------------------------------------

    async def append(
        self,
        session_id: str,
        role: str,
        content: str,
        *,
        predecessor: str | HeadType | None,
        node_id: str | None,
        metadata: dict[str, Any] | None,
        spawned: bool = False,
        spawned_from: str | None = None,
    ) -> Reply:
        return await self._answer(
            lambda rt: rt.append(
                session_id,
                role,
                content,
                predecessor=predecessor,
                node_id=node_id,
                metadata=metadata,
                spawned=spawned,
                spawned_from=spawned_from,
            )
        )

    async def set_head(self, session_id: str, node_id: str | None) -> Reply:
        return await self._answer(lambda rt: rt.set_head(session_id, node_id))

    async def end_session(self, session_id: str) -> Reply:
        return await self._answer(lambda rt: rt.end_session(session_id))

    async def flush(self, force: bool) -> Reply:
        return await self._answer(lambda rt: rt.flush(force=force))

    async def recall(
        self, query: str, session_id: str | None, tip: str | None, k: int, history: bool = False
    ) -> Reply:
        return await self._answer(
            lambda rt: rt.recall(query, session_id=session_id, tip=tip, k=k, history=history)
        )

    async def core(self) -> Reply:
        async def core(rt: Runtime) -> str:
            return rt.core()

        return await self._answer(core)

    async def status(self) -> Reply:
        async def status(rt: Runtime) -> dict[str, Any]:
            return rt.status().model_dump(mode="json")

        return await self._answer(status)

    # -- for the client and `dagmem cluster status` --------------------------------------------------

    async def info(self) -> dict[str, Any]:
        """Where this home lives and who serves it; its status only when its runtime is open."""
        ray = require_ray()
        runtime = self._runtime
        return {
            "home_id": self.home_id,
            "path": str(self.path),
            "node_id": ray.get_runtime_context().get_node_id(),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started_at": self.started_at,
            "serving": runtime is not None,
            "status": None if runtime is None else runtime.status().model_dump(mode="json"),
        }

    async def owed(self) -> dict[str, int | str]:
        """Records each session of the home still owes, from its files (live or not; read-only)."""
        return await anyio.to_thread.run_sync(_owed, self.path)

    async def stop(self) -> None:
        """Close the runtime cleanly (the client then ends this actor for good); idempotent."""
        if self._stop is not None and self._serving is not None:
            self._stop.set()
            await asyncio.wait({self._serving})


def _owed(home: Path) -> dict[str, int | str]:
    workspace_id = read_workspace_id(HomePaths(home).workspace.workspace_id)
    return pending_by_session(home, workspace_id)
