"""Tool evidence as the importers make it (`format.ToolEvidence`): a call's input summarised by what the tool
does, and its result cut to the excerpt that kind of tool needs, shared by every host's parser.

A parser remembers each call (`Call`: its name, its input summary and what its input alone says of the
result: an edit's diff, a todo list) when it reads it, and builds the evidence (`evidence`) when it reads
the result that answers it. Hosts spell the same inputs differently (`file_path`, `path`, `filePath`;
`old_string`, `oldText`, `old_str`), so each field is looked up under every spelling."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..checkout import cited_of
from ..format import INPUT_CHARS, ToolEvidence, ToolKind, excerpt_of, output_counts, tool_kind
from ._entries import Turn

__all__ = ["UNKNOWN", "Call", "call_of", "evidence", "evidence_turn", "read_head", "todo_list"]

OLD_CHARS: Final = 300  # an edit's diff: the head of the text replaced ...
NEW_CHARS: Final = 800  # ... and of the text put in its place (what a later session needs most)
AGENT_CHARS: Final = 3000  # a sub-agent's report: its findings are the point of the call
READ_LINES: Final = 5  # a file read: its first lines say which file it is; the rest is in the file
_TODO_MARKS: Final = {"completed": "☑", "in_progress": "◐", "pending": "☐"}
# Only a run's output states counts that are its outcome ("134 tests, 0 failures"); a file's or a page's
# text that happens to hold "3 errors" says nothing of the call.
_COUNTED: Final[frozenset[ToolKind]] = frozenset({"shell", "agent", "other"})
_PATH_KEYS: Final = ("file_path", "path", "filePath", "notebook_path", "target_file", "file")
_NEW_KEYS: Final = ("new_string", "newText", "new_str", "new")
_PATCH_FILE: Final = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call as remembered until its result: bounded, whatever the input's size."""

    name: str
    input: str  # the summary the record's first line shows (at most `INPUT_CHARS`)
    detail: str = ""  # what the input alone says of the result: an edit's diff, a todo list; "" otherwise
    # An edit of one file: its path as the call named it and `checkout.cited_of` the text it wrote there
    # (None: it wrote no line), so that a reader can check later that the file still holds it.
    cited: tuple[str, str | None] | None = None


UNKNOWN: Final = Call("tool", "")  # a result whose call is not in the file read (another file has it)


def call_of(name: str, arguments: object, *, cwd: str | None = None) -> Call:
    """The call `name(arguments)` as a record needs it; `arguments` a JSON object, or text (a patch).
    `cwd`, the directory the agent worked in: paths under it are written relative to it (`lib/app.ex`,
    not `/home/me/work/app/lib/app.ex`), as the project's files are named wherever it is checked out."""
    args = _arguments(arguments)
    kind = tool_kind(name)
    summary = _summary(kind, name, args)
    detail = _detail(kind, name, args)
    if cwd and len(cwd) > 1:
        root = cwd.rstrip("/")
        summary = summary.replace(root + "/", "").replace(root, ".")
    cited = _cited(args) if kind == "edit" else None
    return Call(name or "tool", _cut(summary, INPUT_CHARS), detail, cited)


def evidence(
    call: Call,
    output: str,
    *,
    ok: bool,
    exit_code: int | None = None,
    file_text: str | None = None,
) -> ToolEvidence:
    """The record of `call` and its result. `output` is what the tool returned (for a shell: stdout, then
    stderr); `file_text` a read's file content when the host gives it apart from its rendering."""
    kind = tool_kind(call.name)
    ok = ok and exit_code in (None, 0)
    counts = output_counts(output) if kind in _COUNTED else ()
    if not ok:
        excerpt = excerpt_of(output)  # a failed call: its error is what a later session needs
    elif kind == "edit":
        excerpt = call.detail or excerpt_of(output)
    elif kind == "read":
        excerpt = read_head(output if file_text is None else file_text)
    elif kind == "todo":
        excerpt = call.detail or excerpt_of(output)
    elif kind == "agent":
        excerpt = excerpt_of(output, AGENT_CHARS)
    else:
        excerpt = excerpt_of(output)
    return ToolEvidence(call.name, call.input, ok, exit_code, counts, excerpt)


def evidence_turn(records: Sequence[ToolEvidence], info: dict[str, Any], extra: str = "") -> Turn:
    """The node of one or more results (one line may answer several calls): each record's text, a blank line
    between; `extra` (words of another kind the line carries) after them."""
    info["tools"] = [record.name for record in records]
    text = "\n\n".join([*(record.render() for record in records), *([extra] if extra else [])])
    return Turn("tool", text, info, evidence=True)


def edit_diff(old: str, new: str) -> str:
    """A compact diff: the replaced text's head as `- ` lines, the new text's head as `+ ` lines."""
    parts = [_prefixed("- ", _cut(old, OLD_CHARS)) if old else "", _prefixed("+ ", _cut(new, NEW_CHARS))]
    return "\n".join(part for part in parts if part)


def read_head(text: str) -> str:
    return excerpt_of("\n".join(text.lstrip("\n").split("\n", READ_LINES)[:READ_LINES]))


