"""`dagmem bench runtime`: what `Runtime.append` costs as live sessions and session length grow, and how
fast the writer drains owed turns.

Everything goes through the real `Runtime` on a real `FileSessionStore`, fsync on (the default) for every
measured operation; fixtures are built with fsync off, then the runtime is reopened with fsync on.

**Append latency.** One figure is `await rt.append("m", role, text)` end to end (wall clock,
`time.perf_counter`): the mailbox, the session actor, the durable node and `meta.json` writes in a worker
thread, the planner. Four setups, each in its own worker process, with the same measured turns (same
text, 150-400 characters, roles alternating):

- `small`: 10 live sessions (their actors running), the measured session `m` holding 10 turns.
- `control`: the same as `small`, in another process: `control / small` is what noise alone gives.
- `many`: 10,000 live sessions, `m` holding 10 turns.
- `long`: 10 live sessions, `m` holding 5,000 turns.

Goal (a) is `many / small` and goal (b) `long / small`, on p50 and on p99, each ≤ 1.5. A session is made
live by appending one turn to it through the runtime (fsync on, 64 at a time) after its first turn was put
in the fixture; `idle_after` is huge, so no session retires. `m`'s earlier turns are written to memory and
marked before the measured runtime opens (a fixture runtime with fsync off ends the session), so every
setup starts with nothing owed.

Why a process per setup: the costs that could grow with the number of live sessions (the event loop's
timers and tasks, the garbage collector walking every session's objects) are per process. Two runtimes in
one process would make the small one pay for the large one's heap. The processes take turns instead
(lockstep): in each round the coordinator asks each setup, in a shuffled order, for one append and waits
for its answer, so exactly one process works at a time and machine noise hits all setups alike. After
setup, every thread of every worker is pinned to the same CPU (the last one this process may use): left to
the scheduler, identical processes differed by up to 1.5x on p50 (how each one's event-loop thread and
I/O threads happened to be spread over the CPUs); pinned, they agree within a few per cent.

Two modes, each with its own four processes (measured one mode after the other):

- `appends_only`: token threshold 10^12, so no batch is ever due: the appends alone.
- `with_writer`: the default threshold (16,000 tokens): `m`'s turns become due every ~280 appends; the
  writer writes the batch, then the session actor marks its nodes, while later appends arrive.

The first message to `m` (a `notify_head`, no write) starts its actor, which rebuilds its view from disk:
O(session) by design, reported on its own. Later, each setup also starts `start_samples` fresh one-turn
sessions the same way, in lockstep, to show what starting a session costs with 10 vs 10,000 live. After
the appends-only measurement, `profile_appends` more appends and 10 more session starts per setup run
under cProfile with the I/O run inline (the runtime's `offload` switched off for them, so that cProfile,
which sees only the main thread, sees the store's work too); the functions whose self time grew most are
reported.

**Writer throughput.** A fresh process; `sessions` sessions of `turns` turns each are put in a store
(fsync off), then a runtime (fsync on, the default `ExtractiveDistiller`) runs `await rt.flush(force=True)`
and the wall time is taken: turns written and marked per second, and the batch count, at the default
16,000-token threshold and at 500. The flush includes starting each session's actor (reading the session
from disk). The independent oracle then checks each home (every record consumed once, archived, cited,
marked).

The scratch directory is a fresh temporary directory (honours `TMPDIR`), removed afterwards; `--home` is
ignored. Setup runs in all worker processes at once (its timings are indicative only); the measured parts
run one process at a time. The large runtime of the last mode is closed and timed (up to 10 s; closing
10,000 live sessions takes minutes); the others that are not needed any more exit without closing.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import math
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, cast

import anyio

from ..actors import Runtime, RuntimeConfig
from ..memory.format import HomePaths, count_tokens
from ..memory.policy import DEFAULT_THRESHOLD
from ..memory.store import FileSessionStore
from ..sim import check_home, peak_rss_bytes
from . import _kit as kit

__all__ = ["main", "run"]

GOAL_RATIO = 1.5
SMALL_LIVE = 10
LARGE_LIVE = 10_000
QUICK_LARGE_LIVE = 1_000
SHORT_TURNS = 10
LONG_TURNS = 5_000
QUICK_LONG_TURNS = 1_000
SAMPLES = 600
QUICK_SAMPLES = 150
WARMUP = 20
QUICK_WARMUP = 10
PROFILE_APPENDS = 100
QUICK_PROFILE_APPENDS = 30
PROFILE_STARTS = 10
START_SAMPLES = 20
QUICK_START_SAMPLES = 10
THROUGHPUT_SESSIONS = 40
THROUGHPUT_TURNS = 100
QUICK_THROUGHPUT_SESSIONS = 10
QUICK_THROUGHPUT_TURNS = 60
THRESHOLDS = (DEFAULT_THRESHOLD, 500)
QUIET_THRESHOLD = 10**12  # appends only: no batch ever becomes due
IDLE_AFTER = 1e9  # no session goes idle during a run
LIVE_CONCURRENCY = 64
CLOSE_CAP = 10.0  # seconds the coordinator waits for the large runtime to close
BOOTSTRAP = 1_000
SEED = 20_240_621
SETUPS = ("small", "control", "many", "long")
MODES = ("appends_only", "with_writer")
MEASURED = "m"
TOPICS = 20

# -- text ----------------------------------------------------------------------------------------------


def _turns(count: int, seed: int) -> list[tuple[str, str]]:
    """`count` (role, text) turns, roles alternating user/assistant, each exchange about one topic word."""
    rng = random.Random(seed)
    topics = kit.topic_words(TOPICS, random.Random(SEED), kit.SYLLABLES[:15])
    out: list[tuple[str, str]] = []
    topic = topics[0]
    for i in range(count):
        if i % 2 == 0:
            topic = rng.choice(topics)
        out.append(("user" if i % 2 == 0 else "assistant", kit.topic_text(rng, topic, 2, numbers=False)))
    return out


def _other(i: int) -> str:
    return f"o{i:05d}"


def _extra(i: int) -> str:
    return f"x{i:03d}"


# -- statistics ----------------------------------------------------------------------------------------


def _summary(values: Sequence[float]) -> dict[str, Any]:
    ordered = sorted(values)
    if not ordered:
        return {"n": 0}
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered), 3),
        "p90": round(kit.quantile(ordered, 0.90), 3),
        "p99": round(kit.quantile(ordered, 0.99), 3),
        "max": round(ordered[-1], 3),
        "mean": round(statistics.fmean(ordered), 3),
    }


def _bootstrap(large: Sequence[float], small: Sequence[float], q: float, rng: random.Random) -> list[float]:
    """A 95 % bootstrap interval of quantile(large) / quantile(small): how much noise the ratio carries."""
    ratios: list[float] = []
    for _ in range(BOOTSTRAP):
        a = sorted(rng.choices(large, k=len(large)))
        b = sorted(rng.choices(small, k=len(small)))
        qa = statistics.median(a) if q == 0.5 else kit.quantile(a, q)
        qb = statistics.median(b) if q == 0.5 else kit.quantile(b, q)
        ratios.append(qa / qb if qb > 0 else math.inf)
    ratios.sort()
    return [round(kit.quantile(ratios, 0.025), 3), round(kit.quantile(ratios, 0.975), 3)]


def _peak_rss_mib() -> float:
    return round(peak_rss_bytes() / 2**20, 1)


def _rss_mib() -> float:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def _pin(cpu: int) -> int:
    """Pin every thread of this process (and, by inheritance, the threads it starts later) to `cpu`."""
    threads = 0
    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(int(tid), {cpu})
            threads += 1
    return threads


def _pin_cpu() -> int | None:
    """The CPU the measured workers share: the last one this process may use, if it may use several."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[-1] if len(cpus) > 1 else None


