"""Plain OpenAI chat message lists: a JSON array of `{role, content}` (or `{"messages": [...]}`), linear,
DESIGN §10.

`user` and `assistant` messages are records (content a string, or a list of parts whose `text` parts are
the text); an assistant message with only `tool_calls`, and `tool` / `function` messages, are `tool` rows;
`system` and `developer` messages are `system` rows. Messages carry no ids (an `id` field is used when one
is there): each node's id is derived from the previous one's and the message (`chain_key`), so the same
list imported again, or grown, adds only its new messages, and two lists that share a beginning fork where
they part. Times: a message's `timestamp` / `created_at` / `created` when present, else the file's."""

from __future__ import annotations

from typing import Any

from ._entries import BadLine, Entry, Turn, chain_key, joined, render_json, source_time

__all__ = ["OpenAIParser"]

_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


class OpenAIParser:
    session: str | None = None

    def __init__(self) -> None:
        self._previous: str | None = None

    def parse(self, value: Any, line: int) -> list[Entry]:
        if not isinstance(value, dict):
            raise BadLine("a message that is not a JSON object")
        role = value.get("role")
        content = value.get("content")
        if isinstance(content, str) or content is None:
            text = content or ""
        elif isinstance(content, list):
            text = joined(
                str(p.get("text") or "") if isinstance(p, dict) and isinstance(p.get("text"), str) else ""
                for p in content
            )
        else:
            raise BadLine("content is neither a string nor a list of parts")
        info: dict[str, Any] = {"type": str(role)}
        calls = value.get("tool_calls")
        if role in ("tool", "function"):
            turn = Turn("tool", text, info)
        elif role == "assistant" and not text.strip() and isinstance(calls, list) and calls:
            info["tools"] = [_tool_name(call) for call in calls]
            turn = Turn("tool", render_json(calls), info)
        elif isinstance(role, str) and role in _ROLES:
            # A bare messages array says nothing of who typed its user messages (API logs carry retrieved
            # documents and templated prompts there): imported, never taken as the person's own words.
            kind = _ROLES[role]
            turn = Turn(kind, text, info, "imported" if kind == "user" else None)
        else:
            raise BadLine(f"a message with an unknown role {role!r}")
        time = next(
            (t for t in (source_time(value.get(k)) for k in ("timestamp", "created_at", "created")) if t),
            None,
        )
        own = value.get("id")
        key = own if isinstance(own, str) and own else chain_key(self._previous, value)
        entry = Entry(key, self._previous, turn, line, time)
        self._previous = key
        return [entry]


def _tool_name(call: object) -> str:
    """The function a `tool_calls` entry names; one of another shape makes its message a bad one."""
    function = call.get("function", {}) if isinstance(call, dict) else None
    if not isinstance(function, dict):
        raise BadLine("a tool_calls entry whose 'function' is not an object")
    return str(function.get("name") or "tool")
