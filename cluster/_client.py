"""The client: `Runtime`'s API with the home id first, each call routed to that home's Ray actor (DESIGN §11).

A home's actor is named `dagmem:<home id>` in the namespace `dagmem`, detached (it outlives the client that
created it), created on first use by whichever client gets there first (`get_if_exists`), restarted by Ray
when its process dies (`max_restarts=-1`), and a call it was running is run again on the restarted actor
(`max_task_retries=-1`). So an append may run twice: the client gives every append a node id (the caller's,
or one it makes), and the store makes the same append again a no-op."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

import anyio
import sniffio

from ..actors import RuntimeStatus
from ..memory.errors import InvalidInput
from ..memory.format import HEAD, HeadType, Role, check_id
from ..memory.recall import Hit
from ..memory.settings import DEFAULTS
from ..memory.store import check_append_args
from ._actor import HomeServer
from ._placement import Placements
from ._ray import NAMESPACE, ClusterError, HomeUnavailable, require_ray
from ._wire import raise_failure

__all__ = ["ACTOR_PREFIX", "Cluster", "actor_name", "connect"]

ACTOR_PREFIX = "dagmem:"


def actor_name(home_id: str) -> str:
    return f"{ACTOR_PREFIX}{home_id}"


async def connect(
    root: Path | str,
    address: str | None = None,
    *,
    local_disks: bool = False,
    token_threshold: int = DEFAULTS.token_threshold,
    idle_after: float = DEFAULTS.idle_after,
    abandon_after: float = DEFAULTS.abandon_after,
    distiller: str | None = None,
    ray_options: Mapping[str, Any] | None = None,
) -> Cluster:
    """Connect to Ray (`address=None`: a local instance, started now unless this process already runs
    one; "auto" or "host:port": an existing cluster). Homes live at `<root>/<home id>`: on a path every
    node sees, or with `local_disks=True` on the disk of the node each home is pinned to. The runtime
    settings apply to the homes this client creates (an actor already running keeps its own)."""
    ray = require_ray()
    if distiller is not None and not isinstance(distiller, str):
        raise InvalidInput("distiller must be a distiller's name (a Ray actor cannot share an object)")
    home_root = _absolute(root)
    owns = False
    if not ray.is_initialized():
        # A local instance talks over loopback only, never the machine's other addresses.
        options: dict[str, Any] = (
            {"include_dashboard": False, "_node_ip_address": "127.0.0.1"} if address is None else {}
        )
        options.update(ray_options or {})
        try:
            await anyio.to_thread.run_sync(lambda: ray.init(address=address, namespace=NAMESPACE, **options))
        except ConnectionError as exc:
            raise ClusterError(f"no Ray cluster at {address!r}: {exc}") from None
        owns = True
    settings: dict[str, Any] = {
        "token_threshold": token_threshold,
        "idle_after": idle_after,
        "abandon_after": abandon_after,
    }
    if distiller is not None:
        settings["distiller"] = distiller
    return Cluster(ray, home_root, local_disks=local_disks, settings=settings, owns_ray=owns)


def _absolute(root: Path | str) -> Path:
    # The actors run elsewhere (another cwd, another node): a relative root means this process's.
    return Path(os.path.abspath(os.path.expanduser(root)))


class Cluster:
    """Homes served by Ray actors. Safe to share between the tasks of one event loop."""

    def __init__(
        self,
        ray: ModuleType,
        root: Path,
        *,
        local_disks: bool,
        settings: dict[str, Any],
        owns_ray: bool,
    ) -> None:
        self._ray = ray
        self.root = root
        self.local_disks = local_disks
        self._settings = settings
        self._owns_ray = owns_ray
        self._server = ray.remote(HomeServer)
        self._handles: dict[str, Any] = {}
        self._creating: dict[str, anyio.Lock] = {}
        self._placements = Placements(ray)
        self._limiter = anyio.CapacityLimiter(256)  # threads waiting on Ray, when the loop is not asyncio

    # -- the runtime's API -----------------------------------------------------------------------------

    async def append(
        self,
        home_id: str,
        session_id: str,
        role: Role | str,
        content: str,
        *,
        predecessor: str | HeadType | None = HEAD,
        node_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        spawned: bool = False,
        spawned_from: str | None = None,
    ) -> str:
        """`Runtime.append` on the home. Without a `node_id` the client makes one (a retried append must
        name the node it may already have written); the same append twice is a no-op."""
        checked_role, text, clean = check_append_args(
            session_id,
            role,
            content,
            predecessor=predecessor,
            node_id=node_id,
            metadata=metadata,
            spawned=spawned,
            spawned_from=spawned_from,
        )
        node_id = node_id if node_id is not None else f"c{secrets.token_hex(10)}"
        result = await self._call(
            home_id,
            "append",
            session_id,
            checked_role.value,
            text,
            predecessor=predecessor,
            node_id=node_id,
            metadata=clean or None,
            spawned=spawned,
            spawned_from=spawned_from,
        )
        assert isinstance(result, str)
        return result

    async def set_head(self, home_id: str, session_id: str, node_id: str | None) -> None:
        check_id(session_id, "session id")
        await self._call(home_id, "set_head", session_id, node_id)

    async def end_session(self, home_id: str, session_id: str) -> None:
        check_id(session_id, "session id")
        await self._call(home_id, "end_session", session_id)

    async def flush(self, home_id: str, force: bool = False) -> None:
        await self._call(home_id, "flush", bool(force))

    async def recall(
        self,
        home_id: str,
        query: str,
        session_id: str | None = None,
        tip: str | None = None,
        k: int = 5,
        *,
        history: bool = False,
    ) -> list[Hit]:
        """`Runtime.recall` on the home: its `k` best blocks (branch-aware with a session), as `Hit`s,
        each with its status; `history` ranks superseded and left blocks by relevance too."""
        hits = await self._call(home_id, "recall", query, session_id, tip, k, history)
        assert isinstance(hits, list)
        return hits

    async def core(self, home_id: str) -> str:
        text = await self._call(home_id, "core")
        assert isinstance(text, str)
        return text

    async def status(self, home_id: str) -> RuntimeStatus:
        return RuntimeStatus.model_validate(await self._call(home_id, "status"))

    def home_path(self, home_id: str) -> Path:
        """Where the home's files are (on the node it lives on, with local disks)."""
        check_id(home_id, "home id")
        return self.root / home_id

    # -- the cluster's own -----------------------------------------------------------------------------

    async def homes(self) -> list[str]:
        """The homes served now (each has a live or restarting actor), sorted."""
        named = await anyio.to_thread.run_sync(lambda: self._ray.util.list_named_actors(all_namespaces=True))
        return sorted(
            entry["name"][len(ACTOR_PREFIX) :]
            for entry in named
            if entry["namespace"] == NAMESPACE and entry["name"].startswith(ACTOR_PREFIX)
        )

    async def describe(self) -> list[dict[str, Any]]:
        """Every served home: where it lives (node, host, pid, path), its runtime's status, and what each of
        its sessions owes, read from its files. A home that does not answer says why."""

        async def one(home_id: str) -> dict[str, Any]:
            try:
                handle = await anyio.to_thread.run_sync(
                    lambda: self._ray.get_actor(actor_name(home_id), namespace=NAMESPACE)
                )
                with anyio.fail_after(60):
                    info: dict[str, Any] = await self._get(handle.info.remote())
                    owed: dict[str, int | str] = await self._get(handle.owed.remote())
            except (ValueError, TimeoutError, self._ray.exceptions.RayError) as exc:
                return {"home_id": home_id, "error": f"{type(exc).__name__}: {exc}"}
            info["sessions"] = owed
            info["pending_turns"] = sum(v for v in owed.values() if isinstance(v, int))
            return info

        out: dict[str, dict[str, Any]] = {}

        async def into(home_id: str) -> None:
            out[home_id] = await one(home_id)

        async with anyio.create_task_group() as tg:
            for home_id in await self.homes():
                tg.start_soon(into, home_id)
        return [out[home_id] for home_id in sorted(out)]

    async def info(self, home_id: str) -> dict[str, Any]:
        """Where the home lives and who serves it: node, host, pid, path, and its status when open."""
        handle = await self._handle(home_id)
        info: dict[str, Any] = await self._get(handle.info.remote())
        return info

    async def stop(self, home_id: str) -> None:
        """Close the home's runtime cleanly and end its actor (the next call starts a new one)."""
        handle = await self._handle(home_id)
        self._handles.pop(home_id, None)
        with contextlib.suppress(self._ray.exceptions.RayActorError):  # it had ended already
            await self._get(handle.stop.remote())
        # Ended from outside, not by `exit_actor` inside a call (which Ray would retry, the call having
        # not returned): its runtime is closed, so this kill loses nothing.
        await anyio.to_thread.run_sync(lambda: self._ray.kill(handle, no_restart=True))

    async def move(self, home_id: str, node_id: str) -> None:
        """With local disks: the home lives on `node_id` from now on. Stop its actor and copy its files
        (`home_path`) to that node first; a home that is served is refused."""
        check_id(home_id, "home id")
        if not self.local_disks:
            raise InvalidInput("on a shared root a home is not pinned: Ray runs its actor anywhere")
        if not await anyio.to_thread.run_sync(self._placements.is_alive, node_id):
            raise HomeUnavailable(f"node {node_id!r} is not alive")
        if home_id in await self.homes():
            raise ClusterError(f"home {home_id!r} is served: stop it first (and copy its files)")
        await anyio.to_thread.run_sync(self._placements.record, home_id, node_id)
        self._handles.pop(home_id, None)

    async def close(self) -> None:
        """Forget the actors (they keep serving); shut down the local Ray instance this client started."""
        self._handles.clear()
        if self._owns_ray:
            self._owns_ray = False
            await anyio.to_thread.run_sync(self._ray.shutdown)

    async def __aenter__(self) -> Cluster:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # -- routing ---------------------------------------------------------------------------------------

    async def _call(self, home_id: str, method: str, *args: Any, **kwargs: Any) -> Any:
        """Run `method` on the home's actor. An actor that ended for good (stopped, or out of restarts) is
        made again once: every call is safe to repeat."""
        for attempt in range(2):
            handle = await self._handle(home_id)
            try:
                tag, value = await self._get(getattr(handle, method).remote(*args, **kwargs))
            except self._ray.exceptions.RayActorError as exc:
                if self._handles.get(home_id) is handle:
                    del self._handles[home_id]
                if attempt:
                    raise ClusterError(
                        f"home {home_id!r}: its actor died and could not be made again: {exc}"
                    ) from None
                continue
            if tag == "error":
                raise_failure(value)
            return value
        raise AssertionError("unreachable")

    async def _handle(self, home_id: str) -> Any:
        check_id(home_id, "home id")
        handle = self._handles.get(home_id)
        if handle is not None:
            return handle
        lock = self._creating.setdefault(home_id, anyio.Lock())
        async with lock:
            if home_id in self._handles:
                return self._handles[home_id]
            made = await anyio.to_thread.run_sync(self._create, home_id)
            info = await self._get(made.info.remote())
            if info["path"] != str(self.home_path(home_id)):
                raise ClusterError(
                    f"home {home_id!r} is served from {info['path']}, not {self.home_path(home_id)}: "
                    "its actor was made by a client with another root"
                )
            self._handles[home_id] = made
            return made

    def _create(self, home_id: str) -> Any:
        """The home's actor: the live one, or a new one (blocking: run in a thread)."""
        options: dict[str, Any] = {
            "name": actor_name(home_id),
            "namespace": NAMESPACE,
            "lifetime": "detached",
            "get_if_exists": True,
            "max_restarts": -1,
            "max_task_retries": -1,
            "num_cpus": 0,  # homes wait on disks, not CPUs: a node serves many
            "scheduling_strategy": "SPREAD",
        }
        if self.local_disks:
            node = self._placements.node_of(home_id)
            if not self._placements.is_alive(node):
                raise HomeUnavailable(
                    f"home {home_id!r} lives on node {node}, which is not alive: its files are on that "
                    "node's disk (start it again, or copy them elsewhere and `move` the home)"
                )
            strategies = self._ray.util.scheduling_strategies
            options["scheduling_strategy"] = strategies.NodeAffinitySchedulingStrategy(node, soft=False)
        args = (home_id, str(self.home_path(home_id)), self._settings)
        try:
            return self._server.options(**options).remote(*args)
        except ValueError:  # another client made it between our lookup and our creation
            return self._ray.get_actor(actor_name(home_id), namespace=NAMESPACE)

    async def _get(self, ref: Any) -> Any:
        if sniffio.current_async_library() == "asyncio":
            return await ref
        return await anyio.to_thread.run_sync(
            self._ray.get, ref, abandon_on_cancel=True, limiter=self._limiter
        )
