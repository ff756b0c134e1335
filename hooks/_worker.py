"""The detached worker a hook starts (`python -m dagmem.hooks._worker HOME`): drains the home's hook
queue (`_queue`), importing each transcript's new lines and running the write pass over the sessions
they belong to (the boundary write for a session that ended). Holds the sync lock while it works, and
logs what it could not do to the hooks' log, one line each; its own stdio is /dev/null."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..memory.adopt import Importer, SourceClock, import_into_store
from ..memory.format import HomePaths
from ..memory.settings import DEFAULTS
from ..memory.store import FileSessionStore
from ..memory.workspace import HomeBusy, ServingLock
from ..memory.writing import write_home
from ._log import log_line
from ._queue import GIT_JOB, mark_worker, queued, try_lock, unmark_worker

__all__ = ["Job", "drain", "run_job"]

_SHOWN_PROBLEMS = 3  # per import: the first few problems are logged, then how many more there were


@dataclass(frozen=True)
class Job:
    """A queued job, as `_queue.enqueue` wrote it."""

    format: str  # an importer's format (`dagmem import`'s FORMAT)
    transcript: str
    end: bool = False  # the session ended: write everything it owes (the boundary)
    threshold: int | None = None
    idle_after: float | None = None
    cwd: str | None = None  # where the agent works: its repository's merge facts are refreshed after

    @classmethod
    def from_json(cls, value: Any) -> Job:
        if not isinstance(value, dict):
            raise ValueError("a job is a JSON object")
        return cls(
            str(value["format"]),
            str(value["transcript"]),
            bool(value.get("end")),
            value.get("threshold"),
            value.get("idle_after"),
            value["cwd"] if isinstance(value.get("cwd"), str) else None,
        )


def drain(home: Path) -> int:
    """Run every queued job; returns how many ran. Returns at once when another worker holds the lock."""
    ran = 0
    while True:
        fd = try_lock(home)
        if fd is None:
            return ran
        try:
            mark_worker(fd)  # `dagmem status` reads who holds the lock without taking it
            while jobs := queued(home):
                for path in jobs:
                    job = _take(home, path)
                    if job is not None:
                        run_job(home, job)
                        ran += 1
        finally:
            unmark_worker(fd)
            os.close(fd)
        if not queued(home):  # a job queued while the lock was being released: take it too
            return ran


def _take(home: Path, path: Path) -> Job | None:
    try:
        data = path.read_bytes()
        path.unlink()
    except FileNotFoundError:
        return None
    try:
        return Job.from_json(json.loads(data))
    except (ValueError, KeyError, TypeError) as exc:
        log_line(home, "sync", f"{path.name}: not a job ({exc}); dropped")
        return None


def run_job(home: Path, job: Job) -> None:
    """Import what is new in the job's transcript, then write its sessions; never raises."""
    try:
        _run(home, job)
    except Exception as exc:  # the worker goes on with the next job; the reason is logged
        log_line(home, "sync", f"{job.transcript}: {type(exc).__name__}: {exc}")


def _run(home: Path, job: Job) -> None:
    if job.format == GIT_JOB:
        _refresh_git(home, job.transcript)
        return
    _write(home, job)
    if job.cwd:
        _refresh_git(home, job.cwd)


def _refresh_git(home: Path, cwd: str) -> None:
    """The merge facts of the repository `cwd` lies in (`checkout.refresh`: `git`, off every prompt's
    path), for the prompts that follow."""
    from ..memory.checkout import locate, refresh

    location = locate(cwd)
    memory = HomePaths(home).memory
    if location is not None and memory.is_dir():
        refresh(memory, location)


def _write(home: Path, job: Job) -> None:
    transcript = Path(job.transcript)
    if not transcript.is_file():  # gone, or not a regular file (a FIFO would block the read)
        log_line(home, "sync", f"{job.transcript}: not a regular file; nothing imported")
        return
    importer = Importer(job.format, [transcript])
    state = HomePaths(home).workspace
    serving: ServingLock | None = None
    if state.state.is_dir():
        try:
            serving = ServingLock.acquire(state.serving_lock)
        except HomeBusy as busy:
            log_line(home, "sync", f"{job.transcript}: {busy}; a serving runtime must be fed instead")
            return
    try:
        clock = SourceClock()
        report = import_into_store(importer, FileSessionStore(home, clock=clock), clock)
        problems = [p for p in report.problems if p.line]
        for problem in problems[:_SHOWN_PROBLEMS]:
            log_line(home, "import", str(problem))
        if len(problems) > _SHOWN_PROBLEMS:
            log_line(home, "import", f"{len(problems) - _SHOWN_PROBLEMS} more problems in {job.transcript}")
        sessions = sorted(sid for sid, count in report.sessions.items() if count.head is not None)
        if not sessions:
            return
        results = write_home(
            home,
            sessions=sessions,
            force=job.end,
            threshold=job.threshold or DEFAULTS.token_threshold,
            idle_after=job.idle_after or DEFAULTS.idle_after,
        )
    finally:
        if serving is not None:
            serving.release()
    for result in results:
        if result.outcome in ("failed", "invalid"):
            log_line(home, "write", f"{result.session}: {result.reason_code} {result.detail}")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m dagmem.hooks._worker HOME", file=sys.stderr)
        return 2
    home = Path(argv[0])
    try:
        drain(home)
    except Exception as exc:
        log_line(home, "sync", f"{type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
