"""Claude Code's hooks end to end: a real-format transcript replayed through `dagmem hook claude-code`
exactly as the host calls it (a fresh process per event, its JSON on stdin, the transcript growing between
calls, a sub-agent's file appearing, a compaction, an edited prompt), with the real detached worker."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from dagmem import FileSessionStore
from dagmem.hooks import wait_for_worker
from dagmem.memory.recall._render import SIBLING_LABEL
from dagmem.tests._cli import dagmem_run
from dagmem.tests.hooks._claude import SESSION, WORKER_BOUND, Transcript, context_of, hook

ARGS = ("--threshold", "20")  # small batches, so turns are written while the session goes on


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _memory_and_sessions(home: Path) -> dict[str, bytes]:
    return {
        k: v
        for k, v in _files(home).items()
        if k.startswith(("sessions/", "memory/sources/", "memory/topics/"))
    }


def replay(project: Path, t: Transcript) -> dict[str, str]:
    """One conversation, event by event; returns what the context hooks injected."""
    home = project / ".dagmem"
    seen: dict[str, str] = {}
    seen["start"] = context_of(
        hook("SessionStart", t.payload("SessionStart", source="startup"), project=project), "SessionStart"
    )

    def turn(parent: str | None, prompt: str, reply: str, name: str) -> tuple[str, str]:
        answer = hook(
            "UserPromptSubmit", t.payload("UserPromptSubmit", prompt=prompt), project=project, args=ARGS
        )
        seen[name] = context_of(answer, "UserPromptSubmit")
        u = t.user(parent, prompt)
        a = t.assistant(u, reply)
        stop = hook("Stop", t.payload("Stop", stop_hook_active=False), project=project, args=ARGS)
        assert stop.returncode == 0, stop.stderr
        assert stop.stdout == b""
        assert wait_for_worker(home, WORKER_BOUND)
        return u, a

    _, a1 = turn(
        None,
        "The staging server is called nimbus-seven and it listens on port 8443.",
        "Noted: nimbus-seven, port 8443.",
        "t1",
    )
    _, a2 = turn(
        a1,
        "My favourite colour for the dashboard theme is teal, remember that.",
        "Teal it is for the dashboard theme.",
        "t2",
    )
    # An edited prompt: the user went back to a1 and asked something else; the teal turn is now a sibling.
    _, a3 = turn(a1, "Which port does the staging server nimbus-seven listen on?", "Port 8443.", "t3")
    _, a4 = turn(a3, "What colour did I pick for the dashboard theme?", "I do not know yet.", "t4")
    # A sub-agent's file appears, and its SubagentStop arrives.
    t.subagent("b7f3", "Sub-agent: count the modules of the repository.", "The repository has seven modules.")
    assert (
        hook(
            "SubagentStop", t.payload("SubagentStop", stop_hook_active=False), project=project, args=ARGS
        ).stdout
        == b""
    )
    assert wait_for_worker(home, WORKER_BOUND)
    # A compaction: PreCompact first, then the boundary and the summary lines it writes.
    assert (
        hook(
            "PreCompact",
            t.payload("PreCompact", trigger="auto", custom_instructions=""),
            project=project,
            args=ARGS,
        ).stdout
        == b""
    )
    assert wait_for_worker(home, WORKER_BOUND)
    summary = t.compaction(a4, "Summary: the staging server and its port were discussed.")
    turn(summary, "Thanks, that is all for today about nimbus-seven deployments.", "Glad to help.", "t5")
    assert (
        hook(
            "SessionEnd", t.payload("SessionEnd", reason="prompt_input_exit"), project=project, args=ARGS
        ).stdout
        == b""
    )
    assert wait_for_worker(home, WORKER_BOUND)
    seen["a2"], seen["a3"] = a2, a3
    return seen


def test_a_replayed_session_grows_memory_injects_it_branch_aware_and_a_second_replay_adds_nothing(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    t = Transcript(project / "transcripts" / "7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6.jsonl")
    home = project / ".dagmem"

    seen = replay(project, t)

    assert seen["start"] == ""
    assert seen["t1"] == ""
    assert "nimbus-seven" in seen["t3"]
    assert "8443" in seen["t3"]
    teal = [line for line in seen["t4"].splitlines() if "teal" in line.lower()]
    assert teal, seen["t4"]  # said on the branch the edit left: recalled, but not as the reader's own
    assert all(SIBLING_LABEL in line for line in teal if line.startswith("- ")), seen["t4"]
    store = FileSessionStore(home)
    nodes = store.load(t.session).nodes
    assert {n.content for n in nodes.values() if n.metadata.get("spawned")} >= {
        "The repository has seven modules."
    }
    assert store.head(t.session) != seen["a2"]  # the head follows the edit
    status = json.loads(dagmem_run("status", "--json", "--home", str(home)).stdout)
    assert status["last_outcome"] == "success"
    assert status["pending_turns"] == 0
    verified = dagmem_run("verify", "--strict", "--json", "--home", str(home))
    assert verified.returncode == 0, verified.stdout
    assert json.loads(verified.stdout)["ok"]
    # A new session starts without the teal fact in its core: it was said on the branch the edit left
    # (no longer current for anyone else); a prompt of it gets what the kept branch said.
    start = context_of(
        hook("SessionStart", {**t.payload("SessionStart"), "session_id": "another"}, project=project),
        "SessionStart",
    )
    assert "teal" not in start.lower()
    other = {
        **t.payload("UserPromptSubmit", prompt="Which port does nimbus-seven use?"),
        "session_id": "another",
    }
    asked = context_of(hook("UserPromptSubmit", other, project=project, args=ARGS), "UserPromptSubmit")
    assert asked.startswith("<memory-context>")
    assert "8443" in asked
    before = _memory_and_sessions(home)

    # The same conversation replayed (a second import of every line): nothing is added anywhere.
    for event in ("Stop", "SubagentStop", "PreCompact", "SessionEnd"):
        assert hook(event, t.payload(event), project=project, args=ARGS).returncode == 0
        assert wait_for_worker(home, WORKER_BOUND)
    assert _memory_and_sessions(home) == before
    assert not (home / "hooks" / "hooks.log").exists(), (home / "hooks" / "hooks.log").read_text()


def test_a_new_sessions_first_prompt_gets_memory_before_its_transcript_exists(tmp_path: Path) -> None:
    """Claude Code names a new session's transcript before it writes it (the file, even its directory,
    appears after the first prompt): that prompt still gets what earlier sessions remembered, and it is
    no error (nothing logged)."""
    home = tmp_path / ".dagmem"
    earlier = Transcript(tmp_path / "projects" / "earlier.jsonl")
    said = earlier.user(None, "My daughter Lina is allergic to peanuts.")
    earlier.assistant(said, "Noted: no peanuts for Lina.")
    assert hook("SessionEnd", earlier.payload("SessionEnd"), project=tmp_path).returncode == 0
    assert wait_for_worker(home, WORKER_BOUND)
    new = {
        "session_id": "0f0e0d0c-0b0a-4909-8807-060504030201",
        "transcript_path": str(tmp_path / "not-yet" / "0f0e0d0c-0b0a-4909-8807-060504030201.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Which snacks are safe for Lina?",
    }
    context = context_of(hook("UserPromptSubmit", new, project=tmp_path), "UserPromptSubmit")
    assert "allergic to peanuts" in context
    assert not (home / "hooks" / "hooks.log").exists()
    # A FIFO or a directory is still no transcript: refused, logged, nothing printed.
    new["transcript_path"] = str(tmp_path)
    refused = hook("UserPromptSubmit", new, project=tmp_path)
    assert refused.returncode == 0
    assert refused.stdout == b""
    assert "not a regular file" in (home / "hooks" / "hooks.log").read_text()


# Modules a project may well have of its own, each a standard library's name; importing one is fatal here.
SHADOWS = ("queue", "types", "logging", "json", "subprocess", "tempfile", "sqlite3", "select", "signal")


def test_hooks_installed_in_a_project_that_shadows_the_standard_library_still_write_memory(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in SHADOWS:
        (project / f"{name}.py").write_text(
            f"raise SystemExit('the project\\'s own {name}.py was imported')\n"
        )
    installed = dagmem_run("install", "claude-code", "--project", str(project))
    assert installed.returncode == 0, installed.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())

    def run(event: str, payload: dict[str, object]) -> subprocess.CompletedProcess[bytes]:
        """The installed command, as Claude Code runs it: through a shell, in the project's directory."""
        (entry,) = [h for g in settings["hooks"][event] for h in g["hooks"]]
        env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project)}
        return subprocess.run(
            entry["command"], shell=True, cwd=project, env=env, input=json.dumps(payload).encode(),
            capture_output=True, check=False, timeout=120,
        )  # fmt: skip

    t = Transcript(project / "transcripts" / "5e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b.jsonl")
    u = t.user(None, "The release branch is cut every Thursday at noon.")
    t.assistant(u, "Noted: release branches every Thursday at noon.")
    for event in ("Stop", "SessionEnd"):
        result = run(event, t.payload(event))
        assert result.returncode == 0, result.stderr
        assert wait_for_worker(project / ".dagmem", WORKER_BOUND)
    log = project / ".dagmem" / "hooks" / "hooks.log"
    assert not log.exists(), log.read_text()
    asked = run("UserPromptSubmit", {**t.payload("UserPromptSubmit"), "prompt": "When is the release cut?"})
    assert "Thursday" in context_of(asked, "UserPromptSubmit")


