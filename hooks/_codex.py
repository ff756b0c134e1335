"""Codex's `notify` program (`notify = [...]` in `~/.codex/config.toml`): Codex runs it when a turn
completes, with one JSON object as its last argument, `{"type": "agent-turn-complete", "thread-id",
"turn-id", "cwd", "input-messages", "last-assistant-message"}`, and reads nothing back: a notify program
cannot inject context. So Codex's hook only queues the thread's rollout file
(`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread-id>.jsonl`, `CODEX_HOME` defaulting to
`~/.codex`) for the worker, which imports what is new in it and writes what is due. Codex has no
session-end event: a thread's last turns are written at the threshold, or as an idle session by the next
worker run or `dagmem write`."""

from __future__ import annotations

import os
from pathlib import Path

from ._events import queue_transcript
from ._payload import PayloadError, text

TYPE_CHECKING = False  # not `typing`'s: a hook that only queues a job imports almost nothing
if TYPE_CHECKING:
    from typing import Any

    from ._events import Knobs


__all__ = ["answer", "rollout_of"]

_DAYS = 3  # day directories searched, newest first: a turn completes in a thread that is running now


def rollout_of(thread: str, env: dict[str, str] | None = None) -> Path:
    """The rollout file of `thread`, searched in the newest day directories only (never the whole tree:
    a hook stays O(1) in the number of past sessions)."""
    environ = os.environ if env is None else env
    sessions = Path(environ.get("CODEX_HOME") or Path.home() / ".codex") / "sessions"
    if "/" in thread or not thread.strip("."):
        raise PayloadError(f"thread-id {thread!r} is no id")
    days = sorted((d for y in _subdirs(sessions) for m in _subdirs(y) for d in _subdirs(m)), reverse=True)[
        :_DAYS
    ]
    for day in days:
        found = sorted(day.glob(f"rollout-*{thread}.jsonl"))
        if found:
            return found[-1]
    raise PayloadError(f"no rollout file of thread {thread} under {sessions}")


def _subdirs(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.is_dir() and p.name.isdigit())[-_DAYS:]
    except OSError:
        return []


def answer(event: str, payload: dict[str, Any], home: Path, knobs: Knobs) -> str | None:
    kind = text(payload, "type")
    if kind != "agent-turn-complete":
        return None  # another notification: nothing to remember
    rollout = rollout_of(text(payload, "thread-id") or "")
    queue_transcript(home, "codex", str(rollout), end=False, knobs=knobs)
    return None
