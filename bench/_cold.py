"""`dagmem bench cold`: what a fresh process pays before it does anything, and what recall costs when a
hook calls it on every prompt.

Commands run `runs` times each in a fresh interpreter (this one, `sys.executable`), round-robin so that
machine noise hits them alike, beside `python -c pass` (the interpreter alone, the baseline); wall clock
from spawn to exit (`time.perf_counter` around `subprocess.run`), p50 and p95 in milliseconds, with
bytecode cached as an installed dagmem has it (`PYTHONDONTWRITEBYTECODE` is not passed on):
- `python -c "import dagmem"` and `python -m dagmem --version` (goal: 150 ms or less: it answers before
  the command modules and the libraries under them load);
- `python -m dagmem recall --home H --context QUERY` over a recall index of `blocks` blocks (a real
  snapshot of seeded chat text embedded with the real model, as `dagmem bench recall` builds it; goal:
  250 ms or less at 100,000), beside the same command the way it was loaded before (`recall_before`: the
  model by WordLlama's own loader, every snapshot file checksummed on open; both paths are still the
  fallbacks the code takes when the wheel's files or a snapshot's stamps are not as expected), and
  beside `python -c "import numpy"`, the one library the search cannot do without (its arrays: the
  floor under the command's figure on this machine). The
  workspace holds the tokenizer's BPE table, as a writer's first install leaves it. Each command's CPU
  time (user + system) is reported beside its wall clock: a shared machine disturbs it less.

In this process, `rt.recall(q, session_id=S)` on a session that is not live (written, its actor not
running), p50 over `reps` calls, beside `rt.recall(q)` without a session (goal: 5 ms or less) and beside
the way it read the session before (its files, every call).
"""

from __future__ import annotations

import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import _kit as kit

__all__ = ["COMMANDS", "QUERY", "run", "run_recall", "run_session"]

COMMANDS: dict[str, list[str]] = {
    "pass": ["-c", "pass"],
    "import": ["-c", "import dagmem"],
    "version": ["-m", "dagmem", "--version"],
}
QUERY = "what did we say about the garden and the plan"

# The recall command with the loaders it used before: WordLlama's own (its package imported, the weights
# decoded whole) and a checksum of every snapshot file on open.
_BEFORE = (
    "import sys\n"
    "from dagmem.memory.recall import _embed, _snapshot\n"
    "_embed._from_wheel = lambda workspace: None\n"
    "_snapshot._as_written = lambda fd, stamp: False\n"
    "from dagmem.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _once(args: list[str]) -> tuple[float, float]:
    """Wall clock and CPU time (user + system, the child's own) of one run, in ms."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True, env=kit.fresh_process_env())
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def _measure(commands: dict[str, list[str]], runs: int) -> dict[str, Any]:
    """p50/p95 in ms of each command, over `runs` fresh processes each (after one warm-up each); and
    the p50 of its CPU time, which a busy machine disturbs less than the wall clock."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for args in commands.values():  # warm the page cache: the first spawn reads the files from disk
        _once(args)
    for _ in range(runs):
        for name, args in commands.items():
            wall, used = _once(args)
            samples[name].append(wall)
            cpu[name].append(used)
    out: dict[str, Any] = {"runs": runs}
    for name, values in samples.items():
        ordered = sorted(values)
        out[f"{name}_p50_ms"] = round(kit.quantile(ordered, 0.5), 2)
        out[f"{name}_p95_ms"] = round(kit.quantile(ordered, 0.95), 2)
        out[f"{name}_cpu_p50_ms"] = round(kit.quantile(sorted(cpu[name]), 0.5), 2)
    return out


def run(runs: int = 7) -> dict[str, Any]:
    """p50/p95 in ms of each command in `COMMANDS`, over `runs` fresh processes each (after one warm-up)."""
    return _measure(COMMANDS, runs)


def run_recall(scratch: Path, blocks: int, runs: int = 7, progress: kit.Progress = print) -> dict[str, Any]:
    """`dagmem recall --context` from a fresh process over an index of `blocks` blocks, beside `python -c
    pass` and the command as it loaded before, round-robin."""
    from ..memory.recall import write_table
    from ._recall import _workspace

    home = scratch / f"recall-{blocks}"
    progress(f"cold recall: embedding and indexing {blocks:,} blocks (setup)")
    rng = random.Random(11)
    _workspace(home / "memory", blocks, rng, kit.topic_words(2_000, rng))
    write_table(home / "memory", fsync=False)  # as a writer's first install leaves it
    recall = ["recall", "--home", str(home), "--context", QUERY]
    progress(f"cold recall: {runs} fresh processes of each command")
    out = _measure(
        {
            "pass": ["-c", "pass"],
            "numpy": ["-c", "import numpy"],
            "recall": ["-m", "dagmem", *recall],
            "recall_before": ["-c", _BEFORE, *recall],
        },
        runs,
    )
    return out | {"blocks": blocks}


def run_session(scratch: Path, turns: int, reps: int = 200, progress: kit.Progress = print) -> dict[str, Any]:
    """p50/p95 in ms of `rt.recall(q, session_id=S)` on a written session `S` of `turns` turns that is not
    live, beside `rt.recall(q)` and beside reading `S`'s files on every call (the way before)."""
    import anyio

    return anyio.run(_session, scratch / "session", turns, reps, progress)


async def _session(home: Path, turns: int, reps: int, progress: kit.Progress) -> dict[str, Any]:
    from ..actors import Runtime
    from ..memory.shapes import ShapeCache

    rng = random.Random(5)
    topics = kit.topic_words(40, rng)
    progress(f"session recall: a session of {turns:,} turns, written")
    async with Runtime.open(home) as rt:
        for i in range(turns):
            role = "user" if i % 2 == 0 else "assistant"
            await rt.append("s", role, kit.topic_text(rng, rng.choice(topics), 1, numbers=i % 3 == 0))
        await rt.end_session("s")
        await rt.flush(force=True)
    progress(f"session recall: {reps} calls each, in a runtime where the session is not live")
    async with Runtime.open(home) as rt:
        queries = [f"what about {rng.choice(topics)} and {rng.choice(topics)}" for _ in range(reps)]

        async def timed(call: Callable[[str], Any]) -> list[float]:
            for query in queries[:10]:
                await call(query)
            out = []
            for query in queries:
                started = time.perf_counter()
                await call(query)
                out.append((time.perf_counter() - started) * 1000)
            return sorted(out)

        session = await timed(lambda q: rt.recall(q, session_id="s"))
        alone = await timed(rt.recall)
        current = ShapeCache.current
        ShapeCache.current = _files_only  # type: ignore[method-assign]
        try:
            before = await timed(lambda q: rt.recall(q, session_id="s"))
        finally:
            ShapeCache.current = current  # type: ignore[method-assign]
    out: dict[str, Any] = {"turns": turns, "reps": reps}
    for name, values in (("session", session), ("alone", alone), ("before", before)):
        out[f"{name}_p50_ms"] = round(kit.quantile(values, 0.5), 3)
        out[f"{name}_p95_ms"] = round(kit.quantile(values, 0.95), 3)
    return out


def _files_only(self: Any, session_id: str, tip: str | None = None) -> Any:
    """`ShapeCache.current` as it was: the reader's own session read from its files on every call."""
    return self.fresh(session_id)
