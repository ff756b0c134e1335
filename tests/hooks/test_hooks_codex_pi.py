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
from dagmem.hooks import wait_for_worker
from dagmem.tests.hooks._claude import WORKER_BOUND

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
    assert wait_for_worker(home, WORKER_BOUND)
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
    assert wait_for_worker(project / ".dagmem", WORKER_BOUND)
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


PI_SESSION = "4f1c2e3d-5a6b-4c7d-8e9f-0a1b2c3d4e5f"


def _pi_entry(key: str, parent: str | None, n: int, role: str, text: str) -> dict[str, Any]:
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    return {"type": "message", "id": key, "parentId": parent, "timestamp": f"2025-06-01T10:00:{n:02d}.000Z",
            "message": {"role": role, "content": content}}  # fmt: skip


def test_pi_prompts_are_answered_on_the_branch_pi_last_wrote(tmp_path: Path) -> None:
    """pi's payload names no session: the session is its file's header's (not the file's name), and the
    reader's tip is where the file ends (its last entry, or that entry's nearest stored ancestor)."""
    from dagmem.memory.recall._render import SIBLING_LABEL

    project = tmp_path / "project"
    session = project / "sessions" / "current.jsonl"  # a name that is no session id
    session.parent.mkdir(parents=True)
    entries = [
        {"type": "session", "version": 3, "id": PI_SESSION, "timestamp": "2025-06-01T10:00:00.000Z", "cwd": str(project)},
        _pi_entry("b1", None, 1, "user", "The staging server is called nimbus-seven."),
        _pi_entry("b2", "b1", 2, "assistant", "Noted: nimbus-seven."),
        _pi_entry("b3", "b2", 3, "user", "My favourite colour for the dashboard theme is teal, remember that."),
        _pi_entry("b4", "b3", 4, "assistant", "Teal it is for the dashboard theme."),
        # Back in pi's tree to b2, and on from there: the teal turns are now another branch.
        {"type": "branch_summary", "id": "b5", "parentId": "b2", "timestamp": "2025-06-01T10:00:05.000Z",
         "fromId": "b4", "summary": "talked about the theme"},
        _pi_entry("b6", "b5", 6, "user", "Which port does nimbus-seven listen on? It is 8443."),
        _pi_entry("b7", "b6", 7, "assistant", "Port 8443."),
    ]  # fmt: skip
    session.write_text("".join(json.dumps(e) + "\n" for e in entries))
    payload = {"transcript_path": str(session), "cwd": str(project)}
    assert _run(["pi", "SessionEnd"], project, json.dumps(payload).encode()).returncode == 0
    assert wait_for_worker(project / ".dagmem", WORKER_BOUND)
    ask = {**payload, "prompt": "What colour did I pick for the dashboard theme?"}

    def teal_lines() -> list[str]:
        asked = _run(["pi", "UserPromptSubmit"], project, json.dumps(ask).encode())
        assert asked.returncode == 0
        found = [
            line for line in asked.stdout.decode().splitlines() if line.startswith("- ") and "teal" in line
        ]
        assert found, asked.stdout.decode()
        return found

    assert all(SIBLING_LABEL in line for line in teal_lines())  # on b7's branch: the teal turns are left
    # pi moves back to b4 with a summary: an entry memory does not hold yet, whose parent it does.
    back = {"type": "branch_summary", "id": "b8", "parentId": "b4", "timestamp": "2025-06-01T10:00:08.000Z",
            "fromId": "b7", "summary": "back to the theme"}  # fmt: skip
    with session.open("a") as file:
        file.write(json.dumps(back) + "\n")
    assert not any(SIBLING_LABEL in line for line in teal_lines())  # on b4's branch: the reader's own


def test_pi_s_position_is_the_last_entry_and_its_ancestors_in_the_file_s_end() -> None:
    from dagmem.hooks._pi import position

    tail = b'"parentId": "x"}\n' + b"".join(  # the end starts in a line's middle: that line is skipped
        json.dumps(e).encode() + b"\n"
        for e in (
            {"type": "message", "id": "e1", "parentId": "e0"},
            {"type": "message", "id": "e2", "parentId": "e1"},
            {"type": "message", "id": "f1", "parentId": "e1"},  # a fork at e1
            {"type": "model_change", "id": "f2", "parentId": "f1"},
        )
    )
    assert position(tail) == ["f2", "f1", "e1", "e0"]  # e0 is not in the end, but named as e1's parent
    linear = b'{"type": "message", "message": {"role": "user", "content": "hi"}}\n'
    assert position(linear) == []  # a version-1 file has no ids: the session's head is the tip
    looped = (
        b'{"type": "message", "id": "a", "parentId": "b"}\n{"type": "message", "id": "b", "parentId": "a"}\n'
    )
    assert position(looped) == ["b", "a"]


def test_pi_s_session_is_its_header_s_else_the_file_s_name(tmp_path: Path) -> None:
    from dagmem.hooks._pi import session_of

    named = tmp_path / f"2025-06-01T10-00-00-000Z_{PI_SESSION}.jsonl"
    named.write_text('{"type": "session", "version": 3, "id": "pi-s1"}\n')
    assert session_of(str(named)) == "pi-s1"
    named.write_text('{"type": "message", "id": "a1", "parentId": null}\n')  # no header
    assert session_of(str(named)) == PI_SESSION
    assert session_of(None) is None
