"""pi's hooks: pi runs extensions in its own process (TypeScript modules, `pi.on(event, handler)`), so
`dagmem install pi` writes a small extension (`EXTENSION`) that runs `dagmem hook pi EVENT` with a JSON
object on stdin, `{"prompt", "transcript_path", "cwd"}` (the transcript is the session file,
`ctx.sessionManager.getSessionFile()`). Answers are plain text on stdout:

- UserPromptSubmit (from `before_agent_start`): the `<memory-context>` block, core first, which the
  extension appends to that turn's `systemPrompt` (replaced every turn, so the core is not repeated);
- Stop (from `agent_end`) and SessionEnd (from `session_shutdown`): the session file is queued for the
  worker, nothing is printed.

The payload names no session: a prompt's reader is read from the session file, as the importer reads it.
The session is the one its header names (else the UUID of the file's name), and the tip is where pi last
wrote: the file's last entry, or the nearest of its ancestors (`parentId`) that memory stores
(`position`), else the session's head. A move in pi's `/tree` that writes nothing (no summary) is seen
from the next entry pi writes; a file pi has not written yet reads as no session (what other sessions
said, on nobody's branch in particular)."""

from __future__ import annotations

import json
from pathlib import Path

from ._events import prompt, queue_transcript, transcript_tail
from ._payload import read_head, regular_file, text

TYPE_CHECKING = False  # not `typing`'s: a hook that only queues a job imports almost nothing
if TYPE_CHECKING:
    from typing import Any

    from ._events import Knobs

__all__ = ["EXTENSION", "answer", "position", "session_of"]

_HEADER = 64 << 10  # bytes of a session file's start read for its header line


def answer(event: str, payload: dict[str, Any], home: Path, knobs: Knobs) -> str | None:
    if event == "UserPromptSubmit":
        tail = transcript_tail(payload)
        return prompt(
            home,
            payload,
            knobs,
            with_core=True,
            session=session_of(text(payload, "transcript_path", required=False)) if tail else None,
            tips=position(tail),
        )
    queue_transcript(
        home, "pi", text(payload, "transcript_path") or "", end=event == "SessionEnd", knobs=knobs
    )
    return None


def session_of(transcript: str | None) -> str | None:
    """The session pi's session file is imported as: the `id` its header line names, else the UUID of
    the file's name (None: no file)."""
    from ..memory.adopt import header_session, pi_session_id

    if transcript is None:
        return None
    path = regular_file(transcript)
    first = read_head(path, _HEADER).partition(b"\n")[0]
    try:
        header = json.loads(first)
    except (ValueError, RecursionError):
        header = None
    return header_session(header) or pi_session_id(path)


def position(tail: bytes) -> list[str]:
    """Where pi is, in the end of its session file: the node ids of its last entry and that entry's
    ancestors by `parentId`, as far as the end holds them, newest first (the first memory stores is the
    tip: an entry that is no turn, a model change or a branch summary, is no node and is passed through).
    A version-1 file has no ids: nothing (the head is the tip). The end may start in a line's middle:
    that line, like any that is not JSON, is skipped."""
    from ..memory.adopt import to_id

    parent_of: dict[str, str | None] = {}
    last: str | None = None
    for raw in tail.split(b"\n"):
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(line, dict) and line.get("type") != "session" and isinstance(line.get("id"), str):
            parent = line.get("parentId")
            last = line["id"]
            parent_of[last] = parent if isinstance(parent, str) else None
    chain: list[str] = []
    seen: set[str] = set()
    while last is not None and last not in seen:  # a loop in a damaged file ends the walk
        seen.add(last)
        chain.append(to_id(last))
        last = parent_of.get(last)
    return chain


# The extension `dagmem install pi` writes; `__COMMAND__` becomes the JSON array of the hook command.
EXTENSION = """\
// Written by `dagmem install pi` (remove it with `dagmem install pi --uninstall`): memory for pi.
// Each event runs `dagmem hook pi EVENT` with a JSON object on stdin; a failure is never pi's problem.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { spawn, spawnSync } from "node:child_process";


const COMMAND: string[] = __COMMAND__;

function payload(ctx: any, prompt?: string): string {
  return JSON.stringify({ prompt, transcript_path: ctx.sessionManager?.getSessionFile?.(), cwd: ctx.cwd });
}

function ask(event: string, input: string): string {
  const run = spawnSync(COMMAND[0], [...COMMAND.slice(1), event], { input, encoding: "utf8", timeout: 10000 });
  return run.status === 0 && typeof run.stdout === "string" ? run.stdout.trim() : "";
}

function tell(event: string, input: string): void {
  try {
    const child = spawn(COMMAND[0], [...COMMAND.slice(1), event], { stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", () => {});
    child.stdin.end(input);
  } catch {}
}

export default function (pi: ExtensionAPI) {
  pi.on("before_agent_start", async (event: any, ctx: any) => {
    const context = ask("UserPromptSubmit", payload(ctx, event.prompt));
    if (!context) return;
    return { systemPrompt: `${event.systemPrompt}\\n\\n${context}` };
  });
  pi.on("agent_end", async (_event: any, ctx: any) => tell("Stop", payload(ctx)));
  pi.on("session_shutdown", async (_event: any, ctx: any) => tell("SessionEnd", payload(ctx)));
}
"""
