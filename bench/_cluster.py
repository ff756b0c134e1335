"""`dagmem bench cluster`: turns/s through the cluster with 1, 2 and 4 home actors, beside the in-process
runtime on the same workload, and the latency an append gains by crossing to an actor.

The workload is `cluster._load.drive`: eight client tasks at once over the homes' branching sessions
(continuing heads, forking, moving heads back), with the same seed for both sides, then a forced flush of
every home (so the figure includes writing the memory: archive, install, mark). The in-process side opens
one `Runtime` per home in this process; the cluster side a local Ray instance (2 CPUs, no dashboard, a
100 MiB object store) with one actor per home. Latency: one task appending one turn at a time to one home.
Needs Ray (`pip install 'dagmem[ray]'`); without it the lines say "not measured"."""

from __future__ import annotations

import contextlib
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from ..actors import Runtime
from ..memory.format import HEAD, HeadType, HomePaths

__all__ = ["HOME_COUNTS", "run"]

HOME_COUNTS = (1, 2, 4)
MIB = 1024 * 1024
POOL_HOMES, QUICK_POOL_HOMES = 1_000, 40
POOL_ACTORS = 2
COLD_HOMES, QUICK_COLD_HOMES = 100, 10
POOL_KILLS, QUICK_POOL_KILLS = 10, 2
TASKS = 8
THRESHOLD = 1_000  # tokens: a batch every ~50 turns of the workload, so writes run during the load
TURNS, QUICK_TURNS = 1_600, 320  # per configuration
LATENCY_TURNS, QUICK_LATENCY_TURNS = 300, 100


class InProcess:
    """The drive target over one `Runtime` per home, in this process."""

    def __init__(self, runtimes: dict[str, Runtime]) -> None:
        self.runtimes = runtimes

    async def append(
        self,
        home_id: str,
        session_id: str,
        role: str,
        content: str,
        *,
        predecessor: str | HeadType | None = HEAD,
        node_id: str | None = None,
    ) -> str:
        return await self.runtimes[home_id].append(
            session_id, role, content, predecessor=predecessor, node_id=node_id
        )

    async def set_head(self, home_id: str, session_id: str, node_id: str | None) -> None:
        await self.runtimes[home_id].set_head(session_id, node_id)

    async def flush(self, home_id: str, force: bool = False) -> None:
        await self.runtimes[home_id].flush(force=force)


