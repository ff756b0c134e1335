"""Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`), DESIGN §10.

`user` and `assistant` lines with a `uuid` are nodes; the predecessor is `parentUuid`, followed up through
skipped lines to the nearest kept one; the time is `timestamp`, the session `sessionId`. `message.content` as
a string is the text; as a list, `text` blocks are the text, and any `tool_use`, `tool_result` or `thinking`
block makes the node a `tool` row (kept, never a record). A line marked `isMeta` (text the CLI injected) or
`isCompactSummary` (the summary a compaction wrote) is a `system` row: not something the user said.

Claude Code writes one API turn as several lines: each content block of the reply is its own assistant line
(sharing `message.id`), each chained to the one before, and each tool result answers one `tool_use` id,
pointing at the line that called it. Parallel calls would then look like a fork. So the lines of one API
turn (assistant lines sharing `message.id` and the tool results answering their `tool_use` ids) are chained
in file order, and a line that follows any line of a finished turn follows the turn's last line. What stays
a fork is a real one: two user prompts (an edited prompt), or two replies with different `message.id`s (a
retry), under one parent.

`isSidechain` lines (inline, or in `<session>/subagents/agent-*.jsonl`, whose first line has no parent) are
branches of the same session and never move its head. Every other `type` is skipped."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._entries import BadLine, Entry, Turn, block_text, joined, render_json, source_time

__all__ = ["ClaudeCodeParser", "claude_code_files"]

_TOOL_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"})


@dataclass
class _Turn:
    """The lines of one API turn seen so far; `last` is the key of the latest."""

    last: str


class ClaudeCodeParser:
    session: str | None = None  # each line names its own session (`sessionId`)

    def __init__(self) -> None:
        self._turn_of: dict[str, _Turn] = {}  # key of a kept line -> its API turn
        self._by_message: dict[str, _Turn] = {}  # message.id -> its API turn
        self._by_tool_use: dict[str, _Turn] = {}  # tool_use id -> the API turn that called it
        self._up: dict[str, str | None] = {}  # key of a skipped line -> its parentUuid

    def parse(self, value: Any, line: int) -> list[Entry]:
        if not isinstance(value, dict):
            raise BadLine("not a JSON object")
        kind = value.get("type")
        key = value.get("uuid")
        parent = value.get("parentUuid")
        if (key is not None and not isinstance(key, str)) or (
            parent is not None and not isinstance(parent, str)
        ):
            raise BadLine("uuid and parentUuid must be strings")
        if kind not in ("user", "assistant") or key is None:
            if isinstance(key, str):  # a skipped line in the chain (system, progress, ...): followed through
                self._up[key] = parent
            return []
        session = value.get("sessionId") if isinstance(value.get("sessionId"), str) else None
        try:
            turn, message_id, tool_uses, answers = _turn_of(value, kind)
        except BadLine:
            self._up[key] = parent
            raise
        sidechain = value.get("isSidechain") is True
        return [
            Entry(
                key,
                self._predecessor(key, parent, message_id, tool_uses, answers),
                turn,
                line,
                source_time(value.get("timestamp")),
                session,
                moves_head=not sidechain,
            )
        ]

    def _kept_ancestor(self, parent: str | None) -> str | None:
        seen: set[str] = set()
        while parent is not None and parent in self._up and parent not in seen:
            seen.add(parent)
            parent = self._up[parent]
        return parent

    def _predecessor(
        self,
        key: str,
        parent: str | None,
        message_id: str | None,
        tool_uses: list[str],
        answers: list[str],
    ) -> str | None:
        turn = self._by_message.get(message_id) if message_id is not None else None
        if turn is None:
            turn = next((self._by_tool_use[a] for a in answers if a in self._by_tool_use), None)
        if turn is not None:
            predecessor: str | None = turn.last  # the next line of an API turn: chained in file order
        else:
            predecessor = self._kept_ancestor(parent)
            finished = self._turn_of.get(predecessor) if predecessor is not None else None
            if finished is not None:
                predecessor = finished.last  # after a turn: after its last line, never from its middle
            if message_id is not None:
                turn = _Turn(key)
                self._by_message[message_id] = turn
        if turn is not None:
            turn.last = key
            self._turn_of[key] = turn
            for tool_use in tool_uses:
                self._by_tool_use[tool_use] = turn
        return predecessor


def _turn_of(value: dict[str, Any], kind: str) -> tuple[Turn, str | None, list[str], list[str]]:
    """(the turn, its message.id, the tool_use ids it calls, the tool_use ids it answers)."""
    message = value.get("message")
    if not isinstance(message, dict):
        raise BadLine(f"a {kind} line without a message object")
    content = message.get("content")
    message_id = message.get("id") if kind == "assistant" and isinstance(message.get("id"), str) else None
    role = kind
    info: dict[str, Any] = {"type": kind}
    if value.get("isSidechain") is True:
        info["sidechain"] = True
    if value.get("isMeta") is True or value.get("isCompactSummary") is True:
        role = "system"
    tool_uses: list[str] = []
    answers: list[str] = []
    if isinstance(content, str):
        return Turn(role, content, info), message_id, tool_uses, answers
    if not isinstance(content, list):
        raise BadLine("message.content is neither a string nor a list of blocks")
    parts: list[str] = []
    tools: list[str] = []
    is_tool = False
    for block in content:
        if not isinstance(block, dict):
            raise BadLine("a content block that is not an object")
        block_type = block.get("type")
        if block_type == "text":
            parts.append(str(block.get("text") or ""))
        elif block_type in _TOOL_BLOCKS:
            is_tool = True
            parts.append(_render_tool_block(block, tools, tool_uses, answers))
        elif isinstance(block_type, str):
            parts.append(f"[{block_type}]")  # an image, a document: named, not inlined
    if is_tool:
        role = "tool"
        info["tools"] = tools
    return Turn(role, joined(parts), info), message_id, tool_uses, answers


def _render_tool_block(
    block: dict[str, Any], tools: list[str], tool_uses: list[str], answers: list[str]
) -> str:
    block_type = block.get("type")
    if block_type in ("tool_use", "server_tool_use"):
        name = str(block.get("name") or "tool")
        tools.append(name)
        if isinstance(block.get("id"), str):
            tool_uses.append(block["id"])
        return f"[tool_use {name}] {render_json(block.get('input'))}"
    if block_type == "tool_result":
        if isinstance(block.get("tool_use_id"), str):
            answers.append(block["tool_use_id"])
        error = " error" if block.get("is_error") is True else ""
        return f"[tool_result{error}] {block_text(block.get('content'))}"
    if block_type == "thinking":
        return f"[thinking] {block.get('thinking') or ''}"
    return f"[{block_type}]"


def claude_code_files(path: Path) -> list[Path]:
    """A session file and its sub-agents' files (`<session>/subagents/agent-*.jsonl`), main file first; a
    directory (a project) gives every session file in it, each followed by its sub-agents'. Claude Code's
    own compaction agents (`agent-acompact-*`) replay the conversation to summarise it: they are left out."""
    if path.is_dir():
        mains = sorted(p for p in path.glob("*.jsonl") if not p.name.startswith("agent-"))
        loose = sorted(p for p in path.glob("agent-*.jsonl"))  # older versions kept sub-agents beside
        files = [f for main in mains for f in claude_code_files(main)]
        return files + [p for p in loose if not p.name.startswith("agent-acompact-")]
    subagents = path.with_suffix("") / "subagents"
    extra = sorted(subagents.glob("agent-*.jsonl")) if subagents.is_dir() else []
    return [path, *(p for p in extra if not p.name.startswith("agent-acompact-"))]
