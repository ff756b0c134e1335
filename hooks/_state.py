"""The hooks' queue as `dagmem status` reports it: jobs queued, whether a worker runs, and the worker's
last logged problem. Read-only: nothing is created, and the worker's lock is never taken (a worker
starting at that moment would think another one runs and leave its job queued)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._log import last_worker_line
from ._queue import queued, worker_running

__all__ = ["queue_state"]


def queue_state(home: Path) -> dict[str, Any]:
    """`{"queued": N, "worker_running": bool, "last_worker_error": {"at", "what", "message"} | None}`."""
    line = last_worker_line(home)
    return {
        "queued": len(queued(home)),
        "worker_running": worker_running(home),
        "last_worker_error": None
        if line is None
        else {"at": line.at, "what": line.what, "message": line.message},
    }
