"""`HomesServer`: the body of a dagmem Ray actor. It serves many homes, each with the ordinary
`dagmem.Runtime` in the actor's event loop (an async actor): a home's runtime is opened on its first call,
kept open while it is used, and closed, after a boundary write (`flush(force=True)`: nothing it was told
stays owed), when it has been idle for `idle_close_after` seconds or when the actor holds more open homes
than it may (LRU, by count and by memory); the next call opens it again. The embedding model and the
tokenizer are module-level caches, loaded once per process and shared by every home in it.

A home is served by one runtime at a time: `Runtime.open` takes the home's serving lock (an `flock`), so a
second actor (or a second open in this one) fails at once with `HomeBusy`. Ray restarts the actor's
process when it dies (`max_restarts`); the new incarnation opens each home again on its next call, which
recovers from disk exactly as after any crash (a torn txlog line, a stage, an owed batch). A home whose
runtime dies under it (its root supervisor gave up) is dropped from the actor, its lock released, and
opened fresh on its next call; the actor's other homes are not touched."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio

from ..actors import Runtime
from ..memory.durable import read_workspace_id
from ..memory.errors import DagmemError
from ..memory.format import HomePaths, check_id
from ..memory.recall import RecallQuery
from ..memory.store import Turn
from ..memory.write import pending_by_session
from ._ray import require_ray
from ._wire import Reply, failure_of

__all__ = ["DEFAULT_LIMITS", "HomesServer"]

log = logging.getLogger("dagmem.cluster")

T = TypeVar("T")

#: How many homes an actor keeps open (LRU), the memory (its process's RSS) above which it closes its least
#: recently used home when it opens another, and the idle time after which it closes a home.
DEFAULT_LIMITS: dict[str, float] = {"max_open": 512, "max_rss_mib": 2048, "idle_close_after": 300.0}


@dataclass
class _Home:
    """One home in the actor: its runtime once open, the calls in flight, when it was last used."""

    opened: asyncio.Future[Runtime]
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    serving: asyncio.Task[None] | None = None
    busy: int = 0
    last_used: float = field(default_factory=time.monotonic)


class HomesServer:
    """Many homes, served. Every method answers a `Reply` (see `_wire`), never raises a dagmem error."""

    def __init__(self, root: str, options: dict[str, Any], limits: dict[str, float] | None = None) -> None:
        self.root = Path(root)
        self.options = options
        limits = {**DEFAULT_LIMITS, **(limits or {})}
        self.max_open = max(1, int(limits["max_open"]))
        self.max_rss = int(limits["max_rss_mib"] * 1024 * 1024)
        self.idle_close_after = float(limits["idle_close_after"])
        self.started_at = time.time()
        self._homes: OrderedDict[str, _Home] = OrderedDict()  # least recently used first
        self._closing: dict[str, asyncio.Task[None]] = {}
        self._reaper: asyncio.Task[None] | None = None
        self.counts = {"opened": 0, "closed_idle": 0, "closed_lru": 0, "closed_memory": 0, "died": 0}

    # -- homes, opened on demand and closed when idle or crowded out ---------------------------------

    def path(self, home_id: str) -> Path:
        return self.root / check_id(home_id, "home id")

    async def _use(self, home_id: str, call: Callable[[Runtime], Awaitable[T]]) -> T:
        self.path(home_id)
        while True:
            home = self._homes.get(home_id)
            if home is None:
                home = await self._open(home_id)
            home.busy += 1
            home.last_used = time.monotonic()
            self._homes.move_to_end(home_id)
            try:
                runtime = await asyncio.shield(home.opened)
            except BaseException:
                if self._homes.get(home_id) is home and home.opened.done():
                    del self._homes[home_id]  # it could not open (busy elsewhere): the next call tries again
                raise
            finally:
                home.busy -= 1
            if self._homes.get(home_id) is not home:
                continue  # closed while this call waited for it: open it again
            home.busy += 1
            try:
                return await call(runtime)
            finally:
                home.busy -= 1
                home.last_used = time.monotonic()

    async def _open(self, home_id: str) -> _Home:
        closing = self._closing.get(home_id)
        if closing is not None:  # its lock is released when its close ends: then it can open again
            await asyncio.shield(closing)
        home = self._homes.get(home_id)
        if home is not None:
            return home
        loop = asyncio.get_running_loop()
        home = _Home(loop.create_future())
        self._homes[home_id] = home
        home.serving = loop.create_task(self._serve(home_id, home))
        self.counts["opened"] += 1
        if self._reaper is None and self.idle_close_after > 0:
            self._reaper = loop.create_task(self._close_idle())
        self._make_room(but=home_id)
        return home

    def _make_room(self, but: str) -> None:
        """Close the least recently used homes (none with a call in flight) beyond `max_open`, and one more
        while the process is over its memory budget."""
        over = len(self._homes) - self.max_open
        idle = [home_id for home_id, home in self._homes.items() if home_id != but and home.busy == 0]
        for home_id in idle[: max(0, over)]:
            self._close(home_id, "closed_lru")
        if len(self._homes) > 1 and _rss() > self.max_rss:
            rest = idle[max(0, over) :]
            if rest:
                self._close(rest[0], "closed_memory")

    def _close(self, home_id: str, why: str) -> asyncio.Task[None] | None:
        home = self._homes.pop(home_id, None)
        if home is None or home.serving is None:
            return self._closing.get(home_id)
        self.counts[why] = self.counts.get(why, 0) + 1
        home.stop.set()
        serving = home.serving

        async def closed() -> None:
            with contextlib.suppress(BaseException):
                await asyncio.wait({serving})
            if self._closing.get(home_id) is task:
                del self._closing[home_id]

        task = asyncio.get_running_loop().create_task(closed())
        self._closing[home_id] = task
        return task

    async def _close_idle(self) -> None:
        while True:
            await asyncio.sleep(max(0.05, min(self.idle_close_after / 4, 30.0)))
            now = time.monotonic()
            for home_id, home in list(self._homes.items()):
                if home.busy == 0 and now - home.last_used >= self.idle_close_after:
                    self._close(home_id, "closed_idle")

    async def _serve(self, home_id: str, home: _Home) -> None:
        try:
            path = self.path(home_id)
            await anyio.to_thread.run_sync(lambda: path.mkdir(parents=True, exist_ok=True))
            async with Runtime.open(path, **self.options) as rt:
                home.opened.set_result(rt)
                await home.stop.wait()
                # The boundary write: what the home was told is written before it closes.
                await rt.flush(force=True)
        except BaseException as exc:
            if not home.opened.done():
                home.opened.set_exception(exc)
                return
            if home.stop.is_set():
                log.warning("home %s: closing its runtime raised %r", home_id, exc)
                return
            log.critical("home %s: its runtime died (%r); it is opened again on its next call", home_id, exc)
            self.counts["died"] += 1
            if self._homes.get(home_id) is home:
                del self._homes[home_id]

    async def _answer(self, home_id: str, call: Callable[[Runtime], Awaitable[T]]) -> Reply:
        try:
            return ("ok", await self._use(home_id, call))
        except DagmemError as exc:
            return ("error", failure_of(exc))

    # -- the runtime's API, the home id first --------------------------------------------------------

    async def append(self, home_id: str, session_id: str, turn: Turn) -> Reply:
        return await self._answer(home_id, lambda rt: rt.append_turn(session_id, turn))

    async def set_head(self, home_id: str, session_id: str, node_id: str | None) -> Reply:
        return await self._answer(home_id, lambda rt: rt.set_head(session_id, node_id))

    async def end_session(self, home_id: str, session_id: str) -> Reply:
        return await self._answer(home_id, lambda rt: rt.end_session(session_id))

    async def flush(self, home_id: str, force: bool) -> Reply:
        return await self._answer(home_id, lambda rt: rt.flush(force=force))

    async def recall(self, home_id: str, query: RecallQuery) -> Reply:
        return await self._answer(home_id, lambda rt: rt.recall_query(query))

    async def core(self, home_id: str) -> Reply:
        async def core(rt: Runtime) -> str:
            return await rt.core_async()

        return await self._answer(home_id, core)

    async def status(self, home_id: str) -> Reply:
        async def status(rt: Runtime) -> dict[str, Any]:
            return rt.status().model_dump(mode="json")

        return await self._answer(home_id, status)

    # -- for the client, `dagmem cluster status` and the benchmarks ----------------------------------

    async def where(self) -> dict[str, Any]:
        """This actor: its root, node, host, pid and when it started."""
        ray = require_ray()
        return {
            "root": str(self.root),
            "node_id": ray.get_runtime_context().get_node_id(),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started_at": self.started_at,
        }

    async def info(self, home_id: str) -> dict[str, Any]:
        """Where the home lives and who serves it; its status only when its runtime is open (never opens it)."""
        home = self._homes.get(home_id)
        runtime = (
            home.opened.result()
            if home is not None and home.opened.done() and not home.opened.exception()
            else None
        )
        return {
            **await self.where(),
            "home_id": home_id,
            "path": str(self.path(home_id)),
            "serving": runtime is not None,
            "status": None if runtime is None else runtime.status().model_dump(mode="json"),
        }

    async def served(self) -> list[str]:
        """The homes open in this actor now."""
        return sorted(self._homes)

    async def owed(self, home_id: str) -> dict[str, int | str]:
        """Records each session of the home still owes, from its files (open or not; read-only)."""
        return await anyio.to_thread.run_sync(_owed, self.path(home_id))

    async def stop(self, home_id: str) -> None:
        """Close the home's runtime cleanly (after a boundary write); idempotent."""
        task = self._close(home_id, "closed_stop")
        if task is not None:
            await asyncio.shield(task)

    async def close_all(self) -> int:
        """Close every open home (each after a boundary write); how many were open."""
        tasks = [task for home_id in list(self._homes) if (task := self._close(home_id, "closed_stop"))]
        if tasks:
            await asyncio.wait(tasks)
        return len(tasks)

    async def stats(self) -> dict[str, Any]:
        """Open homes, the process's memory (RSS and PSS, bytes) and descriptors, and the close counts."""
        return {
            "open": len(self._homes),
            "rss": _rss(),
            "pss": _pss(),
            "fds": _fds(),
            "counts": dict(self.counts),
            "pid": os.getpid(),
        }


def _rss() -> int:
    """This process's resident set size in bytes (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _fds() -> int | None:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return None


def _pss() -> int | None:
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _owed(home: Path) -> dict[str, int | str]:
    workspace_id = read_workspace_id(HomePaths(home).workspace.workspace_id)
    return pending_by_session(home, workspace_id)
