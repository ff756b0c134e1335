"""Handing a transcript to the writer without making the host wait.

A hook that ends a turn only leaves a job in `<home>/hooks/queue/` (which transcript, which format,
whether the session ended) and starts a detached worker (`python -m dagmem.hooks._worker`) unless one is
running; it returns at once. The worker holds `<home>/hooks/sync.lock` while it drains the queue: imports
what is new in each transcript (the importer's ids make a repeat add nothing) and writes what is due.

Two hooks never pile up two workers: a job is keyed by its transcript (a later one replaces an earlier
one, and `end` stays set once a session has ended), and a worker is started only when the lock is free.
A worker that has drained the queue releases the lock and looks once more: a job queued while it was
releasing is then either seen by it, or was queued by a hook that found the lock free and started one.

This module runs in the hook's own process, so it imports nothing heavy: the queue file is written
temp + rename, without fsync (a job lost in a crash costs a delay only: the next hook queues the
transcript again, and its import is idempotent)."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ._home import state_dir

__all__ = ["Job", "enqueue", "lock_free", "queue_dir", "queued", "start_worker", "try_lock", "worker_idle"]


@dataclass(frozen=True)
class Job:
    format: str  # an importer's format (`dagmem import`'s FORMAT)
    transcript: str
    end: bool = False  # the session ended: write everything it owes (the boundary)
    threshold: int | None = None
    idle_after: float | None = None

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
        )


def queue_dir(home: Path) -> Path:
    return state_dir(home) / "queue"


def _lock_path(home: Path) -> Path:
    return state_dir(home) / "sync.lock"


def enqueue(home: Path, job: Job) -> Path:
    """Queue `job` (replacing the transcript's earlier job; `end` is kept once set)."""
    directory = queue_dir(home)
    directory.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(job.transcript.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    path = directory / f"{key}.json"
    try:
        earlier = json.loads(path.read_bytes())
        if isinstance(earlier, dict) and earlier.get("end"):
            job = Job(job.format, job.transcript, True, job.threshold, job.idle_after)
    except (OSError, ValueError):
        pass
    tmp = directory / f".{key}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(asdict(job)), encoding="utf-8")
    os.replace(tmp, path)
    return path


def queued(home: Path) -> list[Path]:
    try:
        return sorted(p for p in queue_dir(home).iterdir() if p.suffix == ".json")
    except FileNotFoundError:
        return []


def try_lock(home: Path) -> int | None:
    """The sync lock's fd, held (released when it is closed or the process dies); None when held."""
    path = _lock_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    return fd


def lock_free(home: Path) -> bool:
    fd = try_lock(home)
    if fd is None:
        return False
    os.close(fd)
    return True


def start_worker(home: Path) -> bool:
    """Start a detached worker unless one holds the lock; True when one was started. Its stdio is
    /dev/null (a host waits for the hook's stdout to close: an inherited pipe would make it wait for the
    worker) and it runs in a session of its own (a host that kills the hook's group leaves it be)."""
    if not lock_free(home):
        return False
    subprocess.Popen(
        [sys.executable, "-m", "dagmem.hooks._worker", str(home)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    return True


def worker_idle(home: Path) -> bool:
    """Nothing queued and no worker running: a worker takes a job off the queue only once it holds the
    lock, so both at once mean every sync handed over so far is done."""
    return not queued(home) and lock_free(home)
