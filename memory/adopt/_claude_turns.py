"""What one Claude Code `user` or `assistant` line is as a turn (see `_claude_code` for the rules): its role,
text and origin, the tool calls it makes and the results it carries, made tool evidence.

`TurnReader` keeps, for one file, each call until its result (`Call`: name, input summary, what the input
says of the result) and each bash-mode input line until its output; both are bounded per call."""

from __future__ import annotations

import re
from typing import Any, Final

from ..format import ANSWERED, ToolEvidence, tool_kind
from ._claude_chrome import bash_input, bash_output, read_user_text
from ._entries import BadLine, Turn, block_text, joined, render_json
from ._evidence import UNKNOWN, Call, call_of, evidence, evidence_turn

__all__ = ["TurnReader"]

_TOOL_BLOCKS: Final = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"}
)
# A failed shell call's result opens with its exit status ("Exit code 2\n..."; "Error: " in the
# structured copy).
_EXIT: Final = re.compile(r"^(?:Error: )?Exit code (-?\d+)\s*(?:\n|$)")
_READ_PREFIX: Final = re.compile(r"^ *\d+→", re.MULTILINE)  # a Read result's line numbers ("    12→")
# (No leading `\s*`: a pattern that opens with `<` is searched for fast; one that opens with `\s*` is tried
# at every offset of a long output, a hundred times slower.)
_REMINDER: Final = re.compile(r"<system-reminder>.*?</system-reminder\s*>", re.IGNORECASE | re.DOTALL)


class TurnReader:
    def __init__(self) -> None:
        self._calls: dict[str, Call] = {}  # tool_use id -> the call, until (and after) its result
        self._bash: dict[str, str] = {}  # uuid of a bash-mode input line -> its command

    def read(self, value: dict[str, Any], kind: str) -> tuple[Turn, str | None, list[str], list[str]]:
        """(the turn, its message.id, the tool_use ids it calls, the tool_use ids it answers)."""
        message = value.get("message")
        if not isinstance(message, dict):
            raise BadLine(f"a {kind} line without a message object")
        content = message.get("content")
        message_id = message.get("id") if kind == "assistant" and isinstance(message.get("id"), str) else None
        info: dict[str, Any] = {"type": kind}
        if value.get("isSidechain") is True:
            info["sidechain"] = True
        if value.get("isMeta") is True or value.get("isCompactSummary") is True:
            system = True
        else:
            system = kind == "assistant" and message.get("model") == "<synthetic>"  # made up by the CLI
        tool_uses: list[str] = []
        answers: list[str] = []
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = content
        else:
            raise BadLine("message.content is neither a string nor a list of blocks")
        words: list[str] = []  # the text blocks
        parts: list[str] = []  # ... and the other blocks that are no tool's, named (an image, a document)
        shown: list[str] = []  # every block, a tool's rendered as a tool row shows it, in the line's order
        names: list[str] = []
        results: list[ToolEvidence] = []
        cited: list[tuple[str, str | None] | None] = []  # each result's edit, when it is one
        tooled = False  # a call or thinking: a tool row, but for an assistant's words beside them
        for block in blocks:
            if not isinstance(block, dict):
                raise BadLine("a content block that is not an object")
            block_type = block.get("type")
            if block_type == "text":
                words.append(str(block.get("text") or ""))
                parts.append(words[-1])
                shown.append(words[-1])
            elif block_type == "tool_result":
                tool_use = block.get("tool_use_id")
                if isinstance(tool_use, str):
                    answers.append(tool_use)
                call = self._calls.get(tool_use, UNKNOWN) if isinstance(tool_use, str) else UNKNOWN
                results.append(_result(call, block, value.get("toolUseResult")))
                cited.append(call.cited if results[-1].ok else None)
            elif block_type in _TOOL_BLOCKS:
                shown.append(self._tool_block(block, names, tool_uses, value.get("cwd")))
                tooled = True
            elif isinstance(block_type, str):
                parts.append(f"[{block_type}]")
                shown.append(parts[-1])
        text = joined(parts)
        if system:
            return Turn("system", joined(shown), info), message_id, tool_uses, answers
        if results:  # the results of calls (and whatever else the line carries, after them)
            extra = read_user_text(text).typed if text else ""
            turn = evidence_turn(results, info, extra)
            turn.cited = cited[0] if len(cited) == 1 else None  # one record: the node is that edit's
            return turn, message_id, tool_uses, answers
        if tooled:  # calls, thinking
            info["tools"] = names
            said = joined(words)
            if kind == "assistant" and said.strip():  # its words beside its calls: what it said
                return Turn("assistant", said, info), message_id, tool_uses, answers
            return Turn("tool", joined(shown), info), message_id, tool_uses, answers
        if kind == "assistant":
            return Turn("assistant", text, info), message_id, tool_uses, answers
        return self._user(value, text, info), message_id, tool_uses, answers

    def _user(self, value: dict[str, Any], text: str, info: dict[str, Any]) -> Turn:
        # A sub-agent's prompt is written by the agent that spawned it, not typed by the person.
        origin = "assistant" if value.get("isSidechain") is True else None
        key, parent = value.get("uuid"), value.get("parentUuid")
        command = bash_input(text)
        if command is not None and isinstance(key, str):
            self._bash[key] = command  # its output is the next line, and names this one its parent
        output = bash_output(text)
        if output is not None:  # the person ran a command in bash mode: its input is the parent line
            ran = self._bash.get(parent, "") if isinstance(parent, str) else ""
            stdout, stderr = output
            # Bash mode records no exit status: a run that wrote to stderr is told as an error.
            record = evidence(
                Call("Bash", ran), joined([stdout.strip("\n"), stderr.strip("\n")]), ok=not stderr.strip()
            )
            return evidence_turn([record], info)
        read = read_user_text(text)
        if read.host_role is None:
            return Turn("user", text, info, origin)
        if read.typed:  # the person's words without the host's: what an older importer stored is `legacy`
            return Turn("user", read.typed, info, origin, legacy=text)
        return Turn(read.host_role, text, info)

    def _tool_block(self, block: dict[str, Any], names: list[str], tool_uses: list[str], cwd: object) -> str:
        block_type = block.get("type")
        if block_type in ("tool_use", "server_tool_use"):
            name = str(block.get("name") or "tool")
            names.append(name)
            if isinstance(block.get("id"), str):
                tool_uses.append(block["id"])
                where = cwd if isinstance(cwd, str) else None
                self._calls[block["id"]] = call_of(name, block.get("input"), cwd=where)
            return f"[tool_use {name}] {render_json(block.get('input'))}"
        if block_type == "thinking":
            return f"[thinking] {block.get('thinking') or ''}"
        return f"[{block_type}]"


