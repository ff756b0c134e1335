"""A run of several homes: each home in a process of its own, the results joined in home order.

The homes of a run share nothing (DESIGN §11: a home is the shard), so `workers` processes run them side
by side. What a home does depends on the seed and its own index, never on which process ran it or when,
and the results are joined in home order: the same seed gives the same trace hash (the SHA-256 of the
homes' hashes, one per line, in order) whatever the number of workers. One home runs in this process.

A worker runs its homes one after another and forgets what each held (`run_home` returns its caches),
so the run's memory is bounded by the homes' size, not the run's. Its peak RSS is counted without
sharing: this process's own plus each worker's highest, an upper bound of what the run held at once.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import logging
import multiprocessing
import os
import queue
import shutil
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from multiprocessing.queues import Queue

from ..memory.audit import OracleReport
from ._rss import peak_rss_bytes
from ._runner import Home, HomeResult, Observer, SimConfig, SimResult, run_home, trace_path_of

__all__ = ["run"]

_progress: Queue[tuple[int, int, float]] | None = None  # a worker's line to the parent


def run(config: SimConfig, *, observer: Observer | None = None, workers: int | None = None) -> SimResult:
    """Run the simulation of `config`; everything measured comes back in the result. Several homes run in
    `workers` processes (default: as many as there are cores, at most one per home)."""
    if not 1 <= config.homes <= config.sessions:
        raise ValueError(
            f"a run needs between 1 and {config.sessions} homes (one per session), not {config.homes}"
        )
    homes = Home.all_of(config)
    if config.homes == 1:
        return run_home(config, homes[0], observer=observer)
    workers = min(config.homes, workers or os.cpu_count() or 1)
    if workers < 1:
        raise ValueError(f"a run needs at least one worker, not {workers}")
    started = time.perf_counter()
    results = _run_parallel(config, homes, workers, observer)
    wall = time.perf_counter() - started
    if config.trace_path is not None:
        _join_traces(config, homes)
    return _joined(config, results, wall)


def _run_parallel(
    config: SimConfig, homes: list[Home], workers: int, observer: Observer | None
) -> list[tuple[int, SimResult]]:
    # spawn, not fork: the parent may run threads (a progress bar), and a fork copies their locks.
    context = multiprocessing.get_context("spawn")
    progress: Queue[tuple[int, int, float]] = context.Queue()
    level = logging.getLogger("dagmem").getEffectiveLevel()
    with (
        concurrent.futures.ProcessPoolExecutor(
            workers, mp_context=context, initializer=_start_worker, initargs=(progress, level)
        ) as pool,
        _forwarding(progress, config.sessions, observer),
    ):
        futures = [pool.submit(_run_one, config, home) for home in homes]
        try:
            return [future.result() for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()
            # Leaving the pool waits for the homes being run: on Ctrl-C (which a worker started in
            # another process group never sees) that was the rest of the run. Stop the workers now.
            for process in list(pool._processes.values()):
                process.terminate()
            raise


def _start_worker(progress: Queue[tuple[int, int, float]], level: int) -> None:
    global _progress
    _progress = progress
    logging.getLogger("dagmem").setLevel(level)


class _Told:
    """A home's progress, sent to the parent (a worker's `Observer`)."""

    def __init__(self, home: int) -> None:
        self.home = home

    def session_done(self, done: int, sessions: int, virtual_s: float) -> None:
        if _progress is not None:
            _progress.put((self.home, done, virtual_s))

    def phase(self, name: str) -> None:
        pass  # the parent names one phase for all the homes


def _run_one(config: SimConfig, home: Home) -> tuple[int, SimResult]:
    result = run_home(config, home, observer=_Told(home.index))
    return os.getpid(), result


@contextlib.contextmanager
def _forwarding(
    progress: Queue[tuple[int, int, float]], sessions: int, observer: Observer | None
) -> Iterator[None]:
    """Sum the homes' progress for `observer`, from a thread, until the block ends."""
    if observer is None:
        yield
        return
    done: dict[int, int] = {}
    furthest = 0.0
    stop = threading.Event()
    said_checking = False

    def forward() -> None:
        nonlocal furthest, said_checking
        while True:
            try:
                message = progress.get(timeout=0.2)
            except queue.Empty:
                if stop.is_set():  # the run is over and nothing more came: every message was told
                    return
                continue
            except (EOFError, OSError, ValueError):  # the queue is closed
                return
            home, count, virtual_s = message
            done[home] = count
            furthest = max(furthest, virtual_s)
            total = sum(done.values())
            observer.session_done(total, sessions, furthest)
            if total == sessions and not said_checking:
                said_checking = True
                observer.phase("draining and checking the homes")

    thread = threading.Thread(target=forward, name="dagmem-sim-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=1.0)


def _join_traces(config: SimConfig, homes: list[Home]) -> None:
    """The homes' traces, one after another in home order, as `config.trace_path`."""
    assert config.trace_path is not None
    with config.trace_path.open("wb") as out:
        for home in homes:
            part = trace_path_of(config, home)
            assert part is not None
            with part.open("rb") as source:
                shutil.copyfileobj(source, out)
            part.unlink()


def _joined(config: SimConfig, results: list[tuple[int, SimResult]], wall: float) -> SimResult:
    """One result of many homes, in home order. `run_s` is the wall time of the whole parallel phase,
    each home's oracle included (so turns/s is not flattered); `oracle_s` is the homes' oracle seconds
    summed."""
    parts = [result for _pid, result in results]
    peaks: dict[int, int] = {}
    for pid, result in results:
        peaks[pid] = max(peaks.get(pid, 0), result.peak_rss_bytes)
    homes = [
        HomeResult(
            index=i,
            sessions=sum(result.sessions_by_kind.values()),
            workspace_id=result.workspace_id,
            trace_sha256=result.trace_sha256,
            turns=result.events.get("turn", 0),
            run_s=result.run_s,
            oracle_s=result.oracle_s,
            pid=pid,
            peak_rss_bytes=result.peak_rss_bytes,
        )
        for i, (pid, result) in enumerate(results)
    ]
    digest = hashlib.sha256("".join(f"{part.trace_sha256}\n" for part in parts).encode()).hexdigest()
    crashed = [f"home {i}: {part.runtime_crashed}" for i, part in enumerate(parts) if part.runtime_crashed]
    first = parts[0]
    return replace(
        first,
        config=config,
        trace_sha256=digest,
        trace_events=sum(part.trace_events for part in parts),
        events=_summed(part.events for part in parts),
        oracle=_joined_oracle([part.oracle for part in parts]),
        violations=[v for part in parts for v in part.violations],
        appends=sum(part.appends for part in parts),
        sessions_by_kind=_summed(part.sessions_by_kind for part in parts),
        virtual_s=max(part.virtual_s for part in parts),
        run_s=wall,
        oracle_s=sum(part.oracle_s for part in parts),
        peak_rss_bytes=peak_rss_bytes() + sum(peaks.values()),
        faults_injected=_summed(part.faults_injected for part in parts),
        faults_by_site=_summed(part.faults_by_site for part in parts),
        write_latency_s=[s for part in parts for s in part.write_latency_s],
        writes=_summed(part.writes for part in parts),
        supervision=_summed(part.supervision for part in parts),
        host_retries=sum(part.host_retries for part in parts),
        file_counts={sid: c for part in parts for sid, c in part.file_counts.items()},
        git_ops={sid: ops for part in parts for sid, ops in sorted(part.git_ops.items())},
        batch_sizes=[n for part in parts for n in part.batch_sizes],
        runtime_crashed="; ".join(crashed) or None,
        home=config.home if first.home is not None else None,
        homes=homes,
    )


def _summed(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for count in counts:
        total.update(count)
    return dict(sorted(total.items()))


def _joined_oracle(reports: list[OracleReport]) -> OracleReport:
    return OracleReport(
        violations=[v for r in reports for v in r.violations],
        owed=[o for r in reports for o in r.owed],
        records=sum(r.records for r in reports),
        consumed=sum(r.consumed for r in reports),
        consumed_rewound=sum(r.consumed_rewound for r in reports),
        archived=sum(r.archived for r in reports),
        cited=sum(r.cited for r in reports),
        marked=sum(r.marked for r in reports),
    )
