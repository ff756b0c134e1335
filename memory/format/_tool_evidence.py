"""Tool evidence: a tool call with its result, as the one compact text record memory keeps of it.

A coding agent's session establishes most of what a later session needs in what it ran: the command that
builds or tests the project and whether it passed, the file an edit changed, the error a run printed. An
importer (or a host) turns each call and its result into one `tool` node whose text is this record and
whose metadata says `"evidence": "tool"` (`EVIDENCE_KEY`); only such tool nodes are records (archived,
cited, indexed, never a core fact, always quoted as material). The text, so that the archive, the index and
every reader hold the same words:

    <Tool>: <input>                    the tool's name and its input on one line: a shell command, a
                                       path, a pattern, a task's description (at most `INPUT_CHARS`)
    → ok|error[ · exit N][ · <count>]  the outcome, the exit status when known, and each count the output
                                       states ("134 tests, 0 failures", "3 passed"), verbatim
    <excerpt>                          the output's first lines and its last ones (an edit: the new text),
                                       `[… N lines …]` between them; at most `EXCERPT_CHARS` in all

`render` makes it and `parse` reads it back; both are pure. Which tools read, write, search or run is data
(`TOOL_KINDS`), not code: another host's tool names are a row more.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "ANSWERED",
    "EVIDENCE_KEY",
    "EVIDENCE_TOOL",
    "EXCERPT_CHARS",
    "INPUT_CHARS",
    "ToolEvidence",
    "ToolKind",
    "excerpt_of",
    "is_tool_evidence",
    "output_counts",
    "parse_tool_evidence",
    "tool_kind",
]

EVIDENCE_KEY: Final = "evidence"  # node metadata: {"evidence": "tool"} makes a tool row a record
EVIDENCE_TOOL: Final = "tool"
ANSWERED: Final = "→"  # between a question an `ask` tool put to the person and their answer, a line each
INPUT_CHARS: Final = 400
EXCERPT_CHARS: Final = 2000
_HEAD_LINES, _TAIL_LINES, _LINE_CHARS = 12, 8, 240

ToolKind = Literal["shell", "edit", "read", "search", "agent", "todo", "ask", "web", "other"]

# Tool names as hosts spell them (Claude Code, Codex, pi, the usual MCP and editor agents), by what the call
# does. Matched case-insensitively on the name, and on its last `__` part for an MCP tool (`mcp__x__bash`).
TOOL_KINDS: Final[dict[ToolKind, frozenset[str]]] = {
    "shell": frozenset(
        {"bash", "shell", "shell_command", "exec_command", "local_shell", "local_shell_call", "run_terminal_cmd",
         "run_command", "execute_command", "terminal", "container.exec", "bashoutput", "killshell"}
    ),
    "edit": frozenset(
        {"edit", "multiedit", "write", "notebookedit", "apply_patch", "str_replace_editor",
         "str_replace_based_edit_tool", "create_file", "write_file", "edit_file", "replace", "insert"}
    ),
    "read": frozenset({"read", "view", "read_file", "cat", "open_file", "notebookread"}),
    "search": frozenset({"grep", "glob", "ls", "find", "search", "list_dir", "codebase_search", "file_search"}),
    "agent": frozenset({"task", "agent", "subagent", "dispatch_agent"}),
    "todo": frozenset({"todowrite", "todo_write", "update_plan", "todoread"}),
    # The agent asks the person and the result holds the person's answers (`question → answer` lines).
    "ask": frozenset({"askuserquestion", "ask_user_question", "request_user_input", "ask_followup_question"}),
    "web": frozenset({"webfetch", "websearch", "web_search", "fetch", "browser"}),
}  # fmt: skip

_OUTCOME: Final = re.compile(r"^→ (?P<ok>ok|error)(?: · exit (?P<exit>-?\d+))?(?P<counts>(?: · [^\n]*)?)$")
_HEAD_LINE: Final = re.compile(r"^(?P<name>[A-Za-z_][\w.:-]{0,79}): (?P<input>[^\n]*)$")
# Counts a test runner, a linter or a build prints: "134 tests, 0 failures", "3 passed, 1 failed in 2.1s",
# "Tests: 2 failed, 10 passed", "test result: ok. 12 passed; 0 failed", "Found 3 errors", "0 warnings".
_COUNT: Final = re.compile(
    r"\b\d+ (?:tests?|examples?|specs?|doctests?|properties|assertions|suites?)"
    r"(?:[,;] \d+ (?:failures?|errors?|skipped|excluded|passed|failed|pending|invalid))*"
    r"|\b\d+ (?:passed|failed|failures?|errors?|skipped|warnings?|xfailed|xpassed|deselected)"
    r"(?:[,;] \d+ (?:passed|failed|failures?|errors?|skipped|warnings?|xfailed|xpassed|deselected))*"
    r"|\bFound \d+ errors?\b",
    re.IGNORECASE,
)
_SPACE: Final = re.compile(r"\s+")


@dataclass(frozen=True)
class ToolEvidence:
    """One tool call and its result. `exit` is the shell's exit status when the output says it."""

    name: str
    input: str
    ok: bool
    exit: int | None = None
    counts: tuple[str, ...] = ()
    excerpt: str = ""

    @property
    def kind(self) -> ToolKind:
        return tool_kind(self.name)

    def render(self) -> str:
        """The record's text (see the module's doc); `parse_tool_evidence(e.render()) == e` for a normal
        `e` (a one-line name and input, counts without " · ")."""
        name = _one_line(self.name, 80) or "tool"
        outcome = "ok" if self.ok else "error"
        if self.exit is not None:
            outcome += f" · exit {self.exit}"
        for count in self.counts:
            outcome += f" · {_one_line(count, 80)}"
        lines = [f"{name}: {_one_line(self.input, INPUT_CHARS)}", f"→ {outcome}"]
        if self.excerpt.strip():
            lines.append(self.excerpt.rstrip("\n"))
        return "\n".join(lines)


