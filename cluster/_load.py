"""A load and fault harness for the cluster, shared by its tests and `dagmem bench cluster`.

`drive` runs client tasks at once over many homes, each appending to branching sessions (continuing the
head, forking at an earlier node, moving the head back), and records every append that returned.
`kill_loop` SIGKILLs home actors' worker processes at random instants while that load runs (each once an
append to the actor is in flight), and waits for Ray to restart each. `audit` then checks every home from its files: the oracle (`dagmem verify
--strict`, a subprocess) and, against the log of returned appends, no lost and no doubly consumed turn."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any, Protocol

import anyio

from ..memory.durable import TxLog
from ..memory.format import HEAD, HeadType, HomePaths
from ..memory.store import FileSessionStore

__all__ = ["Audit", "Kill", "Load", "Target", "audit", "drive", "fault_run", "kill_loop"]

IN_FLIGHT_WAIT = 10.0  # seconds a kill waits, after its random delay, for an append to be in flight

_WORDS = (
    "tram harbour lantern orchard copper violin glacier meadow cipher pepper quarry saddle "
    "ember walnut falcon marble thistle canyon velvet beacon"
).split()


class Target(Protocol):
    """What `drive` appends through: a `Cluster`, or an adapter over in-process runtimes."""

    async def append(
        self,
        home_id: str,
        session_id: str,
        role: str,
        content: str,
        *,
        predecessor: str | HeadType | None = HEAD,
        node_id: str | None = None,
    ) -> str: ...

    async def set_head(self, home_id: str, session_id: str, node_id: str | None) -> None: ...


@dataclass
class Load:
    """The appends that returned, per (home, session), and what was in flight per home."""

    appended: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    in_flight: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    turns: int = 0
    forks: int = 0
    head_moves: int = 0


def text(rng: Random, task: int, turn: int) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 18)))
    return f"task {task} turn {turn}: {words}"


async def drive(
    target: Target,
    homes: list[str],
    *,
    sessions: int = 2,
    tasks: int = 4,
    turns: int = 40,
    seed: int = 1,
    until: anyio.Event | None = None,
    load: Load | None = None,
) -> Load:
    """`tasks` client tasks at once, each doing at least `turns` steps (and more until `until` is set) over
    every home's `sessions` sessions: 15% forks, 10% head moves, the rest continue the head."""
    load = load if load is not None else Load()
    pairs = [(home, f"s{k}") for home in homes for k in range(sessions)]

    async def one(task: int) -> None:
        rng = Random(seed * 1_000 + task)
        step = 0
        while step < turns or (until is not None and not until.is_set()):
            step += 1
            home, sid = rng.choice(pairs)
            known = load.appended.setdefault((home, sid), [])
            draw = rng.random()
            if draw < 0.10 and known:
                await target.set_head(home, sid, rng.choice(known))
                load.head_moves += 1
                continue
            predecessor: str | HeadType | None = HEAD
            if draw < 0.25 and known:
                predecessor = rng.choice(known)
                load.forks += 1
            role = "user" if step % 2 else "assistant"
            load.in_flight[home] += 1
            started = anyio.current_time()
            try:
                node_id = await target.append(home, sid, role, text(rng, task, step), predecessor=predecessor)
            finally:
                load.in_flight[home] -= 1
            load.latencies.append(anyio.current_time() - started)
            known.append(node_id)
            load.turns += 1

    async with anyio.create_task_group() as tg:
        for task in range(tasks):
            tg.start_soon(one, task)
    return load


@dataclass(frozen=True)
class Kill:
    home: str
    pid: int
    new_pid: int
    in_flight: int  # appends in flight at the instant of the kill to the homes of the actor killed
    restart_s: float


async def kill_loop(
    cluster: Any, homes: list[str], load: Load, *, kills: int, seed: int, max_delay: float = 0.4
) -> list[Kill]:
    """SIGKILL the worker process of a random home's actor `kills` times (every home it serves dies with
    it), each after a random delay and then as soon as an append to one of its homes is in flight (at
    most `IN_FLIGHT_WAIT` seconds more), waiting each time for Ray to bring the actor back (a new pid
    answers)."""
    rng = Random(seed)
    done: list[Kill] = []
    for _ in range(kills):
        home = rng.choice(homes)
        info = await cluster.info(home)
        if info["host"] != socket.gethostname():
            raise RuntimeError(f"home {home} is served on {info['host']}: only local processes are killed")
        await anyio.sleep(rng.uniform(0.02, max_delay))
        same = _same_actor(cluster, homes, home, info)
        with anyio.move_on_after(IN_FLIGHT_WAIT):
            while not any(load.in_flight[h] for h in same):  # noqa: ASYNC110 (the appenders' counters)
                await anyio.sleep(0.005)
        in_flight = sum(load.in_flight[h] for h in same)
        started = anyio.current_time()
        os.kill(info["pid"], signal.SIGKILL)
        while True:
            new = await cluster.info(home)
            if new["pid"] != info["pid"]:
                break
            await anyio.sleep(0.05)
        done.append(Kill(home, info["pid"], new["pid"], in_flight, anyio.current_time() - started))
    return done