def todo_list(items: object, sep: str = "\n") -> str:
    """Todos (Claude Code's `{content, status}`, Codex's `{step, status}`) as `☐ x`, `◐ y`, `☑ z`."""
    if not isinstance(items, list):
        return ""
    out = []
    for item in items:
        if isinstance(item, Mapping):
            text = item.get("content", item.get("step", item.get("text", "")))
            out.append(f"{_TODO_MARKS.get(str(item.get('status')), '☐')} {text}")
    return sep.join(out)


def _arguments(arguments: object) -> dict[str, Any]:
    """Arguments as an object: a JSON string is parsed (Codex's and OpenAI's are), other text is `input`."""
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):
            return {"input": arguments}
        return parsed if isinstance(parsed, dict) else {"input": arguments}
    return dict(arguments) if isinstance(arguments, Mapping) else {}


def _summary(kind: ToolKind, name: str, args: dict[str, Any]) -> str:
    if kind == "shell":
        command = _first(args, "command", "cmd")
        if command is None and isinstance(args.get("action"), Mapping):  # Codex's local_shell_call
            command = args["action"].get("command")
        return _shell_text(command) if command is not None else _compact(args)
    if kind in ("edit", "read"):
        patch = args.get("input")
        if isinstance(patch, str) and "*** Begin Patch" in patch:  # Codex's apply_patch: the files it touches
            return ", ".join(_PATCH_FILE.findall(patch))
        path = _text(_first(args, *_PATH_KEYS))
        if kind == "read":
            span = [f"{key} {args[key]}" for key in ("offset", "limit") if args.get(key) is not None]
            return f"{path} ({', '.join(span)})" if span and path else path or _compact(args)
        return path or _compact(args)
    if kind == "search":
        pattern = _text(_first(args, "pattern", "query", "regex", "glob"))
        where = _text(_first(args, "path", "directory", "dir_path", "target_directory"))
        return f"{pattern} in {where}" if pattern and where else pattern or where or _compact(args)
    if kind == "agent":
        description = _text(_first(args, "description", "prompt", "task"))
        agent = _text(_first(args, "subagent_type", "agent"))
        return f"{description} ({agent})" if agent else description or _compact(args)
    if kind == "todo":
        return todo_list(_first(args, "todos", "plan"), "; ") or _compact(args)
    if kind == "web":
        return _text(_first(args, "url", "query", "q")) or _compact(args)
    return _compact(args)


def _detail(kind: ToolKind, name: str, args: dict[str, Any]) -> str:
    if kind == "todo":
        return todo_list(_first(args, "todos", "plan"))
    if kind != "edit":
        return ""
    edits = args.get("edits")
    if isinstance(edits, list) and edits:  # MultiEdit: each edit's diff, up to one edit's budget in all
        diffs = [_edit_of(e) for e in edits if isinstance(e, Mapping)]
        return _cut("\n".join(d for d in diffs if d), OLD_CHARS + NEW_CHARS)
    patch = args.get("input")
    if isinstance(patch, str):  # apply_patch: the patch is the diff
        return _cut(patch.strip("\n"), OLD_CHARS + NEW_CHARS)
    written = _first(args, "content", "file_text", "contents")
    if isinstance(written, str) and _first(args, "old_string", "oldText", "old_str") is None:
        return _cut(written, NEW_CHARS)  # a file written whole: its head
    return _edit_of(args)


def _cited(args: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """What an edit of one file wrote there: the new text of a replacement (the longest, of several), or
    a file written whole (its head). Not a patch (it may touch several files) nor a notebook (its file is
    JSON: the cell's lines are not the file's)."""
    path = _first(args, "file_path", "path", "filePath", "target_file", "file")
    if not isinstance(path, str) or not path or isinstance(args.get("input"), str):
        return None
    edits = args.get("edits")
    if isinstance(edits, list):
        texts = [_text(_first(e, *_NEW_KEYS)) for e in edits if isinstance(e, Mapping)]
    else:
        texts = [_text(_first(args, *_NEW_KEYS, "content", "file_text", "contents"))]
    return path, cited_of(max(texts, key=len, default=""))


def _edit_of(args: Mapping[str, Any]) -> str:
    old = _text(_first(args, "old_string", "oldText", "old_str", "old"))
    new = _text(_first(args, *_NEW_KEYS, "new_source"))
    return edit_diff(old, new) if old or new else ""


def _first(args: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if args.get(key) is not None:
            return args[key]
    return None


def _shell_text(command: object) -> str:
    """A command as typed: an argv list joined, `bash -lc 'x'` (how Codex wraps one) read as `x`."""
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        if (
            len(command) == 3
            and command[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
            and command[1]
            in (
                "-lc",
                "-c",
            )
        ):
            return str(command[2])
        return shlex.join(command)
    return _text(command)


def _text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else _compact(value)


def _compact(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return "" if text in ("{}", "null") else _cut(text, INPUT_CHARS)


def _prefixed(prefix: str, text: str) -> str:
    return "\n".join(prefix + line for line in text.split("\n"))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 2] + " …"
