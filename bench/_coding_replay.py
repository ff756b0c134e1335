"""`dagmem bench coding`: one project replayed through its installed hooks, then asked its questions.

Each session's transcript grows line by line at a path like Claude Code's
(`<scratch>/claude/projects/<encoded project dir>/<session>.jsonl`, sub-agents in
`<session>/subagents/agent-*.jsonl`), each line's `timestamp` set to the wall-clock time it is written
(so the write thresholds apply as in a live session), every other byte as in the source; the hooks fire
in the order `_coding_plan` gives. After the events that end something the replay waits for the hooks'
worker, as a live session's pace would: a replay at disk speed would otherwise pile up writes no person
could cause.

Then new sessions of the same project: one `SessionStart(startup)`, and for each question a session of
its own whose first prompt is the question, its transcript not written yet (Claude Code creates the
file only after the first prompt).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from ..hooks import state_dir, worker_idle
from ._coding_data import Question, Session
from ._coding_hooks import Answer, Hooks, Timings
from ._coding_lines import with_timestamp
from ._coding_plan import Write, plan

__all__ = ["ProjectRun", "replay_project"]

_ASKING = uuid.UUID("4b1d2c3e-5f60-4718-8a9b-0c1d2e3f4a5b")  # the namespace of the question sessions' ids


@dataclass
class ProjectRun:
    """What one project's replay and questions gave."""

    project: str
    sessions: int = 0
    lines: int = 0
    events: dict[str, int] = field(default_factory=dict)
    # (source file, line) -> (session, sequence number of its write)
    written: dict[tuple[Path, int], tuple[str, int]] = field(default_factory=dict)
    # session -> [(sequence number of its boundary line, the post-compaction SessionStart context)]
    compactions: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    # post-compaction SessionStarts answered while the hooks' worker (PreCompact's write) was still busy
    compactions_busy: int = 0
    start_contexts: list[str] = field(default_factory=list)  # every SessionStart's, in order
    start: str = ""  # SessionStart alone, in a new session after the replay
    answers: dict[str, str] = field(default_factory=dict)  # question id -> its UserPromptSubmit context
    problems: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # <home>/hooks/hooks.log after the run
    home: Path | None = None


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"  # Claude Code's form


class _Live:
    """The transcripts as Claude Code writes them, growing a line at a time."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files: dict[Path, IO[str]] = {}
        self.sequence = 0

    def path(self, session: str, agent: str | None = None) -> Path:
        main = self.folder / f"{session}.jsonl"
        return main if agent is None else self.folder / session / "subagents" / f"agent-{agent}.jsonl"

    def write(self, session: str, step: Write) -> int:
        path = self.path(session, step.agent)
        f = self.files.get(path)
        if f is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            f = self.files[path] = path.open("a", encoding="utf-8")
        f.write(with_timestamp(step.raw, _now()) + "\n")
        f.flush()  # a hook reads the file from another process right after
        self.sequence += 1
        return self.sequence

    def close(self) -> None:
        for f in self.files.values():
            f.close()
        self.files.clear()


def _encoded(project: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(project))  # how Claude Code names a project's folder


class _Replay:
    def __init__(self, run: ProjectRun, hooks: Hooks, live: _Live, project: Path) -> None:
        self.run, self.hooks, self.live, self.project = run, hooks, live, project

    def fire(self, session: str, event: str, fields: dict[str, Any], transcript: Path) -> Answer:
        payload: dict[str, Any] = {
            "session_id": session,
            "transcript_path": str(transcript),
            "cwd": str(self.project),
            "hook_event_name": event,
            "permission_mode": "default",
            **fields,
        }
        if isinstance(fields.get("agent_id"), str):
            payload["agent_transcript_path"] = str(self.live.path(session, fields["agent_id"]))
        answer = self.hooks.run(event, payload)
        self.run.events[event] = self.run.events.get(event, 0) + 1
        self.run.problems.extend(answer.problems)
        if event == "SessionStart":
            self.run.start_contexts.append(answer.context)
        return answer

    def session(self, session: Session) -> None:
        sid = session.id
        transcript = self.live.path(sid)
        boundary = 0
        for step in plan(session):
            if isinstance(step, Write):
                number = self.live.write(sid, step)
                self.run.written[(step.source.resolve(), step.number)] = (sid, number)
                self.run.lines += 1
                if step.boundary:
                    boundary = number
                continue
            answer = self.fire(sid, step.event, step.fields, transcript)
            if step.record == "compact":
                self.run.compactions.setdefault(sid, []).append((boundary, answer.context))
                # The start's context could hold what PreCompact handed over only once it is written.
                self.run.compactions_busy += not worker_idle(self.hooks.home)
            if step.wait:
                problem = self.hooks.wait_for_worker()
                if problem is not None:
                    self.run.problems.append(f"after {step.event}: {problem}")
        self.run.sessions += 1

    def ask(self, questions: Sequence[Question], name: str) -> None:
        """A new session's start, then each question as the first prompt of a session of its own."""
        starting = str(uuid.uuid5(_ASKING, f"{name}/start"))
        self.run.start = self.fire(
            starting, "SessionStart", {"source": "startup"}, self.live.path(starting)
        ).context
        for question in questions:
            sid = str(uuid.uuid5(_ASKING, f"{name}/{question.id}"))
            answer = self.fire(sid, "UserPromptSubmit", {"prompt": question.question}, self.live.path(sid))
            self.run.answers[question.id] = answer.context


def replay_project(
    name: str,
    sessions: Sequence[Session],
    questions: Sequence[Question],
    scratch: Path,
    *,
    timings: Timings,
    progress: Callable[[str], None],
) -> ProjectRun:
    """Install the hooks in a fresh project, replay `sessions` through them, then ask `questions`."""
    base = scratch / re.sub(r"[^A-Za-z0-9]+", "-", name)
    project, user_home = base / "project", base / "home"
    project.mkdir(parents=True)
    user_home.mkdir()
    hooks = Hooks(project, project / ".dagmem", user_home, timings)
    run = ProjectRun(name, home=project / ".dagmem")
    live = _Live(base / "claude" / "projects" / _encoded(project))
    replay = _Replay(run, hooks, live, project)
    try:
        for number, session in enumerate(sessions, 1):
            progress(f"{name}: session {number}/{len(sessions)} ({session.id[:8]}), replaying")
            replay.session(session)
    finally:
        live.close()
    progress(f"{name}: {len(questions)} questions")
    replay.ask(questions, name)
    run.log = _log_lines(project / ".dagmem")
    return run


def _log_lines(home: Path) -> list[str]:
    folder = state_dir(home)
    lines: list[str] = []
    for path in (folder / "hooks.log.1", folder / "hooks.log"):  # the rotated one is older
        if path.is_file():
            lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    return lines
