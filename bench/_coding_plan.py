"""`dagmem bench coding`: the order in which Claude Code writes a session's lines and calls its hooks, as
steps (pure: nothing here writes or runs anything; `_coding_replay` carries the steps out).

- `SessionStart` (`startup`) first.
- Before each main-chain line that starts the agent again, `Stop` if an agent turn came before it; if
  the person typed that line, `UserPromptSubmit` with its prompt; then the line. A turn the person
  interrupted (Claude Code's `[Request interrupted by user…]` line) gets no `Stop`: Claude Code fires
  none on an interrupt, so the next prompt comes without one.
- A sub-agent's file is written whole just before the parent's tool_result line that reports it
  (`toolUseResult.agentId`), then `SubagentStop`. Inline `isSidechain` lines (older transcripts) are
  written in order, and `SubagentStop` follows the last of a run of them.
- A `compact_boundary` line: `PreCompact` (its trigger from the line's `compactMetadata`, else `auto`),
  the compaction agent's file (`agent-acompact-*`, the one that wrote the summary), the boundary, the
  summary that follows it, then `SessionStart` (`compact`), whose context is recorded as the session's
  post-compaction context.
- At the end, any sub-agent file nothing reported, then `Stop` and `SessionEnd` (`prompt_input_exit`).

`wait` marks the events after which the replay waits for the hooks' worker (those that end something;
never between `PreCompact` and `SessionStart(compact)`: that wait is the product's own to do).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._coding_data import Session, first_timestamp
from ._coding_lines import agent_id, is_boundary, is_interrupt, opens_turn, parse, typed_prompt

__all__ = ["Fire", "Step", "Write", "plan"]

_COMPACTION_AGENT = "agent-acompact-"


@dataclass(frozen=True)
class Write:
    """Append line `number` of `source` to the live transcript (`agent`: a sub-agent's file)."""

    source: Path
    number: int  # 1-based
    raw: str  # without its newline
    agent: str | None = None
    boundary: bool = False  # a compaction's boundary line


@dataclass(frozen=True)
class Fire:
    """Run the hooks of `event` with these event-specific fields (beside the common ones)."""

    event: str
    fields: dict[str, Any] = field(default_factory=dict)
    wait: bool = False  # wait for the hooks' worker afterwards
    record: str | None = None  # what the answered context is, kept by the replay ("compact")


Step = Write | Fire


def _lines(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as f:
        return [raw.rstrip("\n") for raw in f]


def _agent_name(path: Path) -> str:
    return path.stem[len("agent-") :]


def _stop(event: str, **extra: Any) -> Fire:
    return Fire(event, {"stop_hook_active": False, **extra}, wait=True)


def plan(session: Session) -> list[Step]:
    return list(_steps(session))


def _whole(path: Path, agent: str) -> Iterator[Write]:
    for number, raw in enumerate(_lines(path), 1):
        yield Write(path, number, raw, agent)


def _steps(session: Session) -> Iterator[Step]:
    agents = {_agent_name(p): p for p in session.subagents if not p.name.startswith(_COMPACTION_AGENT)}
    compactions = [p for p in session.subagents if p.name.startswith(_COMPACTION_AGENT)]
    compactions.sort(key=lambda p: (first_timestamp(p), p.name))
    yield Fire("SessionStart", {"source": "startup"})
    agent_turn = False  # an agent line since the last Stop
    inline = False  # inside a run of inline sidechain lines
    compacting = False  # a boundary written, its SessionStart(compact) not yet fired
    for number, raw in enumerate(_lines(session.path), 1):
        line = parse(raw)
        if line is None:
            yield Write(session.path, number, raw)
            continue
        sidechain = line.get("isSidechain") is True
        if inline and not sidechain:
            inline = False
            yield _stop("SubagentStop")
        if (
            compacting
            and line.get("type") in ("user", "assistant")
            and line.get("isCompactSummary") is not True
        ):
            compacting = False  # no summary came: the session goes on, compacted
            yield Fire("SessionStart", {"source": "compact"}, record="compact")
        if is_interrupt(line):
            agent_turn = False  # the person cut the turn short: Claude Code fires no Stop for it
        elif opens_turn(line) and agent_turn:
            agent_turn = False
            yield _stop("Stop")
        prompt = typed_prompt(line)
        if prompt is not None:
            yield Fire("UserPromptSubmit", {"prompt": prompt})
        if is_boundary(line):
            metadata = line.get("compactMetadata")
            trigger = metadata.get("trigger") if isinstance(metadata, dict) else None
            trigger = trigger if trigger in ("manual", "auto") else "auto"
            yield Fire("PreCompact", {"trigger": trigger, "custom_instructions": ""})
            if compactions:
                path = compactions.pop(0)
                yield from _whole(path, _agent_name(path))
            compacting = True
        name = agent_id(line)
        if name is not None and name in agents:
            path = agents.pop(name)
            yield from _whole(path, name)
            yield _stop("SubagentStop", agent_id=name)
        yield Write(session.path, number, raw, boundary=is_boundary(line))
        if sidechain:
            inline = True
        elif line.get("type") == "assistant":
            agent_turn = True
        if compacting and line.get("isCompactSummary") is True:
            compacting = False
            yield Fire("SessionStart", {"source": "compact"}, record="compact")
    if inline:
        yield _stop("SubagentStop")
    if compacting:
        yield Fire("SessionStart", {"source": "compact"}, record="compact")
    for name, path in agents.items():  # a sub-agent no line reported: written before the session ends
        yield from _whole(path, name)
        yield _stop("SubagentStop", agent_id=name)
    for path in compactions:
        yield from _whole(path, _agent_name(path))
    yield _stop("Stop")
    yield Fire("SessionEnd", {"reason": "prompt_input_exit"}, wait=True)
