"""Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`), DESIGN §10.

`user` and `assistant` lines with a `uuid` are nodes; the predecessor is `parentUuid`, followed up through
skipped lines to the nearest kept one; the time is `timestamp`, the session `sessionId`. `message.content` as
a string is the text; as a list, `text` blocks are the text. A line marked `isMeta` (text the CLI injected)
or `isCompactSummary` (the summary a compaction wrote) is a `system` row: not something the user said.

Tool calls (`_claude_turns`, `_evidence`): an assistant line's `tool_use` blocks are remembered (each call's
name, a bounded summary of its input, what its input says of the result: an edit's diff, a todo list); a
`user` line carrying `tool_result` blocks is tool evidence (`format.ToolEvidence`): a `tool` row whose
metadata says `"evidence": "tool"`, one record per result, of the call it answers (name `tool` when the
call is in another file) and the result: `ok` unless `is_error` (or an exit status other than 0), the exit
status the result opens with ("Exit code 2"), the counts the output states, and an excerpt by the tool's
kind, from the structured result (`toolUseResult`: a command's stdout and stderr, a read's file, a
sub-agent's report) when the line has one. An assistant line's text beside its calls is what it said (an
`assistant` record of the text); a line of calls or thinking only is a `tool` row, never a record.

The CLI's chrome in a user line (`_claude_chrome`: a slash command's wrapper, `<system-reminder>`s in any
letter case, a local command's output, bash mode's input and output, hook output, the IDE's notes, a
background task's notification, the caveat before local commands, "[Request interrupted by user...]") is
stripped: what the person typed beside it is the `user` record; a line with nothing typed is a `system` row
(a `tool` row for a command's output), kept in the chain. A slash command given arguments is the person's
words (`/name args`); one without stays a `system` row. Bash mode's output line is tool evidence of the
command its input line (its parent) ran. An assistant line the CLI made up itself (`model` `<synthetic>`:
"No response requested.", an API error) is a `system` row. A sidechain's user text (a sub-agent's prompt)
was written by the agent that spawned it: origin `assistant`.

Claude Code writes one API turn as several lines: each content block of the reply is its own assistant line
(sharing `message.id`), each chained to the one before, and each tool result answers one `tool_use` id,
pointing at the line that called it. Parallel calls would then look like a fork. So the lines of one API
turn (assistant lines sharing `message.id` and the tool results answering their `tool_use` ids) are chained
in file order, and a line that follows any line of a finished turn follows the turn's last line. What stays
a fork is a real one: two user prompts (an edited prompt), or two replies with different `message.id`s (a
retry), under one parent.

`isSidechain` lines (inline, or in `<session>/subagents/agent-*.jsonl`, whose first line has no parent) are
side branches of the same session, appended `spawned` (`metadata.spawned`): they never move its head, which
is the main transcript's own leaf (its last line that is no sidechain's). Every other `type` is skipped.

A sub-agent's lines name it (`agentId`), and the result of the task that spawned it names it too
(`toolUseResult.agentId` on the main transcript's tool result line). A sub-agent file whose lines name a
session of their own becomes that session, spawned from the parent session at that tool result line
(`spawned_from`, see `Importer`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._claude_turns import TurnReader
from ._entries import BadLine, Entry, source_time

__all__ = ["ClaudeCodeParser", "claude_code_files"]

_OWN_KEYS = frozenset({"sessionId", "leafUuid", "messageId"})  # what every line Claude Code writes has one of


@dataclass
class _Turn:
    """The lines of one API turn seen so far; `last` is the key of the latest."""

    last: str


class ClaudeCodeParser:
    session: str | None = None  # each line names its own session (`sessionId`)

    def __init__(self) -> None:
        self.known = 0  # lines that are Claude Code's (see `Importer.unrecognised`)
        self._turn_of: dict[str, _Turn] = {}  # key of a kept line -> its API turn
        self._by_message: dict[str, _Turn] = {}  # message.id -> its API turn
        self._by_tool_use: dict[str, _Turn] = {}  # tool_use id -> the API turn that called it
        self._up: dict[str, str | None] = {}  # key of a skipped line -> its parentUuid
        self._turns = TurnReader()  # the calls seen, until their results

    def parse(self, value: Any, line: int) -> list[Entry]:
        if not isinstance(value, dict):
            raise BadLine("not a JSON object")
        kind = value.get("type")
        if isinstance(kind, str) and not _OWN_KEYS.isdisjoint(value):
            self.known += 1  # a line of Claude Code's, a turn or not (a file may hold only summaries)
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
            turn, message_id, tool_uses, answers = self._turns.read(value, kind)
        except BadLine:
            self._up[key] = parent
            raise
        sidechain = value.get("isSidechain") is True
        agent = value.get("agentId") if sidechain and isinstance(value.get("agentId"), str) else None
        result = value.get("toolUseResult")
        spawns = result.get("agentId") if isinstance(result, dict) else None
        return [
            Entry(
                key,
                self._predecessor(key, parent, message_id, tool_uses, answers),
                turn,
                line,
                source_time(value.get("timestamp")),
                session,
                moves_head=not sidechain,
                agent=agent,
                spawns=spawns if isinstance(spawns, str) and spawns else None,
                where=(value.get("cwd"), value.get("gitBranch")),
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
