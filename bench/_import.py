"""`dagmem bench import`: `dagmem import` turns/s on a 12,000-line Claude Code transcript, beside the same
import with an fsync per node (the store outside a bulk run: every node file and meta.json made durable
before the next), in the same run; then a year of sessions (2,000 Claude Code files, about 200,000 turns)
imported and written to memory (`dagmem write --force`), each pass timed. Each round reports its wall
time and its CPU time (user + system, the fsync threads included).

The order of the rounds is the filesystem's business. Without a journal (this machine's root), ext4 does
not hand out an inode freed in the last minute (six while its inode table block is dirty): it reads past
each such inode of the block group on every file it creates. The baseline frees an inode per node (each
durable rewrite of meta.json replaces the old file), so a round measured after it creates its files
past thousands of them. So every measured round of the bulk import runs first, the baseline's after, and
the year's write (which rewrites each marked node file) last; a probe before each kind of round times
the creation of an empty file in a fresh directory, so a figure taken on a filesystem slowed by others'
deletions says so. Nothing is waited for and nothing is subtracted: each figure is what the import took.

The transcripts are synthetic (`_transcripts`): prompts, replies, parallel tool calls and their results,
hook lines, edited prompts and retried replies. The import is `import_into_store`, what the command runs;
the write is `write_home(force=True)` with the extractive distiller, what `dagmem write --force` runs.
`profile` holds the import's top costs under cProfile (its own run, beside the timed ones)."""

from __future__ import annotations

import contextlib
import cProfile
import io
import os
import pstats
import resource
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..memory.adopt import Importer, SourceClock, import_into_store
from ..memory.store import FileSessionStore
from ._transcripts import claude_code_session, claude_code_year

__all__ = ["run"]

LINES, QUICK_LINES = 12_000, 1_500
BULK_ROUNDS, BASELINE_ROUNDS = 3, 2
PROBE_FILES = 500
YEAR_SESSIONS, YEAR_TURNS = 2_000, 200_000
QUICK_YEAR_SESSIONS, QUICK_YEAR_TURNS = 40, 4_000


class _DurableEach(FileSessionStore):
    """The baseline: no bulk run, so every append fsyncs its node file and meta.json before it returns."""

    @contextlib.contextmanager
    def bulk(self, *, flush_every: int = 1000) -> Iterator[None]:
        yield


def _cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread's: the fsync pool's too
    return usage.ru_utime, usage.ru_stime


def _import(
    paths: list[Path], home: Path, store_class: type[FileSessionStore] = FileSessionStore
) -> dict[str, Any]:
    user, system = _cpu()
    started = time.perf_counter()
    importer = Importer("claude-code", paths)
    clock = SourceClock()
    report = import_into_store(importer, store_class(home, clock=clock), clock)
    seconds = time.perf_counter() - started
    user_after, system_after = _cpu()
    cpu = (user_after - user) + (system_after - system)
    return {
        "turns": report.added,
        "seconds": round(seconds, 3),
        "turns_per_s": round(report.added / seconds, 1),
        "cpu_s": round(cpu, 3),
        "user_s": round(user_after - user, 3),
        "system_s": round(system_after - system, 3),
        "load_average": round(os.getloadavg()[0], 2),
    }