def _functions(profiler: cProfile.Profile, count: int, top: int = 400) -> dict[str, list[float]]:
    """`dir/file:qualname` -> [cumulative ms, self ms] per operation, the `top` by self time."""
    functions = kit.profile_functions(profiler, count)
    ranked = sorted(functions.items(), key=lambda item: item[1][1], reverse=True)[:top]
    return {key: [round(cum, 4), round(own, 4)] for key, (cum, own) in ranked}


# -- the worker processes ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    kind: str  # "latency" or "throughput"
    name: str  # a setup of SETUPS, or "throughput"
    mode: str  # a mode of MODES ("" for throughput)
    home: str
    backend: str
    live: int = 0  # live sessions during the measurement, the measured one included
    prefix: int = 0  # turns in the measured session before the first measured append
    threshold: int = QUIET_THRESHOLD
    start_samples: int = 0  # extra one-turn sessions, started one at a time (and as many more profiled)
    measured_turns: int = 0
    sessions: int = 0  # throughput
    turns: int = 0  # throughput
    thresholds: tuple[int, ...] = ()  # throughput


def _worker_cli() -> None:
    """A worker process's entry point: its end of the socket pair is the file descriptor in argv."""
    conn = Connection(int(sys.argv[1]))
    spec = conn.recv()
    assert isinstance(spec, _Spec)
    _worker_entry(conn, spec)


def _worker_entry(conn: Connection, spec: _Spec) -> None:
    """Run one setup's runtime and answer the coordinator's commands."""
    try:
        anyio.run(_worker_main, conn, spec, backend=spec.backend)
    except BaseException:
        with contextlib.suppress(Exception):
            conn.send(("error", traceback.format_exc()))
        raise
    finally:
        conn.close()


async def _worker_main(conn: Connection, spec: _Spec) -> None:
    if spec.kind == "throughput":
        conn.send(("reply", await _throughput(conn, spec)))
    else:
        await _LatencyWorker(conn, spec).run()


def _say(conn: Connection, spec: _Spec, message: str) -> None:
    label = spec.name if not spec.mode else f"{spec.mode}/{spec.name}"
    conn.send(("progress", f"{label}: {message}"))


def _build_latency_fixture(home: Path, spec: _Spec) -> str:
    """The other sessions (one turn each), the extra sessions for start samples, and the measured session's
    earlier turns, in a store with fsync off. Returns the measured session's head."""
    store = FileSessionStore(home, fsync=False)
    others = _turns(spec.live - 1, SEED + 3)
    for i, (role, text) in enumerate(others):
        store.append(_other(i), role, text)
    for i in range(spec.start_samples + PROFILE_STARTS):
        store.append(_extra(i), "user", others[i % len(others)][1] if others else "hello")
    node = None
    for role, text in _turns(spec.prefix, SEED + 2):
        node = store.append(MEASURED, role, text)
    assert node is not None
    return node.id