def _result(call: Call, block: dict[str, Any], structured: object) -> ToolEvidence:
    """A tool_result block as evidence of `call`: the structured result (`toolUseResult`) when the line has
    one that says more than the text the model was shown."""
    text = block_text(block.get("content"))
    if "<" in text:
        text = _REMINDER.sub("", text).rstrip()
    ok = block.get("is_error") is not True
    exit_code: int | None = None
    found = _EXIT.match(text)
    if found is not None:
        exit_code, text = int(found.group(1)), text[found.end() :]
    kind = tool_kind(call.name)
    # A read's file as shown to the model, its line numbers taken off (only its first lines are kept).
    file_text = _READ_PREFIX.sub("", text[:4000]) if kind == "read" else None
    if not isinstance(structured, dict):
        return evidence(call, text, ok=ok, exit_code=exit_code, file_text=file_text)
    if kind == "shell" and isinstance(structured.get("stdout"), str):
        stdout, stderr = structured["stdout"], structured.get("stderr")
        ran = joined([stdout.strip("\n"), stderr.strip("\n") if isinstance(stderr, str) else ""])
        text = ran or text  # a command sent to the background has no output: the result says so
        ok = ok and structured.get("interrupted") is not True
        if isinstance(structured.get("exitCode"), int):  # BashOutput: a background command's status
            exit_code = structured["exitCode"]
    elif kind == "agent" and structured.get("content") is not None:
        text = block_text(structured["content"])
    elif kind == "ask" and isinstance(structured.get("answers"), dict):
        # The person's answers, each to its question: what they chose, in their words.
        text = "\n".join(f"{q} {ANSWERED} {a}" for q, a in structured["answers"].items()) or text
    file = structured.get("file")
    if isinstance(file, dict) and isinstance(file.get("content"), str):
        file_text = file["content"]
    return evidence(call, text, ok=ok, exit_code=exit_code, file_text=file_text)
