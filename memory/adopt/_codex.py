"""Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`), DESIGN §10.

A rollout is linear. Each line is `{"timestamp", "type", "payload"}`: `session_meta` names the session,
`response_item` payloads are the conversation, and `event_msg` (the UI's copy of the same turns),
`turn_context` and compaction lines (`compacted`, and `compaction*` items) are skipped. Older rollouts put
the meta object (`id`, `timestamp`) on the first line and the response items bare on the following lines;
both are read.

Items: a `message` from the user or the assistant is a record with its text blocks as text (`developer` and
`system` messages, and the context Codex injects as user messages — `<environment_context>`,
`<user_instructions>`, AGENTS.md — are `system` rows); function, custom-tool, shell and web-search calls
are `tool` rows, each call remembered by its `call_id`; a call's output (`function_call_output`,
`custom_tool_call_output`) is tool evidence (`format.ToolEvidence`, see `_evidence`) of the call it
answers: a shell command given as an argv array (`["bash", "-lc", "cargo test"]` reads `cargo test`) or a
string, an `apply_patch`'s files and patch, and the exit status the output states (its JSON `metadata`'s
`exit_code`, or the `Exit code: N` / `Process exited with code N` header before its `Output:`).
`reasoning` (opaque, often encrypted) is skipped. Rollout items carry no ids: each node's id is derived
from the previous one's and the item itself (`chain_key`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..format import ToolEvidence
from ._entries import BadLine, Entry, Turn, block_text, chain_key, joined, render_json, source_time
from ._evidence import UNKNOWN, Call, call_of, evidence, evidence_turn

__all__ = ["CodexParser", "codex_session_id"]

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
# The header Codex puts before a command's output: "Exit code: 0\nWall time: 1.2 seconds\nOutput:\n…", or
# a unified exec's "Chunk ID: …\nWall time: …\nProcess exited with code 0\n…\nOutput:\n…".
_HEADER = re.compile(r"\A((?:[A-Z][A-Za-z ]{1,40}: [^\n]*\n|Process [^\n]*\n){1,8})Output:\n")
_EXIT = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)$", re.MULTILINE)


def codex_session_id(path: Path) -> str:
    found = _UUID.findall(path.stem)
    return found[-1] if found else path.stem


class CodexParser:
    def __init__(self) -> None:
        self.session: str | None = None
        self._previous: str | None = None
        self._calls: dict[str, Call] = {}  # call_id -> the call, until (and after) its output
        self._cwd: str | None = None  # where the agent works (`session_meta`, `turn_context`): paths below it

    def parse(self, value: Any, line: int) -> list[Entry]:
        if not isinstance(value, dict):
            raise BadLine("not a JSON object")
        kind = value.get("type")
        time = source_time(value.get("timestamp"))
        if kind == "session_meta" or (line == 1 and kind is None and "id" in value):
            meta = value.get("payload") if kind == "session_meta" else value
            if isinstance(meta, dict) and isinstance(meta.get("id"), str):
                self.session = meta["id"]
            if isinstance(meta, dict) and isinstance(meta.get("cwd"), str):
                self._cwd = meta["cwd"]
            return []
        if kind == "turn_context" and isinstance(value.get("payload"), dict):
            cwd = value["payload"].get("cwd")
            self._cwd = cwd if isinstance(cwd, str) else self._cwd
        if kind == "response_item":
            item = value.get("payload")
            if not isinstance(item, dict):
                raise BadLine("a response_item without a payload object")
        elif kind in ("message", "reasoning", *_CALLS, *_OUTPUTS):
            item = value  # an older rollout: the item itself
        else:
            return []  # event_msg, turn_context, compacted, record_type state, ...
        turn = self._turn(item)
        if turn is None:
            return []
        key = chain_key(self._previous, item)
        entry = Entry(key, self._previous, turn, line, time, self.session)
        self._previous = key
        return [entry]

    def _turn(self, item: dict[str, Any]) -> Turn | None:
        kind = item.get("type")
        call_id = item.get("call_id")
        if kind in _CALLS and isinstance(call_id, str):
            name = str(item.get("name") or kind)
            arguments = item.get("arguments", item.get("input", item.get("action")))
            self._calls[call_id] = call_of(name, arguments, cwd=self._cwd)
        elif kind in _OUTPUTS:
            call = self._calls.get(call_id, UNKNOWN) if isinstance(call_id, str) else UNKNOWN
            return evidence_turn([_output_evidence(call, item.get("output"))], {"type": str(kind)})
        return _turn(item)


def _output_evidence(call: Call, output: object) -> ToolEvidence:
    """A call's output as evidence: its text without Codex's header, the exit status the header (or the
    JSON `metadata` of older rollouts) states; `success: false` is a failure."""
    ok, exit_code = True, None
    if isinstance(output, dict):  # {"content": ..., "success": false}: a failure as the API is sent one
        ok = output.get("success") is not False
        output = output.get("content", "")
    text = block_text(output)
    if text.startswith("{") and '"metadata"' in text:
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("metadata"), dict):
            found = parsed["metadata"].get("exit_code")
            exit_code = found if isinstance(found, int) and not isinstance(found, bool) else None
            text = block_text(parsed.get("output", ""))
    header = _HEADER.match(text)
    if header is not None:
        status = _EXIT.search(header.group(1))
        exit_code = int(status.group(1)) if status is not None else exit_code
        text = text[header.end() :]
    return evidence(call, text, ok=ok, exit_code=exit_code)


def _turn(item: dict[str, Any]) -> Turn | None:
    kind = item.get("type")
    info: dict[str, Any] = {"type": str(kind)}
    if kind == "message":
        role = item.get("role")
        content = item.get("content")
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = joined(
                str(b.get("text") or "")
                for b in content
                if isinstance(b, dict) and b.get("type") in ("input_text", "output_text", "text")
            )
        else:
            raise BadLine("a message whose content is neither a string nor a list")
        if role == "assistant":
            return Turn("assistant", text, info)
        if role == "user":
            injected = text.lstrip().startswith(_INJECTED)
            return Turn("system" if injected else "user", text, info)
        if role in ("developer", "system"):
            return Turn("system", text, info)
        raise BadLine(f"a message with an unknown role {role!r}")
    if kind in _CALLS:
        name = str(item.get("name") or kind)
        info["tools"] = [name]
        arguments = item.get("arguments", item.get("input", item.get("action")))
        text = arguments if isinstance(arguments, str) else render_json(arguments)
        return Turn("tool", f"[{kind} {name}] {text}", info)
    return None  # reasoning, compaction summaries, anything newer