def _same_actor(cluster: Any, homes: list[str], home: str, info: dict[str, Any]) -> list[str]:
    """The homes the actor serving `home` serves too (a kill ends them all): those placed on it."""
    from ._client import actor_name

    actors = getattr(cluster, "actors", None)
    if actors is None or getattr(cluster, "local_disks", False) or "actor" not in info:
        return [home]
    return [h for h in homes if actor_name(h, actors) == info["actor"]]


@dataclass
class Audit:
    """What the files say, per home and in total."""

    verify_failures: dict[str, str] = field(default_factory=dict)  # home -> the oracle's violations
    lost: list[str] = field(default_factory=list)  # returned appends not on disk, or not consumed
    consumed_twice: list[str] = field(default_factory=list)
    turns_checked: int = 0

    @property
    def ok(self) -> bool:
        return not (self.verify_failures or self.lost or self.consumed_twice)


def _verify_in_process(path: Path) -> str | None:
    """What `dagmem verify --strict` finds in the home, run here (the same oracle), or None when clean."""
    from ..memory.audit import check_home
    from ..memory.durable import read_workspace_id

    paths = HomePaths(path).workspace
    report = check_home(
        FileSessionStore(path, read_only=True),
        paths.root,
        read_workspace_id(paths.workspace_id),
        drained=True,
    )
    return None if report.ok else str([str(v) for v in report.violations])[:2000]


def audit(root: Path, load: Load, *, processes: bool = True) -> Audit:
    """Check each home after `flush(home, force=True)`: `dagmem verify --strict` (marker without install,
    stranded, consumed twice, uncited, ...; a subprocess each, or the same oracle in this process when not
    `processes`, for a thousand homes) and every returned append on disk and consumed exactly once."""
    result = Audit()
    homes = sorted({home for home, _sid in load.appended})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    for home in homes:
        path = root / home
        if not processes:
            violations = _verify_in_process(path)
            if violations is not None:
                result.verify_failures[home] = violations
        proc = (
            None
            if not processes
            else subprocess.run(
                [sys.executable, "-m", "dagmem", "verify", "--strict", "--json", "--home", str(path)],
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
        )
        if proc is not None and proc.returncode != 0:
            try:
                found: Any = json.loads(proc.stdout).get("violations")
            except ValueError:
                found = proc.stdout + proc.stderr
            result.verify_failures[home] = str(found)[:2000]
        consumed: Counter[str] = Counter()
        txlog = HomePaths(path).workspace.txlog
        for _offset, record in TxLog(txlog, fsync=False).read_from(0):
            consumed.update(record.consumed)
        result.consumed_twice += [f"{home}:{source}" for source, n in consumed.items() if n > 1]
        store = FileSessionStore(path)
        for (owner, sid), ids in sorted(load.appended.items()):
            if owner != home or not ids:
                continue
            nodes = store.load(sid).nodes
            for node_id in ids:
                result.turns_checked += 1
                if node_id not in nodes or consumed[f"{sid}/{node_id}"] != 1:
                    result.lost.append(f"{home}:{sid}/{node_id}")
    return result


async def fault_run(
    cluster: Any, homes: list[str], *, kills: int, seed: int, tasks: int = 4, processes: bool = True
) -> tuple[Load, list[Kill], Audit]:
    """The fault test: client tasks append to branching sessions of every home at once while `kill_loop`
    SIGKILLs home actors `kills` times; then every home is flushed (forced) and audited from its files."""
    stop = anyio.Event()
    load = Load()
    async with anyio.create_task_group() as tg:

        async def appenders() -> None:
            await drive(cluster, homes, sessions=2, tasks=tasks, turns=20, seed=seed, until=stop, load=load)

        tg.start_soon(appenders)
        await anyio.sleep(0.5)  # the homes are up and being written to
        try:
            killed = await kill_loop(cluster, homes, load, kills=kills, seed=seed)
        finally:
            stop.set()
    for home in homes:
        await cluster.flush(home, force=True)
    root = cluster.root
    return load, killed, await anyio.to_thread.run_sync(lambda: audit(root, load, processes=processes))
