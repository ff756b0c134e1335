"""The client: `Runtime`'s API with the home id first, each call routed to the Ray actor serving that home
(DESIGN §11).

Homes are served by a fixed pool of actors, `dagmem:actor-<n>` (n < `actors`) in the namespace `dagmem`, each
serving many homes (`HomesServer`); a home goes to the actor that rendezvous hashing picks over the pool, so
every client makes the same choice without coordinating (`actors=None`: one actor per home, named
`dagmem:<home id>`, the layout before pools). Actors are detached (they outlive the client that created
them), created on first use by whichever client gets there first (`get_if_exists`), restarted by Ray when
their process dies (`max_restarts=-1`), and a call one was running is run again on the restarted actor
(`max_task_retries=-1`). So an append may run twice: the client gives every append a node id (the
caller's, or one it makes), and the store makes the same append again a no-op."""

from __future__ import annotations

import contextlib
import dataclasses
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
from ..memory.recall import Hit, RecallQuery
from ..memory.settings import DEFAULTS
from ..memory.store import Turn
from ._actor import DEFAULT_LIMITS, HomesServer
from ._placement import Placements, rendezvous
from ._ray import NAMESPACE, ClusterError, HomeUnavailable, require_ray
from ._wire import raise_failure

__all__ = ["ACTOR_PREFIX", "DEFAULT_ACTORS", "Cluster", "actor_name", "connect"]

ACTOR_PREFIX = "dagmem:"
DEFAULT_ACTORS = 2


def _node_id() -> str:
    """A node id for an append that names none: a retried append must name the node it may have written."""
    return f"c{secrets.token_hex(10)}"


def actor_name(home_id: str, actors: int | None = DEFAULT_ACTORS, node: str | None = None) -> str:
    """The name of the actor that serves `home_id`: one of the pool's `dagmem:actor-<n>` (prefixed by its
    node with local disks), or `dagmem:<home id>` with one actor per home (`actors=None`)."""
    check_id(home_id, "home id")
    if actors is None:
        return f"{ACTOR_PREFIX}{home_id}"
    pool = [f"actor-{n}" for n in range(actors)]
    chosen = rendezvous(home_id, pool)
    return f"{ACTOR_PREFIX}{node[:12]}-{chosen}" if node is not None else f"{ACTOR_PREFIX}{chosen}"


