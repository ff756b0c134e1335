"""Codex's notify program and pi's extension, as their hosts call them: Codex runs `dagmem hook codex
notify JSON` when a turn completes (its rollout is found by thread id and imported); pi's extension runs
`dagmem hook pi EVENT` with its session file (context back as plain text, turns imported)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from dagmem import FileSessionStore
from dagmem.tests.hooks._claude import wait_for_worker

THREAD = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"


def _run(
    args: list[str], project: Path, stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    environ = {
        k: v for k, v in os.environ.items() if k not in ("DAGMEM_HOME", "DAGMEM_MEMORY", "CLAUDE_PROJECT_DIR")
    }
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "dagmem", "hook", *args], input=stdin, capture_output=True,
                          cwd=project, env=environ, timeout=120, check=False)  # fmt: skip


def _codex_rollout(codex_home: Path, turns: list[tuple[str, str]]) -> Path:
    day = codex_home / "sessions" / "2025" / "06" / "01"
    day.mkdir(parents=True)
    lines: list[dict[str, Any]] = [{"timestamp": "2025-06-01T10:00:00.000Z", "type": "session_meta",
                                    "payload": {"id": THREAD, "cwd": "/p", "cli_version": "0.46.0"}}]  # fmt: skip
    for n, (role, text) in enumerate(turns, 1):
        kind = "input_text" if role == "user" else "output_text"
        lines.append({"timestamp": f"2025-06-01T10:00:{n:02d}.000Z", "type": "response_item",
                      "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}})  # fmt: skip
    path = day / f"rollout-2025-06-01T10-00-00-{THREAD}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_codex_notify_imports_the_thread_s_rollout_and_writes_it(tmp_path: Path) -> None:
    project, codex = tmp_path / "project", tmp_path / "codex"
    project.mkdir()
    _codex_rollout(
        codex, [("user", "The invoices are exported every Friday at noon."), ("assistant", "Friday noon.")]
    )
    notification = {"type": "agent-turn-complete", "thread-id": THREAD, "turn-id": "1", "cwd": str(project),
                    "input-messages": ["The invoices are exported every Friday at noon."],
                    "last-assistant-message": "Friday noon."}  # fmt: skip
    done = _run(
        ["codex", "notify", "--threshold", "5", json.dumps(notification)],
        project,
        env={"CODEX_HOME": str(codex)},
    )
    assert done.returncode == 0
    assert done.stdout == b""
    home = project / ".dagmem"  # the notification's cwd names the project
    wait_for_worker(home)
    assert "Friday at noon" in (home / "memory" / "sources" / f"{THREAD}.md").read_text()
    other = _run(
        ["codex", "notify", json.dumps({"type": "approval-requested"})],
        project,
        env={"CODEX_HOME": str(codex)},
    )
    assert other.returncode == 0
    assert other.stdout == b""
    missing = _run(["codex", "notify", json.dumps({**notification, "thread-id": "nope"})], project,
                   env={"CODEX_HOME": str(codex)})  # fmt: skip
    assert missing.returncode == 0
    assert "no rollout file" in (home / "hooks" / "hooks.log").read_text()


def test_pi_extension_events_import_the_session_and_give_context_as_text(tmp_path: Path) -> None:
    project = tmp_path / "project"
    session = project / "sessions" / "2025-06-01T10-00-00-000Z_4f1c2e3d-5a6b-4c7d-8e9f-0a1b2c3d4e5f.jsonl"
    session.parent.mkdir(parents=True)
    entries = [
        {"type": "session", "version": 3, "id": "4f1c2e3d-5a6b-4c7d-8e9f-0a1b2c3d4e5f", "timestamp": "2025-06-01T10:00:00.000Z", "cwd": str(project)},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2025-06-01T10:00:01.000Z",
         "message": {"role": "user", "content": "The nightly backup goes to the bucket called coldvault."}},
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2025-06-01T10:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Backups to coldvault, noted."}]}},
    ]  # fmt: skip
    session.write_text("".join(json.dumps(e) + "\n" for e in entries))
    payload = {"transcript_path": str(session), "cwd": str(project)}
    end = _run(["pi", "SessionEnd"], project, json.dumps(payload).encode())
    assert end.returncode == 0
    assert end.stdout == b""
    wait_for_worker(project / ".dagmem")
    assert FileSessionStore(project / ".dagmem").has_session("4f1c2e3d-5a6b-4c7d-8e9f-0a1b2c3d4e5f")
    asked = _run(
        ["pi", "UserPromptSubmit"],
        project,
        json.dumps({**payload, "prompt": "Where does the nightly backup go?"}).encode(),
    )
    assert asked.returncode == 0
    text = asked.stdout.decode()
    assert text.startswith("<memory-context>")  # plain text: the extension appends it to the system prompt
    assert "coldvault" in text
