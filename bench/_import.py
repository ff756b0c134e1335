"""`dagmem bench import`: `dagmem import` turns/s on a 12,000-line Claude Code transcript, beside the same
import with an fsync per node (the store outside a bulk run: every node file and meta.json made durable
before the next), in the same run; then a year of sessions (2,000 Claude Code files, about 200,000 turns)
imported and written to memory (`dagmem write --force`), each pass timed.

The transcripts are synthetic (`_transcripts`): prompts, replies, parallel tool calls and their results,
hook lines, edited prompts and retried replies. The import is `import_into_store`, what the command runs;
the write is `write_home(force=True)` with the extractive distiller, what `dagmem write --force` runs.
`profile` holds the import's top costs under cProfile (its own run, beside the timed ones)."""

from __future__ import annotations

import contextlib
import cProfile
import io
import pstats
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..memory.adopt import Importer, SourceClock, import_into_store
from ..memory.store import FileSessionStore
from ._transcripts import claude_code_session, claude_code_year

__all__ = ["run"]

LINES, QUICK_LINES = 12_000, 1_500
YEAR_SESSIONS, YEAR_TURNS = 2_000, 200_000
QUICK_YEAR_SESSIONS, QUICK_YEAR_TURNS = 40, 4_000


class _DurableEach(FileSessionStore):
    """The baseline: no bulk run, so every append fsyncs its node file and meta.json before it returns."""

    @contextlib.contextmanager
    def bulk(self, *, flush_every: int = 1000) -> Iterator[None]:
        yield


def _import(
    paths: list[Path], home: Path, store_class: type[FileSessionStore] = FileSessionStore
) -> dict[str, Any]:
    started = time.perf_counter()
    importer = Importer("claude-code", paths)
    clock = SourceClock()
    report = import_into_store(importer, store_class(home, clock=clock), clock)
    seconds = time.perf_counter() - started
    return {
        "turns": report.added,
        "seconds": round(seconds, 3),
        "turns_per_s": round(report.added / seconds, 1),
    }


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
    # Side by side, alternated: the shared disk's noise falls on both.
    bulk, each = [], []
    for round_ in range(2):
        progress(f"import a {lines:,}-line transcript, round {round_ + 1}: one flush per 1,000 files")
        bulk.append(_import([source], scratch / f"bulk-{round_}"))
        progress(f"import a {lines:,}-line transcript, round {round_ + 1}: an fsync per node (baseline)")
        each.append(_import([source], scratch / f"each-{round_}", _DurableEach))
    raw["bulk"] = max(bulk, key=lambda r: r["turns_per_s"])
    raw["fsync_per_node"] = max(each, key=lambda r: r["turns_per_s"])
    raw["rounds"] = {"bulk": bulk, "fsync_per_node": each}
    progress("import under cProfile")
    raw["profile"] = _profile(source, scratch / "profiled")

    sessions = QUICK_YEAR_SESSIONS if quick else YEAR_SESSIONS
    turns = QUICK_YEAR_TURNS if quick else YEAR_TURNS
    year = scratch / "year"
    progress(f"a year of sessions: {sessions:,} files, about {turns:,} turns")
    raw["year"] = {
        "sessions": sessions,
        "turns_asked": turns,
        "nodes": claude_code_year(year / "source", sessions, turns),
    }
    home = year / "home"
    progress("import the year")
    with _timed(raw["year"], "import_s"):
        raw["year"]["import"] = _import([year / "source"], home)
    progress("write --force the year")
    with _timed(raw["year"], "write_s"):
        results = write_home(home, force=True, distiller=ExtractiveDistiller())
    raw["year"]["written_sessions"] = sum(1 for r in results if r.outcome == "written")
    raw["year"]["failed_sessions"] = sum(1 for r in results if r.outcome in ("failed", "invalid"))
    raw["year"]["records"] = sum(r.records for r in results)
    raw["year"]["total_s"] = round(raw["year"]["import_s"] + raw["year"]["write_s"], 2)
    return raw