async def connect(
    root: Path | str,
    address: str | None = None,
    *,
    local_disks: bool = False,
    actors: int | None = DEFAULT_ACTORS,
    max_open: int = int(DEFAULT_LIMITS["max_open"]),
    max_rss_mib: float = DEFAULT_LIMITS["max_rss_mib"],
    idle_close_after: float = DEFAULT_LIMITS["idle_close_after"],
    token_threshold: int = DEFAULTS.token_threshold,
    idle_after: float = DEFAULTS.idle_after,
    abandon_after: float = DEFAULTS.abandon_after,
    distiller: str | None = None,
    ray_options: Mapping[str, Any] | None = None,
) -> Cluster:
    """Connect to Ray (`address=None`: a local instance, started now unless this process already runs
    one; "auto" or "host:port": an existing cluster). Homes live at `<root>/<home id>`: on a path every
    node sees, or with `local_disks=True` on the disk of the node each home is pinned to. They are served
    by a pool of `actors` actors (per node, with local disks), each keeping at most `max_open` homes open
    (least recently used closed first, and one more whenever its process is over `max_rss_mib`) and
    closing a home idle for `idle_close_after` seconds; `actors=None`: one actor per home. The runtime
    settings and limits apply to the actors this client creates (an actor already running keeps its own)."""
    ray = require_ray()
    if distiller is not None and not isinstance(distiller, str):
        raise InvalidInput("distiller must be a distiller's name (a Ray actor cannot share an object)")
    if actors is not None and (isinstance(actors, bool) or not isinstance(actors, int) or actors < 1):
        raise InvalidInput(
            f"actors must be a whole number of at least 1 (or None: one per home), not {actors!r}"
        )
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
    limits = {"max_open": max_open, "max_rss_mib": max_rss_mib, "idle_close_after": idle_close_after}
    if actors is None:
        limits["idle_close_after"] = 0  # its own actor: the home stays open, as it always did
    return Cluster(
        ray,
        home_root,
        local_disks=local_disks,
        actors=actors,
        settings=settings,
        limits=limits,
        owns_ray=owns,
    )


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
        actors: int | None = DEFAULT_ACTORS,
        limits: dict[str, float] | None = None,
    ) -> None:
        self._ray = ray
        self.root = root
        self.local_disks = local_disks
        self.actors = actors
        self._settings = settings
        self._limits = dict(limits or {})
        self._owns_ray = owns_ray
        self._server = ray.remote(HomesServer)
        self._handles: dict[str, Any] = {}  # actor name -> handle
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
        origin: str | None = None,
    ) -> str:
        """`Runtime.append` on the home. Without a `node_id` the client makes one (a retried append must
        name the node it may already have written); the same append twice is a no-op."""
        check_id(session_id, "session id")
        turn = Turn(
            role,
            content,
            predecessor=predecessor,
            node_id=node_id if node_id is not None else _node_id(),
            metadata=metadata,
            spawned=spawned,
            spawned_from=spawned_from,
            origin=origin,
        )
        return await self.append_turn(home_id, session_id, turn)

    async def append_turn(self, home_id: str, session_id: str, turn: Turn) -> str:
        """`Runtime.append_turn` on the home: the `Turn` crosses the wire whole (a turn without a node id
        is given one here, as by `append`)."""
        check_id(session_id, "session id")
        if not isinstance(turn, Turn):
            raise InvalidInput(f"turn must be a dagmem.Turn, not {type(turn).__name__}")
        if turn.node_id is None:
            turn = dataclasses.replace(turn, node_id=_node_id())
        result = await self._call(home_id, "append", session_id, turn)
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
        asked = RecallQuery(query, session_id=session_id, tip=tip, k=k, history=history)
        return await self.recall_query(home_id, asked)

    async def recall_query(self, home_id: str, query: RecallQuery) -> list[Hit]:
        """`Runtime.recall_query` on the home: the `RecallQuery` crosses the wire whole."""
        if not isinstance(query, RecallQuery):
            raise InvalidInput(f"query must be a dagmem.RecallQuery, not {type(query).__name__}")
        hits = await self._call(home_id, "recall", query)
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

    async def _actor_handles(self) -> dict[str, Any]:
        """Every dagmem actor alive (or restarting) in the namespace, by name."""
        named = await anyio.to_thread.run_sync(lambda: self._ray.util.list_named_actors(all_namespaces=True))
        names = sorted(
            entry["name"]
            for entry in named
            if entry["namespace"] == NAMESPACE and entry["name"].startswith(ACTOR_PREFIX)
        )

        def lookup() -> dict[str, Any]:
            out: dict[str, Any] = {}
            for name in names:
                with contextlib.suppress(ValueError):  # it ended between the listing and the lookup
                    out[name] = self._ray.get_actor(name, namespace=NAMESPACE)
            return out

        return await anyio.to_thread.run_sync(lookup)

    async def homes(self) -> list[str]:
        """The homes served now (open in an actor), sorted."""
        found: set[str] = set()
        for handle in (await self._actor_handles()).values():
            with contextlib.suppress(self._ray.exceptions.RayError):
                found.update(await self._get(handle.served.remote()))
        return sorted(found)

    async def describe(self) -> list[dict[str, Any]]:
        """Every served home: where it lives (node, host, pid, path), its runtime's status, and what each of
        its sessions owes, read from its files. A home that does not answer says why."""
        out: dict[str, dict[str, Any]] = {}

        async def one(handle: Any, home_id: str) -> None:
            try:
                with anyio.fail_after(60):
                    info: dict[str, Any] = await self._get(handle.info.remote(home_id))
                    owed: dict[str, int | str] = await self._get(handle.owed.remote(home_id))
            except (TimeoutError, self._ray.exceptions.RayError) as exc:
                out[home_id] = {"home_id": home_id, "error": f"{type(exc).__name__}: {exc}"}
                return
            info["sessions"] = owed
            info["pending_turns"] = sum(v for v in owed.values() if isinstance(v, int))
            out[home_id] = info

        async def actor(handle: Any) -> None:
            try:
                with anyio.fail_after(60):
                    served: list[str] = await self._get(handle.served.remote())
            except (TimeoutError, self._ray.exceptions.RayError):
                return
            async with anyio.create_task_group() as tg:
                for home_id in served:
                    tg.start_soon(one, handle, home_id)

        async with anyio.create_task_group() as tg:
            for handle in (await self._actor_handles()).values():
                tg.start_soon(actor, handle)
        return [out[home_id] for home_id in sorted(out)]

    async def info(self, home_id: str) -> dict[str, Any]:
        """Where the home lives and who serves it: node, host, pid, path, the actor's name, and its status
        when open (asking never opens it)."""
        name, handle = await self._handle(home_id)
        info: dict[str, Any] = await self._get(handle.info.remote(home_id))
        info["actor"] = name
        return info

    async def stats(self) -> dict[str, dict[str, Any]]:
        """Each actor's open homes, memory and close counts, by actor name."""
        out: dict[str, dict[str, Any]] = {}
        for name, handle in (await self._actor_handles()).items():
            out[name] = await self._get(handle.stats.remote())
        return out

    async def stop(self, home_id: str) -> None:
        """Close the home's runtime cleanly (after a boundary write); with one actor per home, end that
        actor too (the next call starts a new one)."""
        name, handle = await self._handle(home_id)
        with contextlib.suppress(self._ray.exceptions.RayActorError):  # it had ended already
            await self._get(handle.stop.remote(home_id))
        if self.actors is None:
            self._handles.pop(name, None)
            # Ended from outside, not by `exit_actor` inside a call (which Ray would retry, the call having
            # not returned): its runtime is closed, so this kill loses nothing.
            await anyio.to_thread.run_sync(lambda: self._ray.kill(handle, no_restart=True))

    async def move(self, home_id: str, node_id: str) -> None:
        """With local disks: the home lives on `node_id` from now on. Stop it and copy its files
        (`home_path`) to that node first; a home that is served is refused."""
        check_id(home_id, "home id")
        if not self.local_disks:
            raise InvalidInput("on a shared root a home is not pinned: Ray runs its actor anywhere")
        if not await anyio.to_thread.run_sync(self._placements.is_alive, node_id):
            raise HomeUnavailable(f"node {node_id!r} is not alive")
        if home_id in await self.homes():
            raise ClusterError(f"home {home_id!r} is served: stop it first (and copy its files)")
        await anyio.to_thread.run_sync(self._placements.record, home_id, node_id)

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
        """Run `method` for the home on its actor. An actor that ended for good (stopped, or out of
        restarts) is made again once: every call is safe to repeat."""
        for attempt in range(2):
            name, handle = await self._handle(home_id)
            try:
                tag, value = await self._get(getattr(handle, method).remote(home_id, *args, **kwargs))
            except self._ray.exceptions.RayActorError as exc:
                if self._handles.get(name) is handle:
                    del self._handles[name]
                if attempt:
                    raise ClusterError(
                        f"home {home_id!r}: its actor died and could not be made again: {exc}"
                    ) from None
                continue
            if tag == "error":
                raise_failure(value)
            return value
        raise AssertionError("unreachable")

    async def _handle(self, home_id: str) -> tuple[str, Any]:
        """The name and handle of the actor that serves the home (made now if there is none)."""
        check_id(home_id, "home id")
        node = None
        if self.local_disks:
            node = await anyio.to_thread.run_sync(self._placements.node_of, home_id)
        name = actor_name(home_id, self.actors, node)
        handle = self._handles.get(name)
        if handle is not None:
            return name, handle
        lock = self._creating.setdefault(name, anyio.Lock())
        async with lock:
            if name in self._handles:
                return name, self._handles[name]
            made = await anyio.to_thread.run_sync(self._create, home_id, name, node)
            where = await self._get(made.where.remote())
            if where["root"] != str(self.root):
                raise ClusterError(
                    f"home {home_id!r} is served by {name}, whose root is {where['root']}, not {self.root}: "
                    "that actor was made by a client with another root"
                )
            self._handles[name] = made
            return name, made

    def _create(self, home_id: str, name: str, node: str | None) -> Any:
        """The actor: the live one, or a new one (blocking: run in a thread)."""
        options: dict[str, Any] = {
            "name": name,
            "namespace": NAMESPACE,
            "lifetime": "detached",
            "get_if_exists": True,
            "max_restarts": -1,
            "max_task_retries": -1,
            "num_cpus": 0,  # homes wait on disks, not CPUs: a node serves many
            "scheduling_strategy": "SPREAD",
        }
        if node is not None:
            if not self._placements.is_alive(node):
                raise HomeUnavailable(
                    f"home {home_id!r} lives on node {node}, which is not alive: its files are on that "
                    "node's disk (start it again, or copy them elsewhere and `move` the home)"
                )
            strategies = self._ray.util.scheduling_strategies
            options["scheduling_strategy"] = strategies.NodeAffinitySchedulingStrategy(node, soft=False)
        args = (str(self.root), self._settings, self._limits)
        try:
            return self._server.options(**options).remote(*args)
        except ValueError:  # another client made it between our lookup and our creation
            return self._ray.get_actor(name, namespace=NAMESPACE)

    async def _get(self, ref: Any) -> Any:
        if sniffio.current_async_library() == "asyncio":
            return await ref
        return await anyio.to_thread.run_sync(
            self._ray.get, ref, abandon_on_cancel=True, limiter=self._limiter
        )
