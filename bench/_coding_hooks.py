"""`dagmem bench coding`: the hooks as Claude Code runs them (https://code.claude.com/docs/en/hooks).

`dagmem install claude-code --project DIR` is run as a person runs it, and the commands it wrote to
`DIR/.claude/settings.json` are what is run: each through a shell (`shell=True`), in the project's
directory, with `CLAUDE_PROJECT_DIR` set and `HOME` a directory of the run's own, the event's JSON on
stdin, within the entry's `timeout`. An answer is read as Claude Code reads it: for `SessionStart` and
`UserPromptSubmit`, `hookSpecificOutput.additionalContext` of the JSON on stdout (plain text would be
added as it is, and is counted as a problem: it is not the documented shape).

Each command is timed from spawn to exit, and after each one `python -c pass` is run through the same
shell: the baseline, interleaved so that the shared machine's noise hits both alike.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..hooks import wait_for_worker
from . import _kit as kit

__all__ = ["Answer", "Hooks", "Timings", "install"]

_CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")
# The payload field a group's `matcher` is matched against, for the events that have one.
_MATCHED = {"SessionStart": "source", "PreCompact": "trigger", "SessionEnd": "reason"}
_BASELINE = f"{shlex.quote(sys.executable)} -c pass"
WORKER_BOUND = 1800.0  # seconds a worker may take before the replay gives up waiting (and says so)


@dataclass
class Timings:
    """Wall times in ms: each event's hook runs, `python -c pass` beside them, and the worker's waits."""

    hooks: dict[str, list[float]] = field(default_factory=dict)
    baseline: list[float] = field(default_factory=list)
    worker: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Answer:
    context: str  # "" when the hook added none
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Command:
    command: str
    timeout: float
    matcher: str | None


def install(project: Path, env: dict[str, str]) -> dict[str, list[_Command]]:
    """Run `dagmem install claude-code --project DIR` and read back the hook commands it wrote."""
    done = subprocess.run(
        [sys.executable, "-m", "dagmem", "install", "claude-code", "--project", str(project)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"dagmem install claude-code failed ({done.returncode}): {done.stderr.strip()[-500:]}"
        )
    settings = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))
    out: dict[str, list[_Command]] = {}
    for event, groups in (settings.get("hooks") or {}).items():
        for group in groups:
            for entry in group.get("hooks", []):
                if entry.get("type") == "command":
                    out.setdefault(event, []).append(
                        _Command(str(entry["command"]), float(entry.get("timeout", 60)), group.get("matcher"))
                    )
    return out


def _matches(matcher: str | None, event: str, payload: dict[str, Any]) -> bool:
    if not matcher or matcher == "*" or event not in _MATCHED:
        return True
    return re.fullmatch(matcher, str(payload.get(_MATCHED[event], ""))) is not None


class Hooks:
    """One project's installed hooks, run as Claude Code runs them."""

    def __init__(self, project: Path, home: Path, user_home: Path, timings: Timings) -> None:
        self.project = project
        self.home = home  # the project's dagmem home (where the hooks keep memory)
        self.timings = timings
        env = kit.fresh_process_env(CLAUDE_PROJECT_DIR=str(project), HOME=str(user_home))
        for name in ("DAGMEM_HOME", "DAGMEM_MEMORY"):  # the project's own home, memory on
            env.pop(name, None)
        self.env = env
        self.commands = install(project, env)

    def run(
        self,
        event: str,
        payload: dict[str, Any],
        *,
        env: dict[str, str] | None = None,
        timed: str | None = None,
    ) -> Answer:
        """The event's hooks; `env`, variables set for this run only; `timed`, the name its wall time is
        kept under (default: the event's)."""
        contexts: list[str] = []
        problems: list[str] = []
        data = json.dumps(payload).encode()
        for command in self.commands.get(event, []):
            if not _matches(command.matcher, event, payload):
                continue
            code, out, err, ms = self._spawn(command.command, data, command.timeout, env)
            self.timings.hooks.setdefault(timed or event, []).append(ms)
            self.timings.baseline.append(self._spawn(_BASELINE, b"", 60.0)[3])
            if code is None:
                problems.append(f"{event}: timed out after {command.timeout:g} s")
                continue
            if code != 0:
                problems.append(
                    f"{event}: exit {code}: {' '.join(err.decode(errors='replace').split())[:300]}"
                )
            context, problem = _read_answer(event, out)
            if problem is not None:
                problems.append(problem)
            if context:
                contexts.append(context)
        return Answer("\n".join(contexts), tuple(problems))

    def _spawn(
        self, command: str, data: bytes, timeout: float, env: dict[str, str] | None = None
    ) -> tuple[int | None, bytes, bytes, float]:
        """(exit status or None on a timeout, stdout, stderr, ms from spawn to exit)."""
        started = time.perf_counter()
        child = subprocess.Popen(
            command,
            shell=True,
            cwd=self.project,
            env=self.env if env is None else {**self.env, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own group: a timeout ends the shell and what it started
        )
        try:
            out, err = child.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            out, err = child.communicate()
            return None, out, err, (time.perf_counter() - started) * 1000
        return child.returncode, out, err, (time.perf_counter() - started) * 1000

    def wait_for_worker(self) -> str | None:
        """Until the hooks' worker is idle (polled, bounded); a problem when it never was."""
        started = time.perf_counter()
        idle = wait_for_worker(self.home, WORKER_BOUND)
        self.timings.worker.append((time.perf_counter() - started) * 1000)
        return None if idle else f"the hooks' worker was still busy after {WORKER_BOUND:g} s"


def _read_answer(event: str, stdout: bytes) -> tuple[str, str | None]:
    """(the context Claude Code would add, a problem with the answer's shape or None)."""
    text = stdout.decode("utf-8", "replace").strip()
    if not text:
        return "", None
    if event not in _CONTEXT_EVENTS:
        return "", f"{event}: printed on stdout ({text[:80]!r})"
    try:
        answer = json.loads(text)
        specific = answer["hookSpecificOutput"]
        if specific["hookEventName"] != event:
            return "", f"{event}: answered as {specific['hookEventName']!r}"
        return str(specific.get("additionalContext") or ""), None
    except (ValueError, KeyError, TypeError):
        return text, f"{event}: stdout is not the documented JSON ({text[:80]!r})"
