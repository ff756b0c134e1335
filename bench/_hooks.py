"""`dagmem bench hooks`: what each Claude Code hook costs the host, from a fresh process.

A project with one remembered session (a Claude Code transcript of `turns` exchanges, imported and
written; every 25th user turn is a first-person fact, so the session's start has a core block), then each hook run `runs` times as Claude Code runs it (`python -m dagmem hook claude-code
EVENT`, the event's JSON on stdin, `CLAUDE_PROJECT_DIR` set), round-robin with `python -c pass` (the
interpreter alone, the baseline) and `python -c "import numpy"` (the prompt's search's one library) so
that machine noise hits them alike. Wall clock from spawn to exit,
p50 and p95 in ms, with bytecode cached as an installed dagmem has it (`PYTHONDONTWRITEBYTECODE` is not
passed on). A Stop hook's detached worker is waited for (queue empty, lock free, polled with a
bound) before the next process starts, so the worker's import and write never overlap a measurement;
its own run time is reported beside the hooks' (`worker_p50_ms`: from the Stop hook's start to the
worker's end)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ..hooks import state_dir, wait_for_worker
from ..memory.adopt import Importer, SourceClock, import_into_store
from ..memory.store import FileSessionStore
from ..memory.writing import write_home
from . import _kit as kit

__all__ = ["EVENTS", "build", "run"]

EVENTS = ("SessionStart", "UserPromptSubmit", "Stop")
SESSION = "0b5e1c2d-3f4a-4b6c-8d7e-9f0a1b2c3d4e"
_TOPICS = ("deploy", "database", "billing", "search", "frontend", "caching", "logging", "auth")


def build(project: Path, turns: int) -> Path:
    """The project's transcript with `turns` exchanges, imported into `<project>/.dagmem` and written."""
    transcript = project / "transcripts" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    parent: str | None = None
    with transcript.open("w") as f:
        for n in range(turns):
            topic = _TOPICS[n % len(_TOPICS)]
            said = f"Note {n}: the {topic} service uses port {8000 + n} and is owned by team {n % 13}."
            if n % 25 == 0:  # a fact about the person now and then: SessionStart has a core to render
                said = f"I work on the {topic} team and I prefer short answers about {topic}."
            for role, text in (
                ("user", said),
                ("assistant", f"Noted: {topic} on port {8000 + n}, team {n % 13}."),
            ):
                key = f"00000000-0000-4000-8000-{2 * n + (role == 'assistant'):012d}"
                message: dict[str, Any] = {"role": role, "content": text}
                if role == "assistant":
                    message = {"id": f"msg_{n}", "role": role, "model": "claude-x",
                               "content": [{"type": "text", "text": text}]}  # fmt: skip
                line = {"parentUuid": parent, "isSidechain": False, "sessionId": SESSION, "type": role,
                        "uuid": key, "timestamp": f"2025-06-01T10:00:{n % 60:02d}.000Z", "message": message}  # fmt: skip
                f.write(json.dumps(line) + "\n")
                parent = key
    home = project / ".dagmem"
    clock = SourceClock()
    import_into_store(Importer("claude-code", [transcript]), FileSessionStore(home, clock=clock), clock)
    write_home(home, force=True)
    return transcript


def _payload(event: str, project: Path, transcript: Path) -> bytes:
    body: dict[str, Any] = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project),
                            "hook_event_name": event}  # fmt: skip
    if event == "UserPromptSubmit":
        body["prompt"] = "Which port does the billing service use, and which team owns it?"
    if event == "SessionStart":
        body["source"] = "startup"
    return json.dumps(body).encode()


def _wait_idle(home: Path, bound: float = 300.0) -> None:
    if not wait_for_worker(home, bound):
        raise RuntimeError(f"the hooks' worker did not finish within {bound} s")


def _once(args: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, *args], input=stdin, check=True, capture_output=True, env=env, cwd=cwd)
    return (time.perf_counter() - started) * 1000


def run(scratch: Path, runs: int = 7, turns: int = 200) -> dict[str, Any]:
    """p50/p95 in ms of each hook and of `python -c pass`, over `runs` fresh processes each."""
    project = scratch / "hooks-project"
    transcript = build(project, turns)
    home = project / ".dagmem"
    env = kit.fresh_process_env(CLAUDE_PROJECT_DIR=str(project))
    env.pop("DAGMEM_HOME", None)
    env.pop("DAGMEM_MEMORY", None)
    # numpy alone: the floor under a prompt's search (its one library) on this machine
    commands = {"pass": (["-c", "pass"], b""), "numpy": (["-c", "import numpy"], b"")}
    for event in EVENTS:
        commands[event] = (
            ["-m", "dagmem", "hook", "claude-code", event],
            _payload(event, project, transcript),
        )
    samples: dict[str, list[float]] = {name: [] for name in [*commands, "worker"]}
    for args, stdin in commands.values():  # warm the page cache
        _once(args, stdin, env, project)
        _wait_idle(home)
    for _ in range(runs):
        for name, (args, stdin) in commands.items():
            started = time.perf_counter()
            samples[name].append(_once(args, stdin, env, project))
            if name == "Stop":
                _wait_idle(home)
                samples["worker"].append((time.perf_counter() - started) * 1000)
    out: dict[str, Any] = {"runs": runs, "turns": turns}
    for name, values in samples.items():
        ordered = sorted(values)
        out[f"{name}_p50_ms"] = round(kit.quantile(ordered, 0.5), 2)
        out[f"{name}_p95_ms"] = round(kit.quantile(ordered, 0.95), 2)
    log = state_dir(home) / "hooks.log"
    out["log_lines"] = len(log.read_text().splitlines()) if log.exists() else 0
    return out
