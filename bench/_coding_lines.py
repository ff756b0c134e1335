"""`dagmem bench coding`: what one line of a Claude Code transcript is, read as the benchmark needs it.

- the prompt the person typed, if the line is one (the text `UserPromptSubmit` carries);
- whether the line opens a new turn of the main agent (the one before it has then stopped: `Stop`);
- its raw text turn for the baseline: typed prompts and the assistant's text blocks, and with `tools` also
  its tool calls and their output (never thinking);
- the line with its top-level `timestamp` set to another time, every other byte kept.

Claude Code writes chrome of its own as `user` lines that nobody typed (an interrupted tool call's
marker, a background task's notification, a local command's or bash mode's output, IDE context); they
open a turn but are no prompt: `UserPromptSubmit` never carries them.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "Line",
    "agent_id",
    "is_boundary",
    "is_interrupt",
    "opens_turn",
    "parse",
    "text_turn",
    "typed_prompt",
    "with_timestamp",
]

Line = dict[str, Any]

# Whole `user` texts Claude Code writes itself, or wraps around what a command printed.
_CHROME = re.compile(
    r"^\s*(?:\[Request interrupted by user[^\]]*\]"
    r"|<task-notification>|<local-command-stdout>|<local-command-stderr>"
    r"|<bash-input>|<bash-stdout>|<bash-stderr>)"
)
_INTERRUPT = re.compile(r"^\s*\[Request interrupted by user")
# IDE context a host puts in a text block of its own beside the typed one.
_IDE = re.compile(r"^\s*<ide_[a-z_]+>.*</ide_[a-z_]+>\s*$", re.DOTALL)
_COMMAND_NAME = re.compile(r"<command-name>\s*/?([^<]*?)\s*</command-name>")
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
# A JSON string token or a bracket, for finding a top-level key in a line without re-serialising it.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]]')
_STRING_VALUE = re.compile(r'\s*:\s*"')


def parse(raw: str) -> Line | None:
    """A transcript line as a JSON object; None for a blank or unreadable line (still replayed as is)."""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _blocks(line: Line) -> list[Any]:
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _is_tool_result(line: Line) -> bool:
    return any(isinstance(b, dict) and b.get("type") == "tool_result" for b in _blocks(line))


def opens_turn(line: Line) -> bool:
    """A main-chain `user` line that is neither a tool's result, nor meta, nor a compaction's summary:
    something (typed or Claude Code's own) that starts the main agent again."""
    return (
        line.get("type") == "user"
        and line.get("isSidechain") is not True
        and line.get("isMeta") is not True
        and line.get("isCompactSummary") is not True
        and not _is_tool_result(line)
    )


def _texts(line: Line) -> list[str]:
    return [
        str(b.get("text") or "") for b in _blocks(line) if isinstance(b, dict) and b.get("type") == "text"
    ]


def typed_prompt(line: Line) -> str | None:
    """The prompt the person typed on this line (a slash command as `/name args`), else None."""
    if not opens_turn(line):
        return None
    texts = [t for t in _texts(line) if not _IDE.match(t)]
    joined = "\n".join(t for t in texts if t.strip())
    command = _COMMAND_NAME.search(joined)
    if command is not None:
        args = _COMMAND_ARGS.search(joined)
        said = args[1].strip() if args is not None else ""
        return f"/{command[1]} {said}".rstrip()
    if not joined.strip() or _CHROME.match(joined):
        return None
    return joined


def is_interrupt(line: Line) -> bool:
    """The marker Claude Code writes when the person interrupts the agent (Esc): no hook fires for it,
    `Stop` included (the turn did not finish, it was cut)."""
    return opens_turn(line) and _INTERRUPT.match("\n".join(_texts(line))) is not None


def is_boundary(line: Line) -> bool:
    return line.get("type") == "system" and line.get("subtype") == "compact_boundary"


def agent_id(line: Line) -> str | None:
    """The sub-agent whose result this (parent's tool_result) line reports, if any."""
    result = line.get("toolUseResult")
    value = result.get("agentId") if isinstance(result, dict) else None
    return value if isinstance(value, str) and value else None


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def text_turn(line: Line, *, tools: bool = False, sidechain_prompts: bool = True) -> str:
    """The line's raw text for the baseline ("" when it has none): a typed prompt, or in a sub-agent's
    file the task it was given (`sidechain_prompts`); an assistant line's text blocks; with `tools`, also
    each tool call (its name and input) and each tool's output. Thinking never counts."""
    kind = line.get("type")
    if kind == "user":
        if line.get("isSidechain") is True and sidechain_prompts and not _is_tool_result(line):
            prompt: str | None = "\n".join(_texts(line)).strip() or None
        else:
            prompt = typed_prompt(line)
        parts = [prompt] if prompt else []
        if tools:
            parts += [
                _result_text(b.get("content"))
                for b in _blocks(line)
                if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
        return "\n".join(p for p in parts if p)
    if kind != "assistant":
        return ""
    parts = []
    for block in _blocks(line):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text") or ""))
        elif tools and block.get("type") == "tool_use":
            parts.append(f"{block.get('name')} {json.dumps(block.get('input'), ensure_ascii=False)}")
    return "\n".join(p for p in parts if p)


def with_timestamp(raw: str, stamp: str) -> str:
    """`raw` with its top-level `timestamp` string set to `stamp`, every other byte as it was (a line
    without one, or that is not a JSON object, comes back unchanged). A nested `timestamp` (a file
    snapshot's) is not the line's own and is kept."""
    depth = 0
    key_next = False  # the last token at depth 1 was the key "timestamp" with a string value
    for token in _TOKEN.finditer(raw):
        text = token[0]
        if text in ("{", "["):
            depth += 1
            key_next = False
        elif text in ("}", "]"):
            depth -= 1
            key_next = False
        elif depth == 1 and key_next:
            return raw[: token.start()] + json.dumps(stamp) + raw[token.end() :]
        elif depth == 1 and text == '"timestamp"':
            # a key (not a value that reads "timestamp") whose value is a string
            key_next = _STRING_VALUE.match(raw, token.end()) is not None
    return raw
