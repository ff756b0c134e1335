"""Claude Code's hooks (https://code.claude.com/docs/en/hooks): each event's JSON arrives on stdin; the
answer is JSON on stdout with exit 0.

Input fields used: `session_id`, `transcript_path` and `cwd` (every event) and `prompt`
(UserPromptSubmit). Output, for SessionStart and UserPromptSubmit only: `{"hookSpecificOutput":
{"hookEventName": EVENT, "additionalContext": TEXT}}`, the documented way to add context for the model
without showing it as the hook's output. The events that end something (Stop, SubagentStop, PreCompact,
SessionEnd) print nothing: they queue the transcript for the detached worker and return, PreCompact and
SessionEnd with everything the transcript owes to be written (the boundary write). A SessionStart after a
compaction (`source` "compact") waits a few seconds for that write, then gives back what it wrote.

A prompt is answered for the branch the reader is on: the session is `session_id`, and the tip the
transcript's last main-chain turn that memory already stores (`main_chain_turns`), else its head."""

from __future__ import annotations

import json

from ._events import prompt, queue_transcript, session_start, transcript_tail
from ._payload import text

TYPE_CHECKING = False  # not `typing`'s: a hook that only queues a job imports almost nothing
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ._events import Knobs


__all__ = ["answer", "main_chain_turns"]


def answer(event: str, payload: dict[str, Any], home: Path, knobs: Knobs) -> str | None:
    """What to print for `event` (None: nothing). Raises on a payload that lacks what the event needs;
    the caller logs it and the hook still exits 0."""
    if event == "SessionStart":
        context = session_start(home, knobs, payload)
    elif event == "UserPromptSubmit":
        # The core came at SessionStart (and comes again after a compaction, source `compact`): a prompt
        # gets only what it recalls, or every prompt would add the core to the transcript once more.
        context = prompt(
            home,
            payload,
            knobs,
            with_core=False,
            session=text(payload, "session_id", required=False),
            tips=main_chain_turns(transcript_tail(payload)),
        )
    else:
        transcript = text(payload, "transcript_path") or ""
        # Before a compaction and at the session's end, everything the transcript owes is written: a
        # compaction takes the turns out of the agent's context, and memory is to give them back.
        everything = event in ("SessionEnd", "PreCompact")
        cwd = text(payload, "cwd", required=False)
        queue_transcript(home, "claude-code", transcript, end=everything, knobs=knobs, cwd=cwd)
        return None
    if context is None:
        return None
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


def main_chain_turns(tail: bytes) -> list[str]:
    """Where the reader is, in the end of its transcript: the node ids of the main-chain turns (a user's
    or the assistant's line, not a sub-agent's), newest first; the first memory stores is the tip. The
    end may start in a line's middle: that line, like any that is not JSON, is skipped."""
    from ..memory.adopt import to_id

    found: list[str] = []
    for raw in reversed(tail.split(b"\n")):
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if (
            isinstance(line, dict)
            and line.get("type") in ("user", "assistant")
            and isinstance(line.get("uuid"), str)
            and line.get("isSidechain") is not True
        ):
            found.append(to_id(line["uuid"]))
    return found