class _LatencyWorker:
    def __init__(self, conn: Connection, spec: _Spec) -> None:
        self.conn = conn
        self.spec = spec
        self.turns = _turns(spec.measured_turns, SEED + 1)
        self.next_turn = 0
        # What the trace says about batches (all sessions) and about the measured session's batch in flight.
        self.batches = 0
        self.written = 0
        self.failures = 0
        self.inflight = False
        self.events = 0
        # Garbage collections during measured appends.
        self.recording = False
        self.gc_started = 0.0
        self.gc_pause = 0.0
        self.gc_max = 0.0
        self.gc_counts = [0, 0, 0]
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.gc_started = time.perf_counter()
            return
        if self.recording:
            pause = time.perf_counter() - self.gc_started
            self.gc_pause += pause
            self.gc_max = max(self.gc_max, pause)
            self.gc_counts[info["generation"]] += 1

    def trace(self, kind: str, fields: dict[str, Any]) -> None:
        if kind not in ("batch", "written", "failed"):
            return
        if kind == "batch":
            self.batches += 1
        elif kind == "written":
            self.written += len(fields.get("nodes", ()))
        else:
            self.failures += 1
        if fields.get("session") == MEASURED:
            self.events += 1
            self.inflight = kind == "batch"

    async def run(self) -> None:
        spec, home = self.spec, Path(self.spec.home)
        started = time.perf_counter()
        _say(
            self.conn, spec, f"building the fixture ({spec.live - 1:,} other sessions, {spec.prefix:,} turns)"
        )
        head = _build_latency_fixture(home, spec)
        # Write and mark the measured session's earlier turns (fsync off), so nothing is owed at the start.
        fixture = RuntimeConfig(token_threshold=DEFAULT_THRESHOLD, idle_after=IDLE_AFTER, fsync=False)
        async with Runtime.open(home, config=fixture) as rt:
            await rt.end_session(MEASURED)
        build_s = time.perf_counter() - started
        async with Runtime.open(
            home, token_threshold=spec.threshold, idle_after=IDLE_AFTER, trace=self.trace
        ) as rt:
            live = await self._make_live(rt)
            gc.collect()
            ready = {
                "build_s": round(build_s, 2),
                **live,
                "tracked_objects": len(gc.get_objects()),
                "rss_mib": _rss_mib(),
            }
            self.conn.send(("ready", ready))
            await self._serve(rt, head)
            closing = time.perf_counter()
        close_ms = (time.perf_counter() - closing) * 1e3
        self.conn.send(("reply", {"close_ms": round(close_ms, 1), "peak_rss_mib": _peak_rss_mib()}))

    async def _make_live(self, rt: Runtime) -> dict[str, Any]:
        """Append one turn to every other session (fsync on), 64 at a time: their actors are then live."""
        others = self.spec.live - 1
        texts = _turns(max(others, 1), SEED + 4)
        limiter = anyio.CapacityLimiter(LIVE_CONCURRENCY)
        finished: list[float] = []

        async def one(i: int) -> None:
            async with limiter:
                role, text = texts[i]
                await rt.append(_other(i), role, text)
            finished.append(time.perf_counter())
            if len(finished) % 1000 == 0:
                _say(self.conn, self.spec, f"{len(finished):,}/{others:,} sessions live")

        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for i in range(others):
                tg.start_soon(one, i)
        total = time.perf_counter() - started
        block = max(1, others // 10)
        first = (finished[block - 1] - started) / block * 1e3 if finished else 0.0
        last = (finished[-1] - finished[-block - 1]) / block * 1e3 if len(finished) > block else first
        return {
            "live_s": round(total, 2),
            "live_ms_per_session": round(total / max(1, others) * 1e3, 3),
            "live_block": block,
            "live_first_block_ms": round(first, 3),
            "live_last_block_ms": round(last, 3),
        }

    async def _serve(self, rt: Runtime, head: str) -> None:
        while True:
            command = await anyio.to_thread.run_sync(self.conn.recv)
            name = command[0]
            reply: Any
            if name == "first":
                reply = await self._timed(rt.notify_head(MEASURED, head))
            elif name == "append":
                reply = [await self._append(rt) for _ in range(int(command[1]))]
            elif name == "start":
                reply = await self._timed(rt.notify_head(_extra(int(command[1])), "n1"))
            elif name == "profile":
                reply = await self._profile(rt, int(command[1]))
            elif name == "profile_start":
                reply = await self._profile_starts(rt, int(command[1]), int(command[2]))
            elif name == "stats":
                reply = self._stats(rt)
            elif name == "pin":
                reply = _pin(int(command[1]))
            elif name == "close":
                return
            elif name == "exit":
                sys.stdout.flush()
                os._exit(0)  # leave without closing the runtime (the coordinator does not need it)
            else:
                raise ValueError(f"unknown command {command!r}")
            self.conn.send(("reply", reply))

    @staticmethod
    async def _timed(call: Any) -> float:
        started = time.perf_counter()
        await call
        return round((time.perf_counter() - started) * 1e3, 4)

    def _next(self) -> tuple[str, str]:
        """The next measured turn (role, text), cycling through `self.turns`."""
        turn = self.turns[self.next_turn % len(self.turns)]
        self.next_turn += 1
        return turn

    async def _append(self, rt: Runtime) -> list[float]:
        """One measured append: [ms, overlapped a batch of the measured session (0/1), GC pause ms]."""
        role, text = self._next()
        events, inflight, paused = self.events, self.inflight, self.gc_pause
        self.recording = True
        started = time.perf_counter()
        await rt.append(MEASURED, role, text)
        elapsed = time.perf_counter() - started
        self.recording = False
        overlapped = inflight or self.inflight or self.events != events
        return [round(elapsed * 1e3, 4), float(overlapped), round((self.gc_pause - paused) * 1e3, 4)]

    async def _profile(self, rt: Runtime, count: int) -> dict[str, Any]:
        """`count` appends under cProfile with the I/O inline."""

        async def append(_i: int) -> None:
            role, text = self._next()
            await rt.append(MEASURED, role, text)

        ms, functions = await _profiled(rt, range(count), append)
        return {"ms_per_append": ms, "functions": functions}

    async def _profile_starts(self, rt: Runtime, first: int, count: int) -> dict[str, Any]:
        """Start `count` one-turn sessions under cProfile with the I/O inline."""

        async def start(i: int) -> None:
            await rt.notify_head(_extra(i), "n1")

        ms, functions = await _profiled(rt, range(first, first + count), start)
        return {"ms_per_start": ms, "functions": functions}

    def _stats(self, rt: Runtime) -> dict[str, Any]:
        status = rt.status()
        return {
            "peak_rss_mib": _peak_rss_mib(),
            "rss_mib": _rss_mib(),
            "live_sessions": status.live_sessions,
            "pending_turns": status.pending_turns,
            "batches": self.batches,
            "written_records": self.written,
            "failed_batches": self.failures,
            "gc": {
                "collections": {f"gen{g}": n for g, n in enumerate(self.gc_counts)},
                "pause_ms_total": round(self.gc_pause * 1e3, 3),
                "pause_ms_max": round(self.gc_max * 1e3, 3),
            },
        }


async def _profiled(
    rt: Runtime, indices: range, operation: Callable[[int], Awaitable[None]]
) -> tuple[float, dict[str, list[float]]]:
    """`operation(i)` for each of `indices` under cProfile, with the runtime's I/O run inline (its `offload`
    off: cProfile sees only the main thread): ms per operation, and `_functions`."""
    ctx = rt._ctx
    profiler = cProfile.Profile()
    ctx.offload = False
    try:
        started = time.perf_counter()
        profiler.enable()
        for i in indices:
            await operation(i)
        profiler.disable()
        wall = time.perf_counter() - started
    finally:
        ctx.offload = True
    return round(wall * 1e3 / len(indices), 3), _functions(profiler, len(indices))


async def _throughput(conn: Connection, spec: _Spec) -> dict[str, Any]:
    """Writer throughput: `flush(force=True)` over sessions whose turns are all owed, per threshold."""
    runs: list[dict[str, Any]] = []
    for threshold in spec.thresholds:
        home = Path(spec.home) / f"threshold-{threshold}"
        _say(
            conn, spec, f"threshold {threshold:,}: {spec.sessions} sessions × {spec.turns} turns (fsync off)"
        )
        store = FileSessionStore(home, fsync=False)
        records = 0
        tokens = 0
        for s in range(spec.sessions):
            for role, text in _turns(spec.turns, SEED + 100 + s):
                store.append(f"t{s:03d}", role, text)
                records += 1
                tokens += count_tokens(text)
        counts = {"batch": 0, "written": 0, "failed": 0}
        sizes: list[int] = []

        def trace(
            kind: str, fields: dict[str, Any], counts: dict[str, int] = counts, sizes: list[int] = sizes
        ) -> None:
            if kind == "batch":
                counts["batch"] += 1
            elif kind == "written":
                counts["written"] += len(fields["nodes"])
                sizes.append(len(fields["nodes"]))
            elif kind == "failed":
                counts["failed"] += 1

        _say(conn, spec, f"threshold {threshold:,}: flush(force=True), fsync on")
        async with Runtime.open(home, token_threshold=threshold, idle_after=IDLE_AFTER, trace=trace) as rt:
            started = time.perf_counter()
            await rt.flush(force=True)
            flush_s = time.perf_counter() - started
            pending = rt.status().pending_turns
            workspace_id = rt.workspace_id
        report = check_home(FileSessionStore(home), HomePaths(home).memory, workspace_id, drained=True)
        runs.append(
            {
                "threshold": threshold,
                "sessions": spec.sessions,
                "turns": records,
                "tokens": tokens,
                "batches": len(sizes),
                "batches_started": counts["batch"],
                "failed_batches": counts["failed"],
                "records_written": counts["written"],
                "records_per_batch": round(statistics.fmean(sizes), 1) if sizes else 0.0,
                "seconds": round(flush_s, 3),
                "records_per_s": round(counts["written"] / flush_s, 1),
                "batches_per_s": round(len(sizes) / flush_s, 2),
                "ms_per_batch": round(flush_s * 1e3 / max(1, len(sizes)), 2),
                "pending_after": pending,
                "oracle": {
                    "ok": report.ok,
                    "violations": len(report.violations),
                    "consumed": report.consumed,
                },
            }
        )
    return {"runs": runs, "peak_rss_mib": _peak_rss_mib()}


class _Quiet:
    """A stand-in for the coordinator's end of the socket: progress goes nowhere."""

    def send(self, message: object) -> None:
        pass


def measure_throughput(
    sessions: int = QUICK_THROUGHPUT_SESSIONS,
    turns: int = QUICK_THROUGHPUT_TURNS,
    thresholds: Sequence[int] = THRESHOLDS,
    *,
    backend: str = "asyncio",
) -> list[dict[str, Any]]:
    """Only the writer-throughput part, in this process (the same `_throughput` as `dagmem bench
    runtime`), in a fresh temporary home: one run per threshold. For side-by-side runs of the writer alone:
    `python -c "from dagmem.bench._runtime import measure_throughput as m; print(m())"`."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="dagmem-throughput-") as home:
        spec = _Spec(
            "throughput", "throughput", "", home, backend, sessions=sessions, turns=turns,
            thresholds=tuple(thresholds),
        )  # fmt: skip
        quiet = cast(Connection, _Quiet())  # `_throughput` only sends progress to it
        runs: list[dict[str, Any]] = anyio.run(_throughput, quiet, spec, backend=backend)["runs"]
    return runs


# -- the coordinator -----------------------------------------------------------------------------------


@dataclass
class _Proc:
    spec: _Spec
    process: subprocess.Popen[bytes]
    conn: Connection
    say: kit.Progress
    ready: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.spec.mode}/{self.spec.name}" if self.spec.mode else self.spec.name

    def handle(self, message: tuple[str, Any]) -> Any:
        """Relay progress; raise a worker's error; return anything else's payload (None for progress)."""
        kind, payload = message
        if kind == "progress":
            self.say(str(payload))
            return None
        if kind == "error":
            raise RuntimeError(f"benchmark worker {self.label} failed:\n{payload}")
        if kind == "ready":
            self.ready = dict(payload)
        return payload

    def call(self, *command: Any) -> Any:
        self.conn.send(command)
        return self.reply()

    def reply(self, timeout: float | None = None) -> Any:
        while True:
            if timeout is not None and not self.conn.poll(timeout):
                raise TimeoutError(self.label)
            try:
                message = self.conn.recv()
            except EOFError:
                raise RuntimeError(f"benchmark worker {self.label} died ({self.process.poll()})") from None
            if message[0] != "progress":
                return self.handle(message)
            self.handle(message)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.conn.close()


def _start(spec: _Spec, say: kit.Progress) -> _Proc:
    """A worker process: a fresh interpreter (`python -c`, so the host's main module is never re-imported)
    talking to this one over a socket pair."""
    parent, child = multiprocessing.Pipe()
    fd = child.fileno()
    process = subprocess.Popen(
        [sys.executable, "-c", f"from {__name__} import _worker_cli; _worker_cli()", str(fd)],
        pass_fds=(fd,),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    child.close()
    parent.send(spec)
    return _Proc(spec, process, parent, say)


def _await_ready(procs: Sequence[_Proc]) -> None:
    waiting = {proc.conn: proc for proc in procs}
    while waiting:
        for conn in wait(list(waiting)):
            proc = waiting[conn]  # type: ignore[index]
            try:
                message = proc.conn.recv()
            except EOFError:
                raise RuntimeError(f"benchmark worker {proc.label} died ({proc.process.poll()})") from None
            proc.handle(message)
            if message[0] == "ready":
                del waiting[proc.conn]


def _measure_group(
    procs: Sequence[_Proc],
    *,
    warmup: int,
    samples: int,
    profile: int,
    starts: int,
    rng: random.Random,
    say: kit.Progress,
) -> dict[str, dict[str, Any]]:
    """The lockstep measurement of one mode's three setups."""
    out: dict[str, dict[str, Any]] = {proc.spec.name: {"samples": []} for proc in procs}
    for proc in procs:  # the first message starts the measured session's actor: it rebuilds from disk
        out[proc.spec.name]["first_ms"] = proc.call("first")
    for round_ in range(warmup + samples):
        order = list(procs)
        rng.shuffle(order)
        for proc in order:
            sample = proc.call("append", 1)[0]
            if round_ >= warmup:
                out[proc.spec.name]["samples"].append(sample)
        if round_ % 100 == 99:
            say(f"{procs[0].spec.mode}: round {round_ + 1}/{warmup + samples}")
    for round_ in range(starts):
        order = list(procs)
        rng.shuffle(order)
        for proc in order:
            out[proc.spec.name].setdefault("start_ms", []).append(proc.call("start", round_))
    if profile:
        say(f"{procs[0].spec.mode}: {profile} appends and {PROFILE_STARTS} starts per setup under cProfile")
        for proc in procs:
            out[proc.spec.name]["profile"] = proc.call("profile", profile)
            out[proc.spec.name]["profile_start"] = proc.call("profile_start", starts, PROFILE_STARTS)
    for proc in procs:
        out[proc.spec.name]["stats"] = proc.call("stats")
    return out


def _close_group(procs: Sequence[_Proc], *, large_close: bool, say: kit.Progress) -> None:
    """Close each runtime and time it; the large one only when asked, and only up to CLOSE_CAP seconds."""
    for proc in procs:
        if proc.spec.name == "many" and not large_close:
            proc.conn.send(("exit",))
            proc.process.wait()
            proc.ready["close"] = {"close_ms": None, "skipped": True}
            continue
        say(f"{proc.label}: closing the runtime")
        proc.conn.send(("close",))
        try:
            proc.ready["close"] = proc.reply(timeout=CLOSE_CAP)
        except TimeoutError:
            proc.ready["close"] = {"close_ms": None, "over_s": CLOSE_CAP}
        proc.stop()


def run(
    *,
    small_live: int = SMALL_LIVE,
    large_live: int = LARGE_LIVE,
    short_turns: int = SHORT_TURNS,
    long_turns: int = LONG_TURNS,
    samples: int = SAMPLES,
    warmup: int = WARMUP,
    profile_appends: int = PROFILE_APPENDS,
    start_samples: int = START_SAMPLES,
    throughput_sessions: int = THROUGHPUT_SESSIONS,
    throughput_turns: int = THROUGHPUT_TURNS,
    thresholds: Sequence[int] = THRESHOLDS,
    backend: str = "asyncio",
    modes: Sequence[str] = MODES,
    pin: bool = True,
    scratch: Path | None = None,
    progress: kit.Progress | None = None,
) -> dict[str, Any]:
    """Run the benchmark and return every figure as one JSON-ready dict.

    (a) compares `large_live` with `small_live` live sessions, (b) a measured session of `long_turns` with
    one of `short_turns`; `samples` measured appends per setup and mode after `warmup`. Each mode of `modes`
    gets its own three worker processes on `backend` ("asyncio" or "trio")."""
    if not (2 <= small_live < large_live and 1 <= short_turns < long_turns and samples >= 1 and warmup >= 0):
        raise ValueError("need 2 <= small_live < large_live, short_turns < long_turns, samples >= 1")
    if not set(modes) <= set(MODES) or not modes:
        raise ValueError(f"modes must be among {MODES}")
    say = progress or (lambda _message: None)
    wall = time.perf_counter()
    rng = random.Random(SEED)
    measured_turns = warmup + samples + profile_appends
    setups = {
        "small": (small_live, short_turns),
        "control": (small_live, short_turns),  # the same as small: what the process alone changes
        "many": (large_live, short_turns),
        "long": (small_live, long_turns),
    }
    groups: dict[str, dict[str, dict[str, Any]]] = {}
    throughput: dict[str, Any] = {}
    with kit.scratch("runtime", scratch) as root:
        procs: list[_Proc] = []
        try:
            for mode in modes:
                for name, (live, prefix) in setups.items():
                    spec = _Spec(
                        "latency",
                        name,
                        mode,
                        str(root / mode / name),
                        backend,
                        live=live,
                        prefix=prefix,
                        threshold=QUIET_THRESHOLD if mode == "appends_only" else DEFAULT_THRESHOLD,
                        start_samples=start_samples,
                        measured_turns=measured_turns,
                    )
                    procs.append(_start(spec, say))
            say(f"setting up {len(procs)} runtimes in parallel worker processes ({backend})")
            setup_started = time.perf_counter()
            _await_ready(procs)
            setup_s = time.perf_counter() - setup_started
            cpu = _pin_cpu() if pin else None
            if cpu is not None:
                for proc in procs:
                    proc.call("pin", cpu)
            for mode in modes:
                group = [proc for proc in procs if proc.spec.mode == mode]
                say(f"{mode}: measuring {samples} appends per setup after {warmup} warm-up, in lockstep")
                groups[mode] = _measure_group(
                    group,
                    warmup=warmup,
                    samples=samples,
                    profile=profile_appends if mode == "appends_only" else 0,
                    starts=start_samples,
                    rng=rng,
                    say=say,
                )
                _close_group(group, large_close=mode == modes[-1], say=say)
                for proc in group:
                    groups[mode][proc.spec.name]["ready"] = proc.ready
            if throughput_sessions > 0 and throughput_turns > 0 and thresholds:
                spec = _Spec(
                    "throughput",
                    "throughput",
                    "",
                    str(root / "throughput"),
                    backend,
                    sessions=throughput_sessions,
                    turns=throughput_turns,
                    thresholds=tuple(thresholds),
                )
                proc = _start(spec, say)
                procs.append(proc)
                throughput = proc.reply()
                proc.stop()
        finally:
            for proc in procs:
                proc.stop()
    return _result(
        groups,
        throughput,
        sizes={
            "small_live": small_live,
            "large_live": large_live,
            "short_turns": short_turns,
            "long_turns": long_turns,
            "samples": samples,
            "warmup": warmup,
            "profile_appends": profile_appends,
            "start_samples": start_samples,
        },
        measured_turns=measured_turns,
        backend=backend,
        cpu=cpu,
        setup_s=setup_s,
        wall_s=time.perf_counter() - wall,
        rng=rng,
    )


def _result(
    groups: dict[str, dict[str, dict[str, Any]]],
    throughput: dict[str, Any],
    *,
    sizes: dict[str, int],
    measured_turns: int,
    backend: str,
    cpu: int | None,
    setup_s: float,
    wall_s: float,
    rng: random.Random,
) -> dict[str, Any]:
    lengths = [len(text) for _role, text in _turns(measured_turns, SEED + 1)]
    tokens = [count_tokens(text) for _role, text in _turns(min(measured_turns, 200), SEED + 1)]
    result: dict[str, Any] = {
        "benchmark": "runtime",
        "backend": backend,
        "seed": SEED,
        "goal_ratio": GOAL_RATIO,
        "fsync": True,
        **sizes,
        "turn": {
            "chars_min": min(lengths),
            "chars_median": statistics.median(lengths),
            "chars_max": max(lengths),
            "tokens_median": statistics.median(tokens),
        },
        "lockstep": "one worker process per setup; each round the setups take turns in a shuffled order, one "
        "append each, one process working at a time",
        "pinned_cpu": cpu,
        "modes": {},
    }
    for mode, group in groups.items():
        entry: dict[str, Any] = {
            "threshold": QUIET_THRESHOLD if mode == "appends_only" else DEFAULT_THRESHOLD,
            "setups": {},
        }
        for name, data in group.items():
            samples = data["samples"]
            ms = [s[0] for s in samples]
            ready = data["ready"]
            setup: dict[str, Any] = {
                "live_sessions": sizes["large_live"] if name == "many" else sizes["small_live"],
                "turns_before": sizes["long_turns"] if name == "long" else sizes["short_turns"],
                "append_ms": _summary(ms),
                "first_ms": data["first_ms"],
                "start_ms": _summary(data.get("start_ms", [])),
                "build_s": ready.get("build_s"),
                "live_s": ready.get("live_s"),
                "live_ms_per_session": ready.get("live_ms_per_session"),
                "live_first_block_ms": ready.get("live_first_block_ms"),
                "live_last_block_ms": ready.get("live_last_block_ms"),
                "live_block": ready.get("live_block"),
                "tracked_objects": ready.get("tracked_objects"),
                "close": ready.get("close"),
                "stats": data["stats"],
                "gc_ms_in_appends": _summary([s[2] for s in samples if s[2] > 0]),
                "append_ms_each": ms,
            }
            if mode == "with_writer":
                setup["overlapped_ms"] = _summary([s[0] for s in samples if s[1]])
                setup["not_overlapped_ms"] = _summary([s[0] for s in samples if not s[1]])
            if "profile" in data:
                setup["profiled_ms_per_append"] = data["profile"]["ms_per_append"]
                setup["profiled_ms_per_start"] = data["profile_start"]["ms_per_start"]
            entry["setups"][name] = setup
        ratios: dict[str, Any] = {}
        for key, other in (("a_sessions", "many"), ("b_length", "long"), ("control", "control")):
            if other not in group or "small" not in group:
                continue
            large = [s[0] for s in group[other]["samples"]]
            small = [s[0] for s in group["small"]["samples"]]
            a, b = entry["setups"][other], entry["setups"]["small"]
            ratios[key] = {
                "compared": [other, "small"],
                "p50": kit.ratio(a["append_ms"]["p50"], b["append_ms"]["p50"]),
                "p99": kit.ratio(a["append_ms"]["p99"], b["append_ms"]["p99"]),
                "p50_ci95": _bootstrap(large, small, 0.5, rng),
                "p99_ci95": _bootstrap(large, small, 0.99, rng),
                "mean": kit.ratio(a["append_ms"]["mean"], b["append_ms"]["mean"]),
                "first": kit.ratio(a["first_ms"], b["first_ms"]),
                "start_p50": kit.ratio(a["start_ms"].get("p50", 0.0), b["start_ms"].get("p50", 0.0)),
            }
            if "profile" in group[other] and "profile" in group["small"]:
                ratios[key]["growth"] = kit.growth(
                    group[other]["profile"]["functions"],
                    group["small"]["profile"]["functions"],
                    top=8,
                    digits=4,
                )
                ratios[key]["start_growth"] = kit.growth(
                    group[other]["profile_start"]["functions"],
                    group["small"]["profile_start"]["functions"],
                    top=8,
                    digits=4,
                )
        entry["ratios"] = ratios
        entry["goals"] = {
            key: bool(r["p50"] <= GOAL_RATIO and r["p99"] <= GOAL_RATIO)
            for key, r in ratios.items()
            if key != "control"
        }
        result["modes"][mode] = entry
    primary = result["modes"].get("appends_only") or next(iter(result["modes"].values()))
    result["goals"] = primary["goals"]
    result["goals_judged_on"] = "appends_only" if "appends_only" in result["modes"] else next(iter(groups))
    result["goal_met"] = all(result["goals"].values())
    result["throughput"] = throughput
    peaks = {
        f"{mode}/{name}": s["stats"]["peak_rss_mib"]
        for mode, m in result["modes"].items()
        for name, s in m["setups"].items()
    }
    if throughput:
        peaks["throughput"] = throughput["peak_rss_mib"]
    result["peak_rss_mib"] = {"coordinator": _peak_rss_mib(), **peaks}
    result["setup_seconds"] = round(setup_s, 1)
    result["wall_seconds"] = round(wall_s, 1)
    return result


# -- output --------------------------------------------------------------------------------------------

_LABELS = {
    "small": "small",
    "control": "control (= small)",
    "many": "(a) many sessions",
    "long": "(b) long session",
}
_MODE_TITLES = {
    "appends_only": "appends only (threshold 10^12: no batch ever due)",
    "with_writer": f"with the writer running (threshold {DEFAULT_THRESHOLD:,})",
}


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _print_report(r: dict[str, Any]) -> None:
    console = kit.report_console(130)
    t = r["turn"]
    console.print(
        f"dagmem bench runtime ({r['backend']}): `await rt.append(...)` end to end on a FileSessionStore, fsync "
        f"on; turns of {t['chars_min']}-{t['chars_max']} chars (median {t['chars_median']:g}, "
        f"~{t['tokens_median']:g} tokens); {r['samples']} measured appends per setup after {r['warmup']} "
        f"warm-up; {r['lockstep']}"
        + (
            f"; after setup every worker's threads are pinned to CPU {r['pinned_cpu']}"
            if r["pinned_cpu"] is not None
            else ""
        )
    )
    for mode, m in r["modes"].items():
        columns = ["live\nsessions", "turns in\nsession", "p50", "p90", "p99", "max", "mean"]
        if mode == "with_writer":
            columns.append("during a batch:\nn, p50, max")
        columns.append("GC in appends:\ngen2 n, max ms")
        table = kit.table(f"append latency, ms: {_MODE_TITLES[mode]}", "setup", *columns)
        for name, label in _LABELS.items():
            if name not in m["setups"]:
                continue
            s = m["setups"][name]
            a = s["append_ms"]
            gc_stats = s["stats"]["gc"]
            row = [
                label,
                f"{s['live_sessions']:,}",
                f"{s['turns_before']:,}",
                *(_fmt(a[k]) for k in ("p50", "p90", "p99", "max", "mean")),
            ]
            if mode == "with_writer":
                o = s["overlapped_ms"]
                row.append(f"{o['n']}, {_fmt(o.get('p50'))}, {_fmt(o.get('max'))}" if o["n"] else "0")
            row.append(f"{gc_stats['collections']['gen2']}, {_fmt(gc_stats['pause_ms_max'])}")
            table.add_row(*row)
        for key, label in (
            ("control", "ratio control / small"),
            ("a_sessions", "ratio (a) / small"),
            ("b_length", "ratio (b) / small"),
        ):
            if key not in m["ratios"]:
                continue
            q = m["ratios"][key]
            ci50, ci99 = q["p50_ci95"], q["p99_ci95"]
            table.add_row(
                label,
                "",
                "",
                f"{q['p50']:.2f} [{ci50[0]:.2f}-{ci50[1]:.2f}]",
                "",
                f"{q['p99']:.2f} [{ci99[0]:.2f}-{ci99[1]:.2f}]",
                "",
                f"{q['mean']:.2f}",
            )
        console.print(table)
        if mode == "with_writer":
            batches = {name: s["stats"]["batches"] for name, s in m["setups"].items()}
            written = {name: s["stats"]["written_records"] for name, s in m["setups"].items()}
            console.print(
                f"  batches written during the run (all sessions): {batches}; records written: {written}. "
                "An append 'during a batch' started or ended while a batch of the measured session was in "
                "flight (written by the writer, then its nodes marked by the session actor)."
            )

    table = kit.table(
        "one-time and setup costs (ms unless stated)",
        "setup",
        "first message to m:\nstart + rebuild",
        "start a 1-turn session\np50 (p99), lockstep",
        "make the others live\ns (ms/session first→last 10%)",
        "fixture\nbuilt in s",
        "tracked\nobjects",
        "peak RSS\nMiB",
        "close the\nruntime",
    )
    for mode, m in r["modes"].items():
        for name, label in _LABELS.items():
            if name not in m["setups"]:
                continue
            s = m["setups"][name]
            close = s["close"] or {}
            if close.get("close_ms") is not None:
                closed = f"{close['close_ms']:,.0f} ms"
            elif close.get("over_s") is not None:
                closed = f"> {close['over_s']:g} s (stopped waiting)"
            else:
                closed = "not measured"
            st = s["start_ms"]
            if s["live_s"] is None:
                made_live = "-"
            elif s["live_sessions"] - 1 >= 100:
                made_live = f"{_fmt(s['live_s'], 1)} ({_fmt(s['live_first_block_ms'])}→{_fmt(s['live_last_block_ms'])})"
            else:
                made_live = f"{_fmt(s['live_s'], 1)}"
            table.add_row(
                f"{mode}: {label}",
                _fmt(s["first_ms"]),
                f"{_fmt(st.get('p50'))} ({_fmt(st.get('p99'))})" if st["n"] else "-",
                made_live,
                _fmt(s["build_s"], 1),
                f"{s['tracked_objects']:,}",
                _fmt(s["stats"]["peak_rss_mib"], 0),
                closed,
            )
    console.print(table)
    for mode, m in r["modes"].items():
        setups = m["setups"]
        if "long" in setups and "small" in setups:
            extra = setups["long"]["first_ms"] - setups["small"]["first_ms"]
            turns = r["long_turns"] - r["short_turns"]
            console.print(
                f"  {mode}: the one-time rebuild (first message to m) took {setups['long']['first_ms']:,.1f} ms for "
                f"{r['long_turns']:,} turns vs {setups['small']['first_ms']:,.1f} ms for {r['short_turns']:,}: "
                f"{extra / turns * 1e3:,.1f} µs per extra turn."
            )
        if "many" in setups and "small" in setups:
            q = m["ratios"].get("a_sessions", {})
            if "start_p50" in q:
                console.print(
                    f"  {mode}: starting a session actor (a message to a session that is not live) costs "
                    f"{setups['many']['start_ms']['p50']:.2f} ms with {r['large_live']:,} live sessions vs "
                    f"{setups['small']['start_ms']['p50']:.2f} ms with {r['small_live']:,} (p50): "
                    f"{q['start_p50']:.2f}×."
                )
            if q.get("start_growth") and q.get("start_p50", 0.0) > r["goal_ratio"]:
                kit.print_growth(
                    console,
                    "largest growth in self time per start (cProfile, I/O inline), small → many:",
                    q["start_growth"][:5],
                    indent=4,
                )

    if r["throughput"]:
        table = kit.table(
            "writer throughput: flush(force=True) over sessions whose turns are all owed "
            "(ExtractiveDistiller, fsync on)",
            "threshold",
            "sessions × turns",
            "tokens",
            "batches",
            "records/batch",
            "seconds",
            "turns/s",
            "batches/s",
            "ms/batch",
            "oracle",
            left=0,
        )
        for run_ in r["throughput"]["runs"]:
            o = run_["oracle"]
            table.add_row(
                f"{run_['threshold']:,}",
                f"{run_['sessions']} × {run_['turns'] // max(1, run_['sessions'])}",
                f"{run_['tokens']:,}",
                f"{run_['batches']:,}",
                f"{run_['records_per_batch']:g}",
                _fmt(run_["seconds"]),
                _fmt(run_["records_per_s"], 1),
                _fmt(run_["batches_per_s"]),
                _fmt(run_["ms_per_batch"], 1),
                "ok" if o["ok"] else f"{o['violations']} violations",
            )
        console.print(table)
        console.print(
            "  turns/s = turns written and marked / wall time of flush(force=True); the flush also starts each "
            "session's actor, which reads the session from disk."
        )

    judged = r["goals_judged_on"]
    control = r["modes"][judged]["ratios"].get("control")
    if control is not None:
        console.print(
            f"noise reference: `control` is a second process set up exactly like `small`; control / small is "
            f"p50 {control['p50']:.2f}, p99 {control['p99']:.2f} ({judged}): ratios that far from 1 need no cause "
            "but the process."
        )
    for key, what in (
        ("a_sessions", f"{r['large_live']:,} vs {r['small_live']:,} live sessions"),
        ("b_length", f"a {r['long_turns']:,}-turn vs a {r['short_turns']:,}-turn session"),
    ):
        if key not in r["goals"]:
            continue
        q = r["modes"][judged]["ratios"][key]
        met = r["goals"][key]
        others = ", ".join(
            f"{mode}: p50 {m['ratios'][key]['p50']:.2f}, p99 {m['ratios'][key]['p99']:.2f}"
            for mode, m in r["modes"].items()
            if mode != judged and key in m["ratios"]
        )
        console.print(
            f"GOAL ({key[0]}) {'MET' if met else 'NOT MET'}: append, {what}, {judged}: p50 ratio {q['p50']:.2f}, "
            f"p99 ratio {q['p99']:.2f} (goal ≤ {r['goal_ratio']:g} for both)"
            + (f"; {others}" if others else "")
        )
        if not met and "growth" in q:
            kit.print_growth(
                console,
                "largest growth in self time per append (cProfile, I/O inline), small → large:",
                q["growth"],
            )
    for run_ in r["throughput"].get("runs", []):
        console.print(
            f"writer throughput at threshold {run_['threshold']:,}: {run_['records_per_s']:,.1f} turns/s "
            f"({run_['batches']:,} batches, {run_['records_per_batch']:g} turns each, {run_['seconds']:.2f} s)"
        )
    peaks = r["peak_rss_mib"]
    console.print("peak RSS, MiB: " + ", ".join(f"{name} {value:,.0f}" for name, value in peaks.items()))
    console.print(f"wall time: {r['wall_seconds']} s (parallel setup {r['setup_seconds']} s)")


def main(args: argparse.Namespace) -> int:
    """`dagmem bench runtime [--quick] [--json]`: report only; the exit status is 0 whatever the figures."""

    def measure(quick: bool, progress: kit.Progress) -> dict[str, Any]:
        return run(
            large_live=QUICK_LARGE_LIVE if quick else LARGE_LIVE,
            long_turns=QUICK_LONG_TURNS if quick else LONG_TURNS,
            samples=QUICK_SAMPLES if quick else SAMPLES,
            warmup=QUICK_WARMUP if quick else WARMUP,
            profile_appends=QUICK_PROFILE_APPENDS if quick else PROFILE_APPENDS,
            start_samples=QUICK_START_SAMPLES if quick else START_SAMPLES,
            throughput_sessions=QUICK_THROUGHPUT_SESSIONS if quick else THROUGHPUT_SESSIONS,
            throughput_turns=QUICK_THROUGHPUT_TURNS if quick else THROUGHPUT_TURNS,
            progress=progress,
        )

    return kit.cli(args, measure, _print_report, elapsed=True)