def _creation_probe(directory: Path) -> float:
    """Microseconds to create an empty file in a fresh directory of the scratch, now (no fsync): what
    the filesystem charges a file at that moment. The files stay until the scratch goes (a probe that
    deleted them would slow the round after it)."""
    directory.mkdir(parents=True)
    started = time.perf_counter()
    for i in range(PROBE_FILES):
        os.close(os.open(directory / f"{i:04d}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    return round((time.perf_counter() - started) / PROBE_FILES * 1e6, 1)


def _profile(path: Path, home: Path, top: int = 8) -> list[dict[str, Any]]:
    """The import's top costs by own time (cProfile), as {function, calls, own_s, cumulative_s}."""
    profiler = cProfile.Profile()
    profiler.enable()
    _import([path], home)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    rows = []
    for (file, line, name), (_cc, calls, own, cumulative, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append({"function": f"{Path(file).name}:{line}({name})", "calls": calls, "own_s": round(own, 3),
                     "cumulative_s": round(cumulative, 3)})  # fmt: skip
    rows.sort(key=lambda row: -row["own_s"])
    return rows[:top]


@contextlib.contextmanager
def _timed(into: dict[str, Any], key: str) -> Iterator[None]:
    started = time.perf_counter()
    yield
    into[key] = round(time.perf_counter() - started, 2)


def run(quick: bool, scratch: Path, progress: Callable[[str], None] = lambda _m: None) -> dict[str, Any]:
    from ..memory.write import ExtractiveDistiller
    from ..memory.writing import write_home

    lines = QUICK_LINES if quick else LINES
    raw: dict[str, Any] = {"lines": lines}
    source = scratch / "transcript" / "session.jsonl"
    raw["nodes"] = claude_code_session(source, lines)
    sessions = QUICK_YEAR_SESSIONS if quick else YEAR_SESSIONS
    turns = QUICK_YEAR_TURNS if quick else YEAR_TURNS
    year = scratch / "year"
    progress(f"a year of sessions: {sessions:,} files, about {turns:,} turns")
    raw["year"] = {
        "sessions": sessions,
        "turns_asked": turns,
        "nodes": claude_code_year(year / "source", sessions, turns),
    }
    # What frees inodes comes after what it would slow (see the module's doc): the bulk rounds, the
    # profile and the year's import first; then the baseline's rounds; the year's write last.
    order: list[str] = raw.setdefault("order", [])
    raw["file_creation_us"] = {"before_bulk": _creation_probe(scratch / "probe-bulk")}
    bulk = []
    for round_ in range(BULK_ROUNDS):
        progress(f"import a {lines:,}-line transcript, round {round_ + 1}: one flush per 1,000 files")
        bulk.append(_import([source], scratch / f"bulk-{round_}"))
        order.append(f"bulk-{round_}")
    progress("import under cProfile")
    raw["profile"] = _profile(source, scratch / "profiled")
    order.append("profile")
    home = year / "home"
    progress("import the year")
    with _timed(raw["year"], "import_s"):
        raw["year"]["import"] = _import([year / "source"], home)
    order.append("year import")
    raw["file_creation_us"]["before_baseline"] = _creation_probe(scratch / "probe-each")
    each = []
    for round_ in range(BASELINE_ROUNDS):
        progress(f"import a {lines:,}-line transcript, round {round_ + 1}: an fsync per node (baseline)")
        each.append(_import([source], scratch / f"each-{round_}", _DurableEach))
        order.append(f"baseline-{round_}")
    # The median bulk round against the best baseline round: the ratio is never flattered.
    raw["bulk"] = sorted(bulk, key=lambda r: r["turns_per_s"])[len(bulk) // 2]
    raw["fsync_per_node"] = max(each, key=lambda r: r["turns_per_s"])
    raw["rounds"] = {"bulk": bulk, "fsync_per_node": each}
    raw["bulk_cpu_s_median"] = round(statistics.median(r["cpu_s"] for r in bulk), 3)
    progress("write --force the year")
    with _timed(raw["year"], "write_s"):
        results = write_home(home, force=True, distiller=ExtractiveDistiller())
    order.append("year write")
    raw["year"]["written_sessions"] = sum(1 for r in results if r.outcome == "written")
    raw["year"]["failed_sessions"] = sum(1 for r in results if r.outcome in ("failed", "invalid"))
    raw["year"]["records"] = sum(r.records for r in results)
    raw["year"]["total_s"] = round(raw["year"]["import_s"] + raw["year"]["write_s"], 2)
    return raw