def tool_kind(name: str) -> ToolKind:
    key = name.casefold().rsplit("__", 1)[-1]
    for kind, names in TOOL_KINDS.items():
        if key in names:
            return kind
    return "other"


def is_tool_evidence(metadata: object) -> bool:
    """Does a node's metadata make it tool evidence (a record)?"""
    return isinstance(metadata, dict) and metadata.get(EVIDENCE_KEY) == EVIDENCE_TOOL


def parse_tool_evidence(text: str) -> ToolEvidence | None:
    """The evidence a record's text states, None when the text is not a tool evidence record."""
    head, _, rest = text.partition("\n")
    outcome_line, _, excerpt = rest.partition("\n")
    first = _HEAD_LINE.match(head)
    outcome = _OUTCOME.match(outcome_line)
    if first is None or outcome is None:
        return None
    counts = tuple(c for c in outcome["counts"].split(" · ") if c)
    exit_code = int(outcome["exit"]) if outcome["exit"] is not None else None
    return ToolEvidence(first["name"], first["input"], outcome["ok"] == "ok", exit_code, counts, excerpt)


def output_counts(output: str, limit: int = 4) -> tuple[str, ...]:
    """The counts an output states (a test run's, a linter's), verbatim, last ones first (a summary line
    ends a run), at most `limit`, each once."""
    found: list[str] = []
    for match in reversed(list(_COUNT.finditer(output[-20_000:]))):
        count = _one_line(match.group(), 80)
        if count not in found:
            found.append(count)
        if len(found) >= limit:
            break
    return tuple(found)


def excerpt_of(output: str, chars: int = EXCERPT_CHARS) -> str:
    """An output's first lines and last ones, `[… N lines …]` between them when lines are left out, each
    line cut at `_LINE_CHARS`, at most about `chars` in all."""
    lines = [_cut(line.rstrip(), _LINE_CHARS) for line in output.strip("\n").split("\n")]
    lines = [line for line in lines if line.strip()] if len(lines) > _HEAD_LINES + _TAIL_LINES else lines
    if len(lines) <= _HEAD_LINES + _TAIL_LINES and sum(len(x) + 1 for x in lines) <= chars:
        return "\n".join(lines)
    head, tail = _fit(lines[:_HEAD_LINES], chars * 3 // 5), _fit(lines[-_TAIL_LINES:][::-1], chars * 2 // 5)
    tail.reverse()
    left = len(lines) - len(head) - len(tail)
    return "\n".join([*head, f"[… {left} lines …]", *tail]) if left > 0 else "\n".join([*head, *tail])


def _fit(lines: Sequence[str], chars: int) -> list[str]:
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > chars:
            break
        out.append(line)
        used += len(line) + 1
    return out


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 2] + " …"


def _one_line(text: str, limit: int) -> str:
    return _cut(_SPACE.sub(" ", text).strip(), limit)
