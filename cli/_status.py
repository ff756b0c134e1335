"""`dagmem status [--session S] [--wait [SECONDS]]`: the writer's last outcome, what each session still
owes, the hooks' queue and worker, and the disk's free space; read-only (it creates nothing, and never
takes the hooks' lock: a worker starting at that moment must not think another one runs).

`--wait` is for a person or a script that handed transcripts to the hooks' detached worker and needs to
know when it is done: it waits until nothing is queued and no worker runs (bounded: `SECONDS`, default
60), exit 0 then, 75 if the bound passed first (the worker is still at it; run it again)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..hooks import queue_state
from ..memory.durable import load_status, read_workspace_id
from ..memory.format import HomePaths
from ..memory.outcomes import RETRYABLE
from ..memory.write import pending_by_session
from ._errors import EXIT_OK, EXIT_RETRY, CommandError

__all__ = ["LOW_DISK", "status_command"]

LOW_DISK = 1 << 20  # bytes free under which writes are about to fail (DISK_FULL), and status says so
_POLL = 0.1  # seconds between two looks at the queue while waiting


def _iso(at: float | None) -> str | None:
    return None if at is None else datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def _busy(hooks: dict[str, Any]) -> bool:
    return bool(hooks["queued"]) or bool(hooks["worker_running"])


def _wait(home: Path, bound: float) -> tuple[dict[str, Any], bool]:
    """Until the hooks' queue is empty and no worker runs, for at most `bound` seconds: (the hooks'
    report at the end, whether they were done)."""
    deadline = time.monotonic() + bound
    while True:
        hooks = queue_state(home)
        if not _busy(hooks):
            return hooks, True
        if time.monotonic() >= deadline:
            return hooks, False
        time.sleep(min(_POLL, max(0.0, deadline - time.monotonic())))


def _disk_free(home: Path) -> int | None:
    try:
        info = os.statvfs(home)
    except OSError:
        return None
    return info.f_bavail * info.f_frsize


def status_command(args: argparse.Namespace) -> int:
    home: Path = args.home
    # The wait first: what is owed is read once the worker is done, so it says what the worker left.
    hooks, done = _wait(home, args.wait) if args.wait is not None else (queue_state(home), True)
    paths = HomePaths(home).workspace
    workspace_id = read_workspace_id(paths.workspace_id)
    status = load_status(paths.status)
    pending = pending_by_session(home, workspace_id)
    if args.session:
        unknown = [s for s in args.session if s not in pending]
        if unknown:
            raise CommandError(f"--session {unknown[0]}: no such session in {home}")
        pending = {s: pending[s] for s in dict.fromkeys(args.session)}
    free = _disk_free(home)
    failure = status.last_failure
    report: dict[str, Any] = {
        "home": str(home),
        "workspace_id": workspace_id,
        "last_outcome": status.last_outcome,
        "last_success_at": status.last_success_at,
        "last_success_at_iso": _iso(status.last_success_at),
        "last_failure": None
        if failure is None
        else {
            "at": failure.at,
            "at_iso": _iso(failure.at),
            "reason_code": str(failure.reason_code),
            "retryable": failure.retryable,
            "will_retry": failure.reason_code in RETRYABLE and failure.retryable,
        },
        "pending_turns": sum(v for v in pending.values() if isinstance(v, int)),
        "sessions": pending,
        "hooks": hooks,
        "disk_free_bytes": free,
        "disk_full": free is not None and free < LOW_DISK,
    }
    if args.wait is not None:
        report["waited"] = {"seconds": args.wait, "done": done}
    code = EXIT_OK if done else EXIT_RETRY
    if args.json:
        print(json.dumps(report))
        return code
    _print(report, status.last_outcome)
    if not done:
        print(
            f"the hooks' worker is not done after {args.wait:g} s (still at it: run it again)",
            file=sys.stderr,
        )
    return code


def _print(report: dict[str, Any], outcome: str | None) -> None:
    print(f"home          {report['home']}")
    print(f"workspace     {report['workspace_id'] or '(not created yet)'}")
    print(f"last outcome  {outcome or '(nothing written yet)'}")
    print(f"last success  {report['last_success_at_iso'] or '-'}")
    failure = report["last_failure"]
    if failure is not None:
        retry = "will be retried" if failure["will_retry"] else "will not be retried"
        print(f"last failure  {failure['reason_code']} at {failure['at_iso']} ({retry})")
    if report["disk_full"]:
        print(
            f"disk          full ({report['disk_free_bytes']:,} bytes free): nothing can be written "
            "(DISK_FULL); writes are retried until space returns, nothing is lost"
        )
    print(f"pending turns {report['pending_turns']}")
    for session_id, value in report["sessions"].items():
        if value:
            print(f"  {session_id}: {value}")
    hooks = report["hooks"]
    worker = "running" if hooks["worker_running"] else "not running"
    print(f"hooks         {hooks['queued']} queued, worker {worker}")
    error = hooks["last_worker_error"]
    if error is not None:
        print(f"  last worker error {error['at']} {error['what']}: {error['message']}")
