"""The hook events every host shares, host-neutral: queue a transcript for the writer (a turn, a
sub-agent or a session ended, a compaction is near), the context of a starting session, and the context
of a prompt. Each host's module reads its own payload into these and answers in its own format."""

from __future__ import annotations

import os

from ._payload import PayloadError, read_tail, regular_file, text
from ._queue import enqueue, start_worker, wait_for_worker

TYPE_CHECKING = False  # not `typing`'s: a hook that only queues a job imports almost nothing
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

    Knobs = dict[str, Any]  # the command line's --threshold, --idle-after, --budget (None: the default)

__all__ = ["Knobs", "prompt", "queue_transcript", "session_start", "transcript_tail"]
_TAIL = 256 << 10  # bytes of a transcript's end searched for the reader's tip


def queue_transcript(
    home: Path, fmt: str, transcript: str, *, end: bool, knobs: Knobs, cwd: str | None = None
) -> None:
    """Hand the transcript to the detached worker; returns at once (see `_queue`). `cwd`, where the agent
    works: after the write, the worker refreshes its repository's merge facts."""
    path = regular_file(transcript)  # a FIFO or a missing file is refused here, before anything is queued
    transcript = str(path.absolute())
    enqueue(
        home,
        fmt,
        transcript,
        end=end,
        threshold=knobs.get("threshold"),
        idle_after=knobs.get("idle_after"),
        cwd=cwd,
    )
    start_worker(home)


def session_start(home: Path, knobs: Knobs, payload: dict[str, Any] | None = None) -> str | None:
    """The context a session starts with. After a compaction (`source` "compact"), the writer was asked
    at `PreCompact` to write everything the transcript owed: it is waited for (at most `COMPACT_WAIT`
    seconds, never longer: the host waits for this hook), and what the brief holds of this session comes
    first, so the agent gets back what the compaction took."""
    from . import _context  # the read side loads only for the events that read memory

    session = None
    if payload is not None and text(payload, "source", required=False) == "compact":
        session = text(payload, "session_id", required=False)
        wait_for_worker(home, COMPACT_WAIT)
    return _context.start_context(
        home,
        knobs.get("budget") or _context.DEFAULT_BUDGET,
        session=session,
        cwd=reader_dir(payload or {}) if _switch("DAGMEM_GIT") else None,
        code_check=_switch("DAGMEM_CODE_CHECK"),
    )


COMPACT_WAIT = 5.0  # seconds a post-compaction start waits for the writer, at most


def prompt(
    home: Path,
    payload: dict[str, Any],
    knobs: Knobs,
    *,
    with_core: bool,
    session: str | None,
    tips: Sequence[str],
) -> str | None:
    """The context for the payload's `prompt`, on the reader's branch: its `session` and the candidates
    for its tip, newest first, each as its host's module reads them from its payload and transcript."""
    from . import _context

    return _context.prompt_context(
        home,
        text(payload, "prompt") or "",
        session=session,
        tips=tips,
        budget=knobs.get("budget") or _context.DEFAULT_BUDGET,
        with_core=with_core,
        cwd=reader_dir(payload) if _switch("DAGMEM_GIT") else None,
        code_check=_switch("DAGMEM_CODE_CHECK"),
    )


def reader_dir(payload: dict[str, Any]) -> str | None:
    """Where the reader works: the event's `cwd`, else the hook's own working directory."""
    cwd = text(payload, "cwd", required=False)
    if cwd:
        return cwd
    try:
        return os.getcwd()
    except OSError:
        return None


def _switch(name: str) -> bool:
    """`DAGMEM_GIT=off` switches the git axis off (no branch labels, ranking or code checks: the plain
    ranking), `DAGMEM_CODE_CHECK=off` the check against the code alone (also 0, false, no)."""
    return os.environ.get(name, "").strip().lower() not in ("off", "0", "false", "no")


def transcript_tail(payload: dict[str, Any]) -> bytes:
    """The end of the payload's `transcript_path`, where a host's module finds the reader's tip; b"" when
    there is none yet: a host may name a transcript it has not written (Claude Code creates a session's
    file, even its directory, only after the first prompt: anthropics/claude-code#41310), and that first
    prompt is the one most in need of memory. A path naming something else than a regular file (a FIFO,
    a directory) is still refused."""
    raw = text(payload, "transcript_path", required=False)
    if raw is None:
        return b""
    try:
        path = regular_file(raw)
    except PayloadError:
        if not os.path.lexists(raw):
            return b""  # not written yet: the session has no stored turn to be the tip
        raise
    return read_tail(path, _TAIL)
