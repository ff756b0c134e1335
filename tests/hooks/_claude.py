"""Driving the hooks as Claude Code does: a transcript written line by line in its format, and each hook
run as a fresh `python -m dagmem hook claude-code EVENT` process with the event's JSON on stdin
(https://code.claude.com/docs/en/hooks); the detached worker is waited for by the product's own
`dagmem.hooks.wait_for_worker`, with a bound."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["WORKER_BOUND", "Transcript", "hook"]

WORKER_BOUND = 120.0  # seconds a test waits for the detached worker (`dagmem.hooks.wait_for_worker`)
SESSION = "7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"


class Transcript:
    """A Claude Code session file (`<project>/<session>.jsonl`) that grows as turns are said."""

    def __init__(self, path: Path, session: str = SESSION) -> None:
        self.path = path
        self.session = session
        self.n = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def _add(
        self,
        kind: str,
        parent: str | None,
        message: dict[str, Any] | None,
        file: Path | None = None,
        **extra: Any,
    ) -> str:
        self.n += 1
        key = f"00000000-0000-4000-8000-{self.n:012d}"
        line: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(self.path.parent),
            "sessionId": self.session,
            "version": "2.0.61",
            "type": kind,
            "uuid": key,
            "timestamp": f"2025-06-01T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z",
            **extra,
        }
        if message is not None:
            line["message"] = message
        target = file or self.path
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a") as f:
            f.write(json.dumps(line) + "\n")
        return key

    def user(self, parent: str | None, text: str, **extra: Any) -> str:
        return self._add("user", parent, {"role": "user", "content": text}, **extra)

    def assistant(self, parent: str | None, text: str, **extra: Any) -> str:
        message = {
            "id": f"msg_{self.n + 1}",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [{"type": "text", "text": text}],
        }
        return self._add("assistant", parent, message, **extra)

    def tool(self, parent: str | None, command: str, output: str, *, error: bool = False) -> str:
        """A Bash call and its result, as Claude Code writes them: an assistant line with the `tool_use`,
        then a user line with the `tool_result` (its `toolUseResult` the run's stdout); the result's key."""
        call_id = f"toolu_{self.n + 1:04d}"
        message = {
            "id": f"msg_{self.n + 1}",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}],
        }
        call = self._add("assistant", parent, message)
        result = {"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": error}
        stdout = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        return self._add("user", call, {"role": "user", "content": [result]}, toolUseResult=stdout)

    def compaction(self, parent: str | None, summary: str) -> str:
        boundary = self._add(
            "system", parent, None, subtype="compact_boundary", content="Conversation compacted"
        )
        return self.user(boundary, summary, isCompactSummary=True)

    def subagent(self, name: str, prompt: str, reply: str) -> tuple[str, str]:
        file = self.path.with_suffix("") / "subagents" / f"agent-{name}.jsonl"
        first = self._add(
            "user", None, {"role": "user", "content": prompt}, file=file, isSidechain=True, agentId=name
        )
        message = {
            "id": f"msg_{self.n + 1}",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [{"type": "text", "text": reply}],
        }
        second = self._add("assistant", first, message, file=file, isSidechain=True, agentId=name)
        return first, second

    def payload(self, event: str, **extra: Any) -> dict[str, Any]:
        return {
            "session_id": self.session,
            "transcript_path": str(self.path),
            "cwd": str(self.path.parent),
            "hook_event_name": event,
            **extra,
        }


def hook(
    event: str, payload: Any, *, project: Path, args: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """One hook, as the host runs it: a fresh process, the payload on stdin (bytes as given, else JSON)."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    environ = {k: v for k, v in os.environ.items() if k not in ("DAGMEM_HOME", "DAGMEM_MEMORY")}
    environ["CLAUDE_PROJECT_DIR"] = str(project)
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "dagmem", "hook", "claude-code", event, *args],
        check=False,
        input=data,
        capture_output=True,
        cwd=project,
        env=environ,
        timeout=120,
    )


def context_of(result: subprocess.CompletedProcess[bytes], event: str) -> str:
    """The additionalContext a hook answered ('' for none), checking the answer's documented shape."""
    assert result.returncode == 0, result.stderr
    if not result.stdout.strip():
        return ""
    answer = json.loads(result.stdout)
    assert set(answer) == {"hookSpecificOutput"}
    assert answer["hookSpecificOutput"]["hookEventName"] == event
    return str(answer["hookSpecificOutput"]["additionalContext"])
