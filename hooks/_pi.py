"""pi's hooks: pi runs extensions in its own process (TypeScript modules, `pi.on(event, handler)`), so
`dagmem install pi` writes a small extension (`EXTENSION`) that runs `dagmem hook pi EVENT` with a JSON
object on stdin, `{"prompt", "transcript_path", "cwd"}` (the transcript is the session file,
`ctx.sessionManager.getSessionFile()`). Answers are plain text on stdout:

- UserPromptSubmit (from `before_agent_start`): the `<memory-context>` block, core first, which the
  extension appends to that turn's `systemPrompt` (replaced every turn, so the core is not repeated);
- Stop (from `agent_end`) and SessionEnd (from `session_shutdown`): the session file is queued for the
  worker, nothing is printed."""

from __future__ import annotations

from ._events import prompt, queue_transcript
from ._payload import text

TYPE_CHECKING = False  # not `typing`'s: a hook that only queues a job imports almost nothing
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ._events import Knobs

__all__ = ["EXTENSION", "answer"]


def answer(event: str, payload: dict[str, Any], home: Path, knobs: Knobs) -> str | None:
    if event == "UserPromptSubmit":
        return prompt(home, payload, knobs, with_core=True)
    queue_transcript(
        home, "pi", text(payload, "transcript_path") or "", end=event == "SessionEnd", knobs=knobs
    )
    return None


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
