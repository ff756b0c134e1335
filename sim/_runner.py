"""Run a workload through the real runtime in virtual time, then judge the files with the oracle.

One `Runtime` (its supervisors, session actors, the writer) serves every session; each session's script
is driven by its own host task that sleeps until each step's virtual time and makes the call, retrying
when a crash or a restart interrupted it, as a host would. Sessions start in the order of their start
times. When every script is done, the run waits out the idle timeout (faults still armed), then disarms
the faults, drains with `flush(force=True)`, stops the runtime and hands the home to the oracle with
`drained=True`.

Sessions live in the in-memory store by default (the workspace is on disk either way); `real_fs` puts
them on disk with blocking I/O run inline (`offload=False`), so the virtual clock stays exact and the run
deterministic. Wall-clock figures (write latency, throughput) are measured here but never enter the trace.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import random
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

import anyio
import trio

from ..actors import ActorStopped, MailboxClosed, Runtime, RuntimeConfig, RuntimeCrashed, SessionCrashed
from ..memory import faults
from ..memory.audit import OracleReport, Violation, check_home
from ..memory.durable import ensure_workspace_id
from ..memory.errors import InvalidInput
from ..memory.format import HEAD, HomePaths, clear_caches
from ..memory.recall import clear_caches as clear_recall_caches
from ..memory.store import FakeClock
from ..memory.write import ExtractiveDistiller
from ..supervision import SupervisorEvent
from ._content import Content, load_content
from ._determinism import Trace, Watchdog, run_virtual
from ._faults import FaultPlan, FaultyDistiller
from ._recall_oracle import check_recall, check_successors
from ._recording import FileCounts, GitOp, SimStore
from ._rss import peak_rss_bytes
from ._workload import AT_HEAD, SessionScript, Step, WorkloadParams, outline, plan_session, session_id

__all__ = [
    "EPOCH",
    "Home",
    "HomeResult",
    "Observer",
    "SimConfig",
    "SimResult",
    "git_sample",
    "run_home",
    "workspace_id_for",
]

EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00+00:00: virtual time 0 in the files' epoch seconds
HOST_ATTEMPTS = 50  # a host retries a call interrupted by a crash this many times
SPILL_NAME = ".sim-sessions.spill"  # in the home: the in-memory store's sessions no actor holds (removed)


@dataclass(frozen=True)
class SimConfig:
    seed: int = 1
    sessions: int = 2_000
    faults: float = 0.0
    threshold: int = 1_500  # tokens per batch (small, so that long branches write per turn too)
    # The sessions are dealt round-robin into this many homes, each with a runtime of its own (DESIGN §11:
    # a home is the shard); the homes share nothing, so they can run in parallel (`sim.run(workers=)`).
    homes: int = 1
    real_fs: bool = False
    fsync: bool = False  # with real_fs: fsync every durable write, as production does
    content: Path | None = None
    home: Path | None = None  # where the home goes (kept); None: a temporary directory, removed
    git_sample: int = 2
    trace_path: Path | None = None
    params: WorkloadParams = field(default_factory=WorkloadParams)
    # Restarts each supervisor allows per period: high, so that injected faults cannot exhaust it (the
    # report counts restarts and escalations instead); a run whose root gives up fails.
    intensity: int = 100_000


@dataclass(frozen=True)
class HomeResult:
    """What one home of a multi-home run reports of itself (the `homes` list of `dagmem sim --json`)."""

    index: int
    sessions: int
    workspace_id: str
    trace_sha256: str
    turns: int
    run_s: float
    oracle_s: float
    pid: int  # the worker process that ran it
    peak_rss_bytes: int  # that process's peak when the home was done

    def summary(self) -> dict[str, Any]:
        return {
            "home": self.index,
            "sessions": self.sessions,
            "workspace_id": self.workspace_id,
            "trace_sha256": self.trace_sha256,
            "turns": self.turns,
            "run_s": round(self.run_s, 2),
            "oracle_s": round(self.oracle_s, 2),
            "pid": self.pid,
            "peak_rss_bytes": self.peak_rss_bytes,
        }


@dataclass
class SimResult:
    config: SimConfig
    workspace_id: str
    trace_sha256: str
    trace_events: int
    events: dict[str, int]
    oracle: OracleReport
    violations: list[Violation]
    appends: int
    sessions_by_kind: dict[str, int]
    virtual_s: float
    run_s: float  # wall seconds in the event loop (driving and draining)
    oracle_s: float
    peak_rss_bytes: int
    faults_injected: dict[str, int]
    faults_by_site: dict[str, int]
    write_latency_s: list[float]  # wall seconds per writer transaction, in order
    writes: dict[str, int]  # "ok" / reason code -> count
    supervision: dict[str, int]  # event kind -> count
    host_retries: int
    file_counts: dict[str, FileCounts]  # session -> node files written
    git_ops: dict[str, list[GitOp]]  # the sampled sessions' writes and commits
    batch_sizes: list[int]
    runtime_crashed: str | None
    home: Path | None  # kept (real_fs with a home given), else None
    homes: list[HomeResult] = field(default_factory=list)  # each home of a multi-home run, in order


def workspace_id_for(seed: int | str) -> str:
    """The workspace id of a run's home: `seed` is the home's key (`Home.key`), the seed itself for one."""
    return "w-" + hashlib.sha256(f"dagmem-sim:workspace:{seed}".encode()).hexdigest()[:16]


def git_sample(config: SimConfig) -> list[str]:
    """The sessions replayed into real git: the longest planned ones (ties to the lower index)."""
    if config.git_sample <= 0:
        return []
    outlines = [outline(config.seed, i, config.params) for i in range(config.sessions)]
    outlines.sort(key=lambda o: (-o.exchanges, o.index))
    return sorted(session_id(o.index) for o in outlines[: config.git_sample])


@dataclass(frozen=True)
class Home:
    """One home of a run: which sessions it holds and which of them git replays."""

    index: int
    sessions: tuple[int, ...]  # workload indices, in order
    sample: tuple[str, ...]  # session ids replayed into git

    @classmethod
    def all_of(cls, config: SimConfig) -> list[Home]:
        sample = git_sample(config)
        homes = []
        for index in range(config.homes):
            sessions = tuple(range(index, config.sessions, config.homes))
            ids = {session_id(i) for i in sessions}
            homes.append(cls(index, sessions, tuple(s for s in sample if s in ids)))
        return homes

    def key(self, config: SimConfig) -> str:
        """What tells this home's seeded streams (faults) from another's: the seed alone for one home."""
        return str(config.seed) if config.homes == 1 else f"{config.seed}:{self.index}/{config.homes}"


class Observer(Protocol):
    """Told how a run goes (a progress bar): never part of the trace."""

    def session_done(self, done: int, sessions: int, virtual_s: float) -> None: ...

    def phase(self, name: str) -> None: ...


class _Run:
    def __init__(
        self, config: SimConfig, shard: Home, home: Path, sink: IO[str] | None, observer: Observer | None
    ) -> None:
        self.config = config
        self.shard = shard
        self.home = home
        self.observer = observer
        self.content: Content = load_content(config.content)
        self.trace = Trace(sink)
        self.plan = FaultPlan(shard.key(config), config.faults)
        self.plan.observer = self._fault
        self.store = SimStore(
            clock=FakeClock(EPOCH, follows_loop=True),
            home=home if config.real_fs else None,
            fsync=config.fsync,
            sample=shard.sample,
            spill_to=None if config.real_fs else home / SPILL_NAME,
        )
        self.latencies: list[float] = []
        self.writes: Counter[str] = Counter()
        self.supervision: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.batch_sizes: list[int] = []
        self.violations: list[Violation] = []
        self.appends = 0
        self.rewound_writes = 0  # node files a rewind rewrote
        self.retries = 0
        self.done = 0
        self.crashed: str | None = None
        self.virtual_end = 0.0
        self.interrupted = False  # the run did not reach its drain (a livelock)
        self.watchdog: Watchdog | None = None
        self._write_started = 0.0

    # -- observation -----------------------------------------------------------------------------------

    def on_trace(self, kind: str, fields: dict[str, Any]) -> None:
        self.trace.record(kind, fields)
        if self.watchdog is not None:
            self.watchdog.poke()
        if kind == "write":
            self.latencies.append(time.perf_counter() - self._write_started)
            self.writes["ok" if "tx" in fields else str(fields["code"])] += 1
            self.plan.write_done()
        elif kind == "written":
            self.batch_sizes.append(len(fields["nodes"]))
        elif kind == "rewind":
            self.rewound_writes += len(fields["nodes"])

    def on_supervisor(self, event: SupervisorEvent) -> None:
        error = None if event.error is None else type(event.error).__name__
        self.trace.record(
            "sup", {"supervisor": event.supervisor, "kind": event.kind, "child": event.child, "error": error}
        )
        self.supervision[event.kind] += 1
        if event.child == "writer" and event.kind in ("crashed", "terminated"):
            self.plan.writer_stopped()

    def _fault(self, site: str, kind: str) -> None:
        self.trace.record("fault", {"site": site, "kind": kind})

    def hook(self, site: str) -> None:
        if site == "writer:batch":
            self._write_started = time.perf_counter()
        self.plan.hit(site)

    # -- the host ----------------------------------------------------------------------------------------

    async def _perform(self, rt: Runtime, script: SessionScript, step: Step, rng: random.Random) -> None:
        sid = script.session
        for attempt in range(HOST_ATTEMPTS):
            try:
                if step.op == "append":
                    parent = HEAD if step.parent == AT_HEAD else step.parent
                    metadata = None if step.display is None else {"display": step.display}
                    text = self.content.text(script, step)
                    await rt.append(
                        sid,
                        step.role,
                        text,
                        predecessor=parent,
                        node_id=step.node,
                        metadata=metadata,
                        spawned=step.spawned,
                    )
                    self.appends += 1
                elif step.op == "head":
                    await rt.set_head(sid, step.node)
                elif step.op == "rewind":
                    await rt.rewind(sid, step.node)
                else:
                    await rt.end_session(sid)
                return
            except (SessionCrashed, MailboxClosed, ActorStopped) as exc:
                # The call was interrupted by a crash or a restart: a host tries again.
                self.retries += 1
                self.trace.record("host-retry", {"session": sid, "op": step.op, "error": type(exc).__name__})
                await anyio.sleep(rng.uniform(0.01, 0.5))
            except InvalidInput as exc:
                if step.op == "append" and attempt and "already has" in str(exc):
                    self.appends += 1
                    return  # an interrupted append that had landed after all
                self._unexpected(sid, step, exc)
                return
            except RuntimeCrashed:
                raise
            except Exception as exc:
                self._unexpected(sid, step, exc)
                return
        self.violations.append(
            Violation("host-gave-up", sid, f"{step.op} {step.node} after {HOST_ATTEMPTS} tries")
        )

    def _unexpected(self, sid: str, step: Step, exc: BaseException) -> None:
        detail = f"{step.op} {step.node}: {type(exc).__name__}: {exc}"
        self.trace.record("host-error", {"session": sid, "op": step.op, "error": type(exc).__name__})
        self.violations.append(Violation("host-error", sid, detail))

    async def _drive(self, rt: Runtime, index: int) -> None:
        script = plan_session(self.config.seed, index, self.config.params)
        self.kinds[script.kind] += 1
        rng = random.Random(f"dagmem-sim:host:{self.config.seed}:{index}")
        at = -1.0
        try:
            for step in script.steps:
                if step.at != at:  # steps at the same instant follow each other without a checkpoint
                    await anyio.sleep_until(step.at)
                    at = step.at
                await self._perform(rt, script, step, rng)
        except RuntimeCrashed as exc:
            self.crashed = self.crashed or str(exc)
            return
        self.done += 1
        if self.observer is not None:
            self.observer.session_done(self.done, len(self.shard.sessions), anyio.current_time())

    async def _launch(self, rt: Runtime) -> None:
        params = self.config.params
        starts = sorted((outline(self.config.seed, i, params).start, i) for i in self.shard.sessions)
        async with anyio.create_task_group() as tg:
            for start, index in starts:
                await anyio.sleep_until(start)
                tg.start_soon(self._drive, rt, index)

    async def main(self) -> None:
        config = self.config
        params = config.params
        runtime_config = RuntimeConfig(
            token_threshold=config.threshold,
            idle_after=params.idle_after,
            abandon_after=60.0,
            session_intensity=config.intensity,
            session_period=30.0,
            sessions_intensity=config.intensity,
            sessions_period=60.0,
            root_intensity=config.intensity,
            root_period=60.0,
            fsync=config.fsync and config.real_fs,
        )
        distiller = FaultyDistiller(ExtractiveDistiller(), self.plan)
        with anyio.CancelScope() as scope:
            watchdog = self.watchdog = Watchdog(scope)
            trio.lowlevel.add_instrument(watchdog)
            await self._run_runtime(runtime_config, distiller)
        trio.lowlevel.remove_instrument(watchdog)
        if watchdog.fired is not None:
            self.interrupted = True
            self.violations.append(
                Violation(
                    "livelock",
                    f"t={watchdog.fired!r}",
                    "tasks kept running at one virtual instant without an event: the clock stopped",
                )
            )
            self.trace.record("livelock", {})
        self.virtual_end = anyio.current_time()

    async def _run_runtime(self, runtime_config: RuntimeConfig, distiller: FaultyDistiller) -> None:
        params = self.config.params
        try:
            async with Runtime.open(
                self.home,
                distiller=distiller,
                store=self.store,
                config=runtime_config,
                trace=self.on_trace,
                epoch=FakeClock(EPOCH, follows_loop=True),
                on_event=self.on_supervisor,
                offload=False,
            ) as rt:
                await self._launch(rt)
                if self.crashed is not None:
                    raise RuntimeCrashed(self.crashed)
                # Let the sessions that never end go idle, with faults still armed; then drain clean.
                await anyio.sleep(params.idle_after + 300.0)
                self.plan.enabled = False
                if self.observer is not None:
                    self.observer.phase("draining")
                self.trace.record("drain", {})
                await rt.flush(force=True)
                status = rt.status()
                self.trace.record("drained", {"pending": status.pending_turns, "live": status.live_sessions})
        except RuntimeCrashed as exc:
            self.crashed = self.crashed or str(exc)
            self.trace.record("runtime-crashed", {})


def _scratch_parent(real_fs: bool) -> str | None:
    """In memory mode the workspace goes to tmpfs when there is one (unless TMPDIR says otherwise): the
    run is about the actors and the write logic, not the disk; `real_fs` runs on the real disk."""
    if real_fs or os.environ.get("TMPDIR") or not os.access("/dev/shm", os.W_OK):
        return None
    return "/dev/shm"


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """Python's cyclic collector, at its default thresholds, spent 7% of a 1,000-session run traversing the
    in-memory store's objects again and again (2,400 young collections); a run makes few cycles, so collect
    rarely while it lasts."""
    old = gc.get_threshold()
    gc.collect()
    gc.freeze()  # what exists now (imports, the workload's tables) is never traversed again
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def trace_path_of(config: SimConfig, shard: Home) -> Path | None:
    """Where a home's trace goes: `config.trace_path` itself for one home, a numbered part of it for
    several (`sim.run` joins the parts in home order)."""
    path = config.trace_path
    if path is None or config.homes == 1:
        return path
    return path.with_name(f"{path.stem}.{shard.index:03d}{path.suffix}")


def run_home(config: SimConfig, shard: Home, *, observer: Observer | None = None) -> SimResult:
    """Run one home of `config` (the whole run when `config.homes` is 1); everything measured comes back
    in the result. Its home is `config.home` for one home, `config.home/<index>` for several."""
    scratch = config.home is None
    if config.home is None:
        home = Path(tempfile.mkdtemp(prefix="dagmem-sim-", dir=_scratch_parent(config.real_fs)))
    else:
        home = config.home if config.homes == 1 else config.home / f"{shard.index:03d}"
    home.mkdir(parents=True, exist_ok=True)
    paths = HomePaths(home).workspace
    memory = paths.root
    new_id = workspace_id_for(shard.key(config))
    workspace_id = ensure_workspace_id(paths.workspace_id, fsync=False, new_id=new_id)
    state: _Run | None = None
    try:
        with contextlib.ExitStack() as stack:
            sink = None
            trace_path = trace_path_of(config, shard)
            if trace_path is not None:
                sink = stack.enter_context(trace_path.open("w", encoding="utf-8"))
            state = _Run(config, shard, home, sink, observer)
            started = time.perf_counter()
            with faults.armed(state.hook), _few_collections():
                run_virtual(state.main, shard.key(config))
            run_s = time.perf_counter() - started
        if observer is not None:
            observer.phase("oracle")
        started = time.perf_counter()
        drained = state.crashed is None and not state.interrupted
        report = check_home(state.store, memory, workspace_id, drained=drained, sessions=None)
        if drained:  # DESIGN §8: no sibling block above an on-branch block, classes as the files say
            state.violations.extend(check_recall(state.store, memory))
            state.violations.extend(check_successors(memory))  # DESIGN §12; off without supersessions
        oracle_s = time.perf_counter() - started
        # O(batch) marking: a node file is rewritten once when it gets its marker (never by a sweep, never
        # again for the same marker), plus once per rewind that names it.
        rewritten = sum(c.rewritten for c in state.store.recorder.counts.values())
        if rewritten != report.marked + state.rewound_writes:
            state.violations.append(
                Violation(
                    "node-rewrites",
                    "all sessions",
                    f"{rewritten} node files rewritten for {report.marked} markers and "
                    f"{state.rewound_writes} rewound nodes",
                )
            )
    finally:
        if state is not None:
            state.store.close()
        # What this home's files left in the process's caches is no use to the next home.
        clear_caches()
        clear_recall_caches()
        (home / SPILL_NAME).unlink(missing_ok=True)
        if scratch:
            shutil.rmtree(home, ignore_errors=True)
    violations = list(report.violations) + state.violations
    if state.crashed is not None:
        violations.append(Violation("runtime-crashed", "root", state.crashed))
    return SimResult(
        config=config,
        workspace_id=workspace_id,
        trace_sha256=state.trace.hexdigest(),
        trace_events=state.trace.events,
        events=dict(sorted(state.trace.kinds.items())),
        oracle=report,
        violations=violations,
        appends=state.appends,
        sessions_by_kind=dict(sorted(state.kinds.items())),
        virtual_s=state.virtual_end,
        run_s=run_s,
        oracle_s=oracle_s,
        peak_rss_bytes=peak_rss_bytes(),
        faults_injected=dict(sorted(state.plan.injected.items())),
        faults_by_site=dict(sorted(state.plan.by_site.items())),
        write_latency_s=state.latencies,
        writes=dict(sorted(state.writes.items())),
        supervision=dict(sorted(state.supervision.items())),
        host_retries=state.retries,
        file_counts=state.store.recorder.counts,
        git_ops=state.store.recorder.ops,
        batch_sizes=state.batch_sizes,
        runtime_crashed=state.crashed,
        home=None if scratch else home,
    )
