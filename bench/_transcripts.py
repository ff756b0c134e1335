"""Synthetic Claude Code transcripts for the import benchmarks: lines as Claude Code writes them (prompts,
text replies, parallel tool calls with their results, hook lines, edited prompts and retried replies,
file-history snapshots), deterministic from a seed."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from . import _kit as kit

__all__ = ["claude_code_session", "claude_code_year"]


class _Lines:
    def __init__(self, session: str, start: float) -> None:
        self.session = session
        self.lines: list[dict[str, Any]] = []
        self.n = 0
        self.start = start
        self.nodes = 0

    def line(self, kind: str, parent: str | None, message: dict[str, Any] | None, **extra: Any) -> str:
        self.n += 1
        key = f"{self.session[:8]}-0000-4000-8000-{self.n:012d}"
        seconds = self.start + self.n * 7
        line: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/u/project",
            "sessionId": self.session,
            "version": "2.0.61",
            "type": kind,
            "uuid": key,
            "timestamp": f"{_iso(seconds)}",
        }
        if message is not None:
            line["message"] = message
            self.nodes += 1
        line.update(extra)
        self.lines.append(line)
        return key

    def user(self, parent: str | None, content: Any, **extra: Any) -> str:
        return self.line("user", parent, {"role": "user", "content": content}, **extra)

    def assistant(self, parent: str | None, message_id: str, blocks: list[dict[str, Any]]) -> str:
        message = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": blocks,
        }
        return self.line("assistant", parent, message)


def _iso(seconds: float) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(seconds))


def _words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(kit.WORDS) for _ in range(rng.randint(low, high)))


def claude_code_session(path: Path, lines: int, *, seed: int = 7, start: float = 1_735_689_600.0) -> int:
    """Write a Claude Code session of about `lines` lines to `path`; returns the node lines in it."""
    rng = random.Random(seed)
    session = f"{rng.getrandbits(32):08x}-1d2a-4c3b-9e8f-0a1b2c3d4e5f"
    c = _Lines(session, start)
    c.lines.append({"type": "summary", "summary": "a long session", "leafUuid": "x"})
    parent: str | None = None
    i = 0
    while len(c.lines) < lines:
        i += 1
        prompt = c.user(parent, f"question {i}: {_words(rng, 5, 40)}")
        if rng.random() < 0.05:  # an edited prompt: a sibling under the same parent
            prompt = c.user(parent, f"question {i}, asked again: {_words(rng, 5, 20)}")
        mid = f"msg_{session[:8]}_{i}_a"
        last = c.assistant(prompt, mid, [{"type": "text", "text": f"Let me look ({i})."}])
        calls = [f"toolu_{session[:8]}_{i}_{k}" for k in range(rng.randrange(0, 4))]
        call_lines = []
        for call in calls:
            block = {"type": "tool_use", "id": call, "name": "Read", "input": {"file_path": f"/x/{call}"}}
            last = c.assistant(last, mid, [block])
            call_lines.append(last)
        for call, call_line in zip(calls, call_lines, strict=True):
            block = {"tool_use_id": call, "type": "tool_result", "content": f"contents of {call}"}
            last = c.user(call_line, [block], toolUseResult={"stdout": "ok"})
        if rng.random() < 0.3:
            last = c.line("system", last, None, subtype="hook", content="hook ran")
        answer = c.assistant(
            last, f"msg_{session[:8]}_{i}_b", [{"type": "text", "text": _words(rng, 10, 80)}]
        )
        if rng.random() < 0.05:  # a retry: another reply to the same parent
            answer = c.assistant(last, f"msg_{session[:8]}_{i}_c", [{"type": "text", "text": "regenerated."}])
        if rng.random() < 0.1:
            c.lines.append({"type": "file-history-snapshot", "messageId": answer, "snapshot": {}})
        parent = answer
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for line in c.lines:
            f.write(json.dumps(line) + "\n")
    return c.nodes


def claude_code_year(directory: Path, sessions: int, turns: int, *, seed: int = 11) -> int:
    """`sessions` Claude Code session files under `directory` holding about `turns` node lines in all,
    one session every few hours over a year; returns the node lines written."""
    rng = random.Random(seed)
    per = max(2, turns // sessions)
    start = 1_704_067_200.0  # 2024-01-01
    total = 0
    for k in range(sessions):
        lines = max(4, int(per * 1.15 * rng.uniform(0.5, 1.5)))  # ~13% of lines are no nodes
        total += claude_code_session(
            directory / f"session-{k:05d}.jsonl", lines, seed=seed * 100_003 + k, start=start + k * 15_768
        )
    return total
