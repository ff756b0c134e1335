"""Handing a transcript to the writer without making the host wait.

A hook that ends a turn only leaves a job in `<home>/hooks/queue/` (which transcript, which format,
whether the session ended) and starts a detached worker (`python -m dagmem.hooks._worker`) unless one is
running; it returns at once. The worker holds `<home>/hooks/sync.lock` while it drains the queue: imports
what is new in each transcript (the importer's ids make a repeat add nothing) and writes what is due.

Two hooks never pile up two workers: a job is keyed by its transcript (a later one replaces an earlier
one, and `end` stays set once a session has ended), and a worker is started only when the lock is free.
A worker that has drained the queue releases the lock and looks once more: a job queued while it was
releasing is then either seen by it, or was queued by a hook that found the lock free and started one.

A job file is one JSON object: `format` (an importer's format, `dagmem import`'s FORMAT), `transcript`,
`end` (the session ended: write everything it owes, the boundary), `threshold` and `idle_after` (None: the
defaults); the worker reads it back (`_worker.Job`).

This module runs in the hook's own process, so it imports almost nothing (no `subprocess`, `hashlib`,
`dataclasses` or `typing`: each costs a fresh process milliseconds): the queue file is written temp +
rename, without fsync (a job lost in a crash costs a delay only: the next hook queues the transcript
again, and its import is idempotent)."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sys

from ._home import state_dir

try:  # what `hashlib.blake2b` is, without loading OpenSSL's hashes the way `import hashlib` does
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter without the module
    from hashlib import blake2b

TYPE_CHECKING = False  # not `typing`'s (see the module's doc)
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "GIT_JOB",
    "ISOLATED",
    "enqueue",
    "lock_free",
    "mark_worker",
    "queue_dir",
    "queued",
    "spawn_detached",
    "start_worker",
    "try_lock",
    "unmark_worker",
    "wait_for_worker",
    "worker_idle",
    "worker_running",
]


# How dagmem runs itself as a program: `-P` keeps the working directory (a host runs hooks in the
# project's, and the worker inherits it) off `sys.path`, so a project's own `queue.py`, `types.py` or
# `logging.py` never shadows the standard library's.
ISOLATED = [sys.executable, "-P", "-m"]


GIT_JOB = "git"  # a job's format that only refreshes the merge facts of its directory's repository


def queue_dir(home: Path) -> Path:
    return state_dir(home) / "queue"


def _lock_path(home: Path) -> Path:
    return state_dir(home) / "sync.lock"


def enqueue(
    home: Path,
    fmt: str,
    transcript: str,
    *,
    end: bool = False,
    threshold: int | None = None,
    idle_after: float | None = None,
    cwd: str | None = None,
) -> Path:
    """Queue a job for `transcript` (replacing its earlier job; `end` is kept once set). A job of format
    `git` names a directory instead: only its repository's merge facts are refreshed."""
    directory = queue_dir(home)
    directory.mkdir(parents=True, exist_ok=True)
    key = blake2b(transcript.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    path = directory / f"{key}.json"
    try:
        earlier = json.loads(path.read_bytes())
        end = end or (isinstance(earlier, dict) and earlier.get("end") is True)
    except (OSError, ValueError):
        pass
    job = {
        "format": fmt,
        "transcript": transcript,
        "end": end,
        "threshold": threshold,
        "idle_after": idle_after,
        "cwd": cwd,
    }
    tmp = directory / f".{key}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(job), encoding="utf-8")
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
    spawn_detached([*ISOLATED, "dagmem.hooks._worker", str(home)])
    return True


def spawn_detached(argv: list[str]) -> int:
    """Start `argv` (its first item an absolute path) in a session of its own, its stdio /dev/null and no
    other descriptor inherited; its pid. `os.posix_spawn`, not `subprocess` (whose import costs a hook
    more than the spawn); `subprocess` where posix_spawn cannot start a session."""
    inherited = []
    for name in os.listdir("/dev/fd"):  # a descriptor the host passed in must not stay open in the worker
        fd = int(name)
        try:
            if fd > 2 and os.get_inheritable(fd):
                inherited.append(fd)
        except OSError:  # the listing's own descriptor, closed since
            pass
    actions: list[tuple[object, ...]] = [
        (os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)
    ]
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in inherited]
    try:
        return os.posix_spawn(argv[0], argv, os.environ, file_actions=actions, setsid=True)
    except NotImplementedError:  # pragma: no cover - a platform without POSIX_SPAWN_SETSID
        import subprocess

        devnull = subprocess.DEVNULL
        child = subprocess.Popen(
            argv, stdin=devnull, stdout=devnull, stderr=devnull, start_new_session=True, close_fds=True
        )
        return child.pid


def mark_worker(fd: int) -> None:
    """The worker holding the lock writes its pid into the lock file: a reader learns whether a worker
    runs without taking the lock (a probe that took it, however briefly, could make a starting worker
    think another one runs, and leave its job queued)."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)


def unmark_worker(fd: int) -> None:
    try:  # noqa: SIM105 - no `contextlib` in a module every hook loads
        os.ftruncate(fd, 0)
    except OSError:  # the lock goes with the close all the same
        pass


def worker_running(home: Path) -> bool:
    """Whether a worker holds the lock now, read without taking it or creating anything: the pid it
    wrote, alive, and (where /proc tells) running the worker. A killed worker's pid is dead."""
    try:
        fd = os.open(_lock_path(home), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return False
    finally:
        os.close(fd)
    if not text.isdigit():
        return False
    pid = int(text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, someone else's
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:  # a reused pid runs something else
            return b"dagmem.hooks._worker" in f.read()
    except OSError:
        return True  # no /proc here: the live pid is all there is to go on


def worker_idle(home: Path) -> bool:
    """Nothing queued and no worker running: a worker takes a job off the queue only once it holds the
    lock, so both at once mean every sync handed over so far is done."""
    return not queued(home) and lock_free(home)


def wait_for_worker(home: Path, bound: float) -> bool:
    """Until the worker is idle (`worker_idle`), polled every 10 ms for at most `bound` seconds; whether it
    is. The caller says what a worker still busy means: a hook goes on, a benchmark or a test fails."""
    import time  # here: a hook that only queues a job never waits

    deadline = time.monotonic() + bound
    while not worker_idle(home):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True