async def _timed(target: Any, homes: list[str], turns: int) -> dict[str, Any]:
    from ..cluster import drive

    started = time.perf_counter()
    load = await drive(target, homes, sessions=2, tasks=TASKS, turns=turns // TASKS, seed=16)
    appended = time.perf_counter() - started
    for home in homes:
        await target.flush(home, force=True)
    total = time.perf_counter() - started
    return {
        "turns": load.turns,
        "append_s": round(appended, 3),
        "total_s": round(total, 3),
        "turns_per_s": round(load.turns / total, 1),
    }


async def _latency(root: Path, turns: int) -> dict[str, dict[str, float]]:
    """One turn at a time to one home, in process and through an actor alternately (side by side, so the
    machine's noise falls on both alike)."""
    from .. import cluster

    samples: dict[str, list[float]] = {"in_process": [], "cluster": []}
    client = await cluster.connect(root / "cluster", actors=None, token_threshold=THRESHOLD)
    try:
        async with Runtime.open(root / "local" / "lat", token_threshold=THRESHOLD) as rt:
            targets: dict[str, Any] = {"in_process": InProcess({"lat": rt}), "cluster": client}
            for k in range(turns + 10):  # the first ten warm both up
                for name, target in targets.items():
                    started = time.perf_counter()
                    await target.append("lat", "latency", "user" if k % 2 else "assistant", f"turn {k}")
                    if k >= 10:
                        samples[name].append((time.perf_counter() - started) * 1000)
        await client.stop("lat")
    finally:
        await client.close()
    out = {}
    for name, values in samples.items():
        values.sort()
        out[name] = {
            "p50_ms": round(statistics.median(values), 3),
            "p99_ms": round(values[min(len(values) - 1, int(len(values) * 0.99))], 3),
        }
    return out


async def _in_process(root: Path, homes: list[str], turns: int) -> dict[str, Any]:
    async with contextlib.AsyncExitStack() as stack:
        runtimes = {
            home: await stack.enter_async_context(Runtime.open(root / home, token_threshold=THRESHOLD))
            for home in homes
        }
        return await _timed(InProcess(runtimes), homes, turns)


async def _through_cluster(root: Path, homes: list[str], turns: int) -> dict[str, Any]:
    from .. import cluster

    client = await cluster.connect(root, actors=None, token_threshold=THRESHOLD)
    try:
        first_calls = []
        for home in homes:  # the actors are up (and their runtimes open) before the clock starts
            started = time.perf_counter()
            await client.status(home)
            first_calls.append(time.perf_counter() - started)
        out = await _timed(client, homes, turns)
        out["first_call_s"] = round(max(first_calls), 3)  # create the actor, start its process, open
        pids = [(await client.info(home))["pid"] for home in homes]
        out["actor_pss_mib"] = round(max([await anyio.to_thread.run_sync(_pss_mib, pid) for pid in pids]), 1)
        return out
    finally:
        for home in homes:
            await client.stop(home)
        await client.close()


async def _pool(
    root: Path, homes: int, actors: int, *, cold: int, latency_turns: int, kills: int
) -> dict[str, Any]:
    """Many homes through a pool of `actors` actors: every home written (an append and a forced flush each)
    and verified (the oracle of `dagmem verify --strict`); the actors' memory with every home open and
    after closing them all; the first append to a cold home (its actor up, the home not open); append
    latency beside one home per actor; then the fault run over every home (actors SIGKILLed at random)."""
    from .. import cluster
    from ..cluster import Load, audit, fault_run

    names = [f"home{k:05d}" for k in range(homes)]
    out: dict[str, Any] = {"homes": homes, "actors": actors}
    client = await cluster.connect(root / "pool", actors=actors, max_open=homes, token_threshold=THRESHOLD)
    single = await cluster.connect(root / "single", actors=None, token_threshold=THRESHOLD)
    try:
        # The actors up, each with one home of its own open (the model loaded), before anything is timed.
        warm: dict[str, str] = {}
        for k in itertools.count():
            warm.setdefault(cluster.actor_name(f"warm{k}", actors), f"warm{k}")
            if len(warm) == actors:
                break
        for home in warm.values():
            await client.status(home)
        base = await client.stats()
        load = Load()
        started = time.perf_counter()

        async def write(batch: list[str]) -> None:
            for name in batch:
                node = await client.append(name, "s", "user", f"the first turn of {name}: trams and harbours")
                load.appended.setdefault((name, "s"), []).append(node)
                load.turns += 1

        async with anyio.create_task_group() as tg:
            for k in range(TASKS):
                tg.start_soon(write, names[k::TASKS])
        out["write_every_home_s"] = round(time.perf_counter() - started, 2)
        opened = await client.stats()
        started = time.perf_counter()
        for name in names:
            await client.flush(name, force=True)
        out["flush_every_home_s"] = round(time.perf_counter() - started, 2)
        result = await anyio.to_thread.run_sync(lambda: audit(root / "pool", load, processes=False))
        out["verified"] = {"homes": homes - len(result.verify_failures), "lost": len(result.lost),
                           "consumed_twice": len(result.consumed_twice), "turns": result.turns_checked}  # fmt: skip
        per_open = [
            (opened[a]["pss"] - base[a]["pss"]) / max(1, opened[a]["open"] - base[a]["open"]) for a in opened
        ]
        closing = {}
        for name, handle in (await client._actor_handles()).items():
            closing[name] = await client._get(handle.close_all.remote())
        closed = await client.stats()
        out["memory"] = {
            "pss_mib_one_home": {a: round(base[a]["pss"] / MIB, 1) for a in base},
            "pss_mib_all_open": {a: round(opened[a]["pss"] / MIB, 1) for a in opened},
            "pss_mib_all_closed": {a: round(closed[a]["pss"] / MIB, 1) for a in closed},
            "open_counts": {a: opened[a]["open"] for a in opened},
            "fds_all_open": {a: opened[a]["fds"] for a in opened},
            "fds_all_closed": {a: closed[a]["fds"] for a in closed},
            "per_open_home_kib": round(statistics.mean(per_open) / 1024, 1),
            # What a closed home still holds in its actor: PSS after closing them all, over the one-home base.
            "retained_per_closed_home_kib": round(
                statistics.mean((closed[a]["pss"] - base[a]["pss"]) / max(1, opened[a]["open"]) for a in closed) / 1024, 1),
        }  # fmt: skip
        # Cold homes: the actor is up, the home is not open (all were closed just now).
        samples = []
        for name in names[:cold]:
            started = time.perf_counter()
            await client.append(name, "s", "assistant", "the first turn after a cold open")
            samples.append((time.perf_counter() - started) * 1000)
        samples.sort()
        out["cold_first_append_ms"] = {"p50": round(statistics.median(samples), 2),
                                       "p99": round(samples[min(len(samples) - 1, int(len(samples) * 0.99))], 2)}  # fmt: skip
        # Latency, side by side: a home in the pool (with `cold` others open in its actors) and a home with
        # an actor of its own.
        lat: dict[str, list[float]] = {"pool": [], "one_home_per_actor": []}
        targets = {"pool": (client, names[0]), "one_home_per_actor": (single, "alone")}
        for k in range(latency_turns + 10):
            for what, (target, home) in targets.items():
                started = time.perf_counter()
                await target.append(home, "latency", "user" if k % 2 else "assistant", f"turn {k}")
                if k >= 10:
                    lat[what].append((time.perf_counter() - started) * 1000)
        out["latency_ms"] = {what: {"p50": round(statistics.median(v), 3), "p99": round(sorted(v)[int(len(v) * 0.99) - 1], 3)}
                             for what, v in lat.items()}  # fmt: skip
        await single.stop("alone")
        if kills:
            started = time.perf_counter()
            load, killed, result = await fault_run(
                client, names, kills=kills, seed=30, tasks=TASKS, processes=False
            )
            out["fault"] = {"kills": len(killed), "with_appends_in_flight": sum(k.in_flight > 0 for k in killed),
                            "turns": load.turns, "checked": result.turns_checked,
                            "verify_failures": len(result.verify_failures), "lost": len(result.lost),
                            "consumed_twice": len(result.consumed_twice),
                            "restart_s_max": round(max(k.restart_s for k in killed), 2),
                            "seconds": round(time.perf_counter() - started, 1)}  # fmt: skip
            out["served_once"] = await _served_once(client, root / "pool", names)
    finally:
        for handle in (await client._actor_handles()).values():
            with contextlib.suppress(Exception):
                client._ray.kill(handle, no_restart=True)
        await single.close()
        await client.close()
    return out


async def _served_once(client: Any, root: Path, names: list[str]) -> dict[str, int]:
    """Each home's serving lock names the pid of the actor its placement picks (never another's)."""
    pids = {
        name: info["pid"]
        for name, info in {n: await client.info(n) for n in names[:: max(1, len(names) // 50)]}.items()
    }
    wrong = 0
    for name, pid in pids.items():
        lock = HomePaths(root / name).workspace.serving_lock
        text = (await anyio.to_thread.run_sync(lock.read_text)).split()
        wrong += len(text) > 1 and int(text[1]) != pid
    return {"checked": len(pids), "served_by_another": wrong}


def _pss_mib(pid: int) -> float:
    """The proportional set size of a local process (what it costs beyond what it shares), in MiB."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run(quick: bool, progress: Callable[[str], None] = lambda _m: None) -> dict[str, Any]:
    # Ray's driver prints its cluster's error messages (a task retried, a worker gone) on stdout, which
    # `--json` keeps for the report: send them to stderr while Ray runs.
    with contextlib.redirect_stdout(sys.stderr):
        return _run(quick, progress)


def _run(quick: bool, progress: Callable[[str], None]) -> dict[str, Any]:
    from ..cluster import require_ray

    ray = require_ray()
    turns = QUICK_TURNS if quick else TURNS
    latency_turns = QUICK_LATENCY_TURNS if quick else LATENCY_TURNS
    raw: dict[str, Any] = {"turns": turns, "tasks": TASKS, "threshold": THRESHOLD, "configs": {}}
    progress("starting a local Ray instance")
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(
            _node_ip_address="127.0.0.1",  # a local instance talks over loopback only
            num_cpus=2,
            include_dashboard=False,
            object_store_memory=100 * 1024 * 1024,
            namespace="dagmem",
            log_to_driver=False,
        )
    try:
        for count in HOME_COUNTS:
            homes = [f"bench{k}" for k in range(count)]
            with tempfile.TemporaryDirectory(prefix="dagmem-bench-cluster-") as scratch:
                progress(f"{count} home(s): in-process runtime")
                local = anyio.run(_in_process, Path(scratch) / "local", homes, turns)
                progress(f"{count} home(s): through {count} Ray actor(s)")
                remote = anyio.run(_through_cluster, Path(scratch) / "cluster", homes, turns)
            raw["configs"][str(count)] = {"in_process": local, "cluster": remote}
        progress("append latency, side by side")
        with tempfile.TemporaryDirectory(prefix="dagmem-bench-cluster-") as scratch:
            raw["latency"] = anyio.run(_latency, Path(scratch), latency_turns)
        many = QUICK_POOL_HOMES if quick else POOL_HOMES
        progress(f"{many:,} homes through {POOL_ACTORS} actors: written, verified, memory, cold opens, kills")
        with tempfile.TemporaryDirectory(prefix="dagmem-bench-cluster-") as scratch:
            cold, kills = (QUICK_COLD_HOMES, QUICK_POOL_KILLS) if quick else (COLD_HOMES, POOL_KILLS)
            raw["pool"] = anyio.run(
                lambda: _pool(
                    Path(scratch), many, POOL_ACTORS, cold=cold, latency_turns=latency_turns, kills=kills
                )
            )
    finally:
        if started_ray:
            ray.shutdown()
    return raw
