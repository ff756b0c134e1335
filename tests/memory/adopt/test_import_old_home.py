"""Importing again into a home an older importer wrote (the same transcript, the same node ids): the rows that
importer stored are kept as they are and no problem is reported, so the home reads and owes exactly what it
did. The older importer kept each tool call and result as a plain `tool` row, an assistant's words beside
its calls as part of such a row, a slash command as a `system` row and a user line with the host's blocks
whole; this one reads those lines otherwise (tool evidence, an assistant record, the person's words). A
line the transcript gained since is read the new way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dagmem import FileSessionStore
from dagmem.memory.adopt import Importer, SourceClock
from dagmem.memory.durable import read_workspace_id
from dagmem.sim import check_home
from dagmem.tests.memory.adopt.test_import import (
    SESSION,
    Claude,
    nodes_of,
    run_import,
    snapshot_files,
    write_and_verify,
    write_jsonl,
)


def transcript(c: Claude) -> dict[str, str]:
    k: dict[str, str] = {}
    k["u1"] = c.user(
        None, "<system-reminder>\nThe date is 2026-02-11.\n</system-reminder>\nRun the tests please."
    )
    call = {"type": "tool_use", "id": "toolu_01A", "name": "Bash", "input": {"command": "mix test 2>&1"}}
    k["a1"] = c.assistant(k["u1"], "msg_01A", [{"type": "text", "text": "Running them."}, call])
    result = {
        "tool_use_id": "toolu_01A",
        "type": "tool_result",
        "content": "19 tests, 0 failures",
        "is_error": False,
    }
    structured = {"stdout": "19 tests, 0 failures", "stderr": "", "interrupted": False, "isImage": False}
    k["r1"] = c.user(k["a1"], [result], toolUseResult=structured)
    k["a2"] = c.text(k["r1"], "msg_01B", "All 19 tests pass.")
    k["cmd"] = c.user(
        k["a2"],
        "<command-message>orchestrator is running…</command-message>\n<command-name>/orchestrator</command-name>\n"
        "<command-args>update CLAUDE.md</command-args>",
    )
    k["bin"] = c.user(k["cmd"], "<bash-input>git status</bash-input>")
    k["bout"] = c.user(
        k["bin"], "<bash-stdout>On branch main\nnothing to commit</bash-stdout><bash-stderr></bash-stderr>"
    )
    k["side"] = c.user(None, "Sub-agent: list the modules.", isSidechain=True)
    k["a3"] = c.text(k["bout"], "msg_01C", "Updated CLAUDE.md.")
    return k


# What the importer before tool evidence stored for those lines (its output, verbatim): (role, text, origin).
OLD: dict[str, tuple[str, str, str | None]] = {
    "u1": (
        "user",
        "<system-reminder>\nThe date is 2026-02-11.\n</system-reminder>\nRun the tests please.",
        None,
    ),
    "a1": ("tool", 'Running them.\n\n[tool_use Bash] {"command": "mix test 2>&1"}', None),
    "r1": ("tool", "[tool_result] 19 tests, 0 failures", None),
    "a2": ("assistant", "All 19 tests pass.", None),
    "cmd": (
        "system",
        "<command-message>orchestrator is running…</command-message>\n<command-name>/orchestrator</command-name>\n"
        "<command-args>update CLAUDE.md</command-args>",
        None,
    ),
    "bin": ("tool", "<bash-input>git status</bash-input>", None),
    "bout": (
        "tool",
        "<bash-stdout>On branch main\nnothing to commit</bash-stdout><bash-stderr></bash-stderr>",
        None,
    ),
    "side": ("user", "Sub-agent: list the modules.", "imported"),
    "a3": ("assistant", "Updated CLAUDE.md.", None),
}


def old_home(home: Path, path: Path, keys: dict[str, str]) -> None:
    """The home the older importer wrote: its rows at the transcript's ids, appended in its order, written."""
    name = {node: key for key, node in keys.items()}
    clock = SourceClock()
    store = FileSessionStore(home, clock=clock)
    for planned in Importer("claude-code", [path]).poll(final=True):
        role, text, origin = OLD[name[planned.node_id]]
        clock.now = planned.time
        store.append(
            SESSION,
            role,
            text,
            predecessor=planned.predecessor,
            node_id=planned.node_id,
            metadata={"source": planned.metadata["source"]},
            spawned=planned.spawned,
            origin=origin,
        )
    write_and_verify(home)


def owed(home: Path) -> Any:
    workspace = read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")
    return check_home(FileSessionStore(home), home / "memory", workspace, drained=True)


def test_an_old_home_keeps_its_rows_reports_nothing_and_owes_what_it_did(tmp_path: Path) -> None:
    c = Claude()
    keys = transcript(c)
    path = write_jsonl(tmp_path / f"{SESSION}.jsonl", c.lines)
    home = tmp_path / "home"
    old_home(home, path, keys)
    before = snapshot_files(home)
    assert owed(home).ok

    report = run_import(home, "claude-code", path)

    assert report.problems == []  # no "already has a node ... with other content"
    assert (report.added, report.sessions[SESSION].present) == (0, len(keys))
    assert snapshot_files(home) == before  # not a byte changed: it reads, and owes, what it did
    nodes = nodes_of(home, SESSION)
    assert {key: (nodes[node].role.value, nodes[node].content) for key, node in keys.items()} == {
        key: (role, text) for key, (role, text, _) in OLD.items()
    }
    report = owed(home)
    assert report.ok, report.violations


def test_lines_a_transcript_gained_since_are_tool_evidence_beside_the_old_rows(tmp_path: Path) -> None:
    c = Claude()
    keys = transcript(c)
    path = write_jsonl(tmp_path / f"{SESSION}.jsonl", c.lines)
    home = tmp_path / "home"
    old_home(home, path, keys)
    call = {"type": "tool_use", "id": "toolu_01B", "name": "Bash", "input": {"command": "git push"}}
    pushed = c.assistant(keys["a3"], "msg_01D", [call])
    failure = "Exit code 128\nfatal: The current branch main has no upstream branch."
    block = {"tool_use_id": "toolu_01B", "type": "tool_result", "content": failure, "is_error": True}
    result = c.user(pushed, [block], toolUseResult=f"Error: {failure}")
    write_jsonl(path, c.lines)

    report = run_import(home, "claude-code", path)

    assert report.problems == []
    assert report.added == 2
    nodes = nodes_of(home, SESSION)
    assert (
        nodes[result].content
        == "Bash: git push\n→ error · exit 128\nfatal: The current branch main has no upstream branch."
    )
    assert nodes[keys["r1"]].content == "[tool_result] 19 tests, 0 failures"  # the old row, kept
    write_and_verify(home)


def test_the_persons_words_at_an_id_an_old_tool_row_holds_are_still_reported(tmp_path: Path) -> None:
    c = Claude()
    said = c.user(None, "I moved to Lisbon.")
    path = write_jsonl(tmp_path / f"{SESSION}.jsonl", c.lines)
    home = tmp_path / "home"
    FileSessionStore(home).append(SESSION, "tool", "[tool_result] something else", node_id=said)

    report = run_import(home, "claude-code", path)

    assert [p.reason for p in report.problems] == [
        f"not imported: session {SESSION} already has a node {said} with other content"
    ]
