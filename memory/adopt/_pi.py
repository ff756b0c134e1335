"""pi (pi-mono coding agent) session files (`~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`), DESIGN §10.

The first line is a `session` header (its `id` is the session). Since version 2 every other entry has an
`id` and a `parentId`, forming a tree; entries that are not messages (model and thinking-level changes,
labels, compactions, branch summaries, extension state) are skipped and followed through. pi's current
position is the entry appended last, so the head is the last entry's node (or nearest kept ancestor).
Version 1 files are linear, without ids: read as one chain, ids derived from the place in it.

Messages: `user` and `assistant` with text are records (an assistant's text blocks are its text, its tool
calls listed under the source info); an assistant message that is only thinking or tool calls is a `tool`
row; an extension's `custom` message is a `system` row. Each `toolCall` block is remembered by its id, and
a `toolResult` is tool evidence (`format.ToolEvidence`, see `_evidence`) of the call it answers (its
`toolName` when the call is not in the file): `ok` unless `isError`, the exit status a failed command's
text ends with ("Command exited with code 2"). A `bashExecution` (a command the person ran with `!`) is
tool evidence too, with its `exitCode`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..format import ToolEvidence
from ._entries import BadLine, Entry, Turn, block_text, chain_key, joined, render_json, source_time
from ._evidence import Call, call_of, evidence, evidence_turn

__all__ = ["PiParser", "header_session", "pi_session_id"]

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_EXITED = re.compile(r"\s*Command exited with code (-?\d+)\s*\Z")  # how pi's bash tool reports a failure


def pi_session_id(path: Path) -> str:
    """The session id when the header does not give one: the UUID in `<time>_<uuid>.jsonl`, or the name."""
    found = _UUID.findall(path.stem)
    return found[-1] if found else path.stem


def header_session(value: object) -> str | None:
    """The session a file's first line names: the `id` of its `session` header (None: no header names one)."""
    if isinstance(value, dict) and value.get("type") == "session" and isinstance(value.get("id"), str):
        return str(value["id"])
    return None


class PiParser:
    def __init__(self) -> None:
        self.session: str | None = None
        self._previous: str | None = None  # the last node of a version-1 (linear) file
        self._calls: dict[str, Call] = {}  # toolCall id -> the call, until (and after) its result
        self._cwd: str | None = None  # where the agent works (the session header's): paths below it

    def parse(self, value: Any, line: int) -> list[Entry]:
        if not isinstance(value, dict):
            raise BadLine("not a JSON object")
        kind = value.get("type")
        if kind == "session":
            self.session = header_session(value) or self.session
            if isinstance(value.get("cwd"), str):
                self._cwd = value["cwd"]
            return []
        time = source_time(value.get("timestamp"))
        key, parent = value.get("id"), value.get("parentId")
        tree = key is not None
        if tree and (not isinstance(key, str) or (parent is not None and not isinstance(parent, str))):
            raise BadLine("id and parentId must be strings")
        turn: Turn | None = None
        if kind == "message":
            message = value.get("message")
            if not isinstance(message, dict):
                if tree:  # still in the tree: its children follow its parent
                    return [Entry(str(key), parent, None, line, time, self.session)]
                raise BadLine("a message entry without a message object")
            try:
                turn = self._turn(message)
            except BadLine as bad:
                if tree:
                    raise BadLine(
                        str(bad), [Entry(str(key), parent, None, line, time, self.session)]
                    ) from None
                raise
            if time is None:
                time = source_time(message.get("timestamp"))
        elif kind == "custom_message":
            turn = Turn("system", block_text(value.get("content")), {"type": kind})
        if tree:
            return [Entry(str(key), parent, turn, line, time, self.session)]
        if turn is None:
            return []  # version 1: a non-message entry is not part of the chain
        key = chain_key(self._previous, value.get("message"))
        entry = Entry(key, self._previous, turn, line, time, self.session)
        self._previous = key
        return [entry]

    def _turn(self, message: dict[str, Any]) -> Turn:
        role = message.get("role")
        if role == "assistant" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if _is(block, "toolCall") and isinstance(block.get("id"), str):
                    self._calls[block["id"]] = call_of(
                        str(block.get("name") or "tool"), block.get("arguments"), cwd=self._cwd
                    )
        elif role == "toolResult":
            call_id = message.get("toolCallId")
            call = self._calls.get(call_id) if isinstance(call_id, str) else None
            name = str(message.get("toolName") or "tool")
            record = _result(
                call or Call(name, ""), _text(message.get("content")), message.get("isError") is True
            )
            return evidence_turn([record], {"type": f"message:{role}"})
        elif role == "bashExecution":
            exit_code = message.get("exitCode")
            ok = message.get("cancelled") is not True
            code = exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None
            record = evidence(
                call_of("bash", {"command": message.get("command")}, cwd=self._cwd),
                str(message.get("output") or ""),
                ok=ok,
                exit_code=code,
            )
            return evidence_turn([record], {"type": f"message:{role}"})
        return _turn(message)


def _result(call: Call, text: str, error: bool) -> ToolEvidence:
    exit_code = None
    found = _EXITED.search(text) if error else None
    if found is not None:
        exit_code, text = int(found.group(1)), text[: found.start()]
    return evidence(call, text, ok=not error, exit_code=exit_code)


def _turn(message: dict[str, Any]) -> Turn:
    role = message.get("role")
    content = message.get("content")
    info: dict[str, Any] = {"type": f"message:{role}"}
    if role == "user":
        return Turn("user", _text(content), info)
    if role == "assistant":
        blocks = content if isinstance(content, list) else []
        calls = [b for b in blocks if isinstance(b, dict) and b.get("type") == "toolCall"]
        if calls:
            info["tools"] = [str(b.get("name") or "tool") for b in calls]
        text = _text(content)
        if text.strip():
            return Turn("assistant", text, info)
        rendered = [f"[toolCall {b.get('name')}] {render_json(b.get('arguments'))}" for b in calls]
        thinking = [f"[thinking] {b.get('thinking') or ''}" for b in blocks if _is(b, "thinking")]
        return Turn("tool", joined([*thinking, *rendered]), info)
    if role in ("custom", "hookMessage", "branchSummary", "compactionSummary"):
        return Turn("system", _text(content) or str(message.get("summary") or ""), info)
    raise BadLine(f"a message with an unknown role {role!r}")


def _is(block: object, kind: str) -> bool:
    return isinstance(block, dict) and block.get("type") == kind


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return joined(str(b.get("text") or "") for b in content if _is(b, "text"))
    if content is None:
        return ""
    raise BadLine("message content is neither a string nor a list of blocks")