def test_a_hook_installed_without_isolation_still_keeps_the_project_off_its_path(tmp_path: Path) -> None:
    """Hooks installed by an earlier dagmem run `python -m dagmem` without `-P`: `__main__` drops the
    working directory `-m` put first on `sys.path`, and the worker it starts runs isolated."""
    project = tmp_path / "project"
    project.mkdir()
    for name in SHADOWS:
        (project / f"{name}.py").write_text("raise SystemExit('shadowed')\n")
    t = Transcript(project / "transcripts" / "6e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b.jsonl")
    u = t.user(None, "Our staging database is called heron-db.")
    t.assistant(u, "Noted: heron-db.")
    result = hook("SessionEnd", t.payload("SessionEnd"), project=project)  # `python -m dagmem`, no -P
    assert result.returncode == 0, result.stderr
    assert wait_for_worker(project / ".dagmem", WORKER_BOUND)
    assert not (project / ".dagmem" / "hooks" / "hooks.log").exists()
    assert "heron-db" in "".join(
        p.read_text() for p in (project / ".dagmem" / "memory" / "topics").glob("*.md")
    )


def test_a_resumed_copy_of_a_forgotten_transcript_never_brings_its_text_back(tmp_path: Path) -> None:
    """Forgotten stays forgotten: the host resumes (or forks) a session as a new transcript holding the
    same lines under a new session id; the next `Stop` imports it, and the turn whose text `dagmem forget`
    removed is stored as a tombstone (the log says so): no copy under the home, none in either hook's
    context, and `verify --forgotten` passes."""
    secret = "hunter2-s3cr3t-db-password"
    project = tmp_path / "project"
    home = project / ".dagmem"
    t = Transcript(project / "transcripts" / f"{SESSION}.jsonl")
    asked = t.user(None, "Which database do we use for the billing service?")
    said = t.assistant(asked, "Postgres 16 for the billing service, on the db host.")
    pasted = t.user(said, f"The billing db password is {secret} by the way.")
    t.assistant(pasted, "Thanks, noted for the billing service.")
    assert hook("Stop", t.payload("Stop"), project=project, args=ARGS).returncode == 0
    assert wait_for_worker(home, WORKER_BOUND)
    forgot = dagmem_run("forget", "--home", str(home), "--match", secret, "--yes")
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr

    other = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    resumed = Transcript(project / "transcripts" / f"{other}.jsonl", session=other)
    lines = [json.loads(line) for line in t.path.read_text().splitlines()]
    resumed.path.write_text("".join(json.dumps({**line, "sessionId": other}) + "\n" for line in lines))
    assert hook("Stop", resumed.payload("Stop"), project=project, args=ARGS).returncode == 0
    assert wait_for_worker(home, WORKER_BOUND)

    assert FileSessionStore(home).has_session(other)  # the copy was imported, but not the secret
    assert [str(p) for p in home.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()] == []
    assert dagmem_run("verify", "--forgotten", "--home", str(home)).returncode == 0
    assert "forgotten" in (home / "hooks" / "hooks.log").read_text()
    prompt = {**resumed.payload("UserPromptSubmit", prompt="What is the billing db password?")}
    asked_again = context_of(hook("UserPromptSubmit", prompt, project=project, args=ARGS), "UserPromptSubmit")
    start = context_of(hook("SessionStart", resumed.payload("SessionStart"), project=project), "SessionStart")
    assert secret not in asked_again
    assert secret not in start
