"""`dagmem import` (DESIGN §10): Claude Code, pi, Codex and OpenAI transcripts into sessions.

Every transcript here is made by hand, line by line as those tools write them (the builders below), with
each field variation the mapping names: forks, sidechains, list content, tool blocks, a torn last line, a
line that is not JSON; and one real-sized file (thousands of lines) per format. Imports go through the real
file store, then `dagmem write --force` and `dagmem verify --strict` (the independent oracle) must pass."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

import dagmem
from dagmem import FileSessionStore, Node
from dagmem.memory.adopt import Follower, Importer, SourceClock, import_into_store
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.forget import verify_forgotten
from dagmem.memory.format import FORGOTTEN_KEY, MARKER_KEY, anchor_of, parse_topic, scan_archive
from dagmem.sim import check_home
from dagmem.tests._cli import dagmem_run

# -- builders ----------------------------------------------------------------------------------------------

SESSION = "5b7c9f0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f"


def uid(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def iso(n: int) -> str:
    return f"2025-06-01T{10 + n // 3600 % 12:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


def write_jsonl(path: Path, lines: list[Any], tail: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for line in lines:
            f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
        f.write(tail)
    return path


class Claude:
    """Builds Claude Code lines; `n` numbers uuids and times."""

    def __init__(self, session: str = SESSION) -> None:
        self.session = session
        self.lines: list[dict[str, Any]] = []
        self.n = 0

    def _line(self, kind: str, parent: str | None, message: dict[str, Any] | None, **extra: Any) -> str:
        self.n += 1
        key = uid(self.n)
        line: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/u/project",
            "sessionId": self.session,
            "version": "2.0.61",
            "type": kind,
            "uuid": key,
            "timestamp": iso(self.n),
        }
        if message is not None:
            line["message"] = message
        line.update(extra)
        self.lines.append(line)
        return key

    def user(self, parent: str | None, text: Any, **extra: Any) -> str:
        return self._line("user", parent, {"role": "user", "content": text}, **extra)

    def assistant(
        self, parent: str | None, message_id: str, blocks: list[dict[str, Any]], **extra: Any
    ) -> str:
        message = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": blocks,
        }
        return self._line("assistant", parent, message, **extra)

    def text(self, parent: str | None, message_id: str, text: str, **extra: Any) -> str:
        return self.assistant(parent, message_id, [{"type": "text", "text": text}], **extra)

    def tool_use(self, parent: str, message_id: str, tool_id: str, name: str = "Read") -> str:
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": {"file_path": f"/x/{tool_id}"}}
        return self.assistant(parent, message_id, [block])

    def tool_result(self, parent: str, tool_id: str, output: Any = "ok") -> str:
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": output}
        return self.user(parent, [block], toolUseResult={"stdout": "ok"})

    def system(self, parent: str | None) -> str:
        return self._line("system", parent, None, subtype="hook", content="hook ran")

    def other(self, kind: str, **fields: Any) -> None:
        self.lines.append({"type": kind, **fields})


def claude_big(path: Path, exchanges: int, seed: int = 7) -> tuple[Path, int, int, set[str | None]]:
    """A long Claude Code session: prompts, text replies, parallel tool calls, retries and edits.
    Returns (path, lines written, nodes expected, the parents of its real forks)."""
    rng = random.Random(seed)
    c = Claude()
    c.other("summary", summary="a long session", leafUuid=uid(1))
    parent: str | None = None
    forks: set[str | None] = set()
    for i in range(exchanges):
        prompt = c.user(
            parent, f"question {i} about topic {rng.randrange(50)}: " + "words " * rng.randrange(5, 40)
        )
        if rng.random() < 0.05:  # an edited prompt: a sibling user prompt under the same parent
            prompt = c.user(parent, f"question {i}, asked again differently")
            forks.add(parent)
        mid = f"msg_{i}_a"
        last = c.text(prompt, mid, f"Let me look ({i}).")
        calls = [f"toolu_{i}_{k}" for k in range(rng.randrange(0, 4))]
        call_lines = []
        for call in calls:
            last = c.tool_use(last, mid, call)
            call_lines.append(last)
        for call, call_line in zip(calls, call_lines, strict=True):
            last = c.tool_result(call_line, call, f"contents of {call}")  # each result points at its call
        kept = last  # a hook line is no node: a fork after it is a fork at the line before it
        if rng.random() < 0.3:
            last = c.system(last)
        answer = c.text(last, f"msg_{i}_b", f"Answer {i}: " + "text " * rng.randrange(10, 80))
        if rng.random() < 0.05:  # a retry: another reply (another message id) to the same parent
            answer = c.text(last, f"msg_{i}_c", f"Answer {i}, regenerated.")
            forks.add(kept)
        if rng.random() < 0.1:
            c.other("file-history-snapshot", messageId=answer, snapshot={})
        parent = answer
    nodes = sum(1 for line in c.lines if line.get("type") in ("user", "assistant"))
    write_jsonl(path, c.lines)
    return path, len(c.lines), nodes, forks


def pi_lines_big(exchanges: int, seed: int = 3) -> tuple[list[dict[str, Any]], int]:
    rng = random.Random(seed)
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "pi-session-1", "timestamp": iso(0), "cwd": "/p"}
    ]
    parent: str | None = None
    nodes = 0
    n = 0

    def entry(kind: str, parent_id: str | None, **fields: Any) -> str:
        nonlocal n
        n += 1
        key = f"{n:08x}"
        lines.append({"type": kind, "id": key, "parentId": parent_id, "timestamp": iso(n), **fields})
        return key

    for i in range(exchanges):
        if rng.random() < 0.05:
            parent = entry("model_change", parent, provider="openai", modelId="gpt")
        user = entry(
            "message", parent, message={"role": "user", "content": f"pi question {i}", "timestamp": 1}
        )
        nodes += 1
        call = entry(
            "message",
            user,
            message={
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": f"c{i}", "name": "bash", "arguments": {"command": "ls"}}
                ],
            },
        )
        result = entry(
            "message",
            call,
            message={
                "role": "toolResult",
                "toolCallId": f"c{i}",
                "toolName": "bash",
                "content": [],
                "isError": False,
            },
        )
        answer = entry(
            "message",
            result,
            message={"role": "assistant", "content": [{"type": "text", "text": f"pi answer {i}"}]},
        )
        nodes += 3
        parent = answer
    return lines, nodes


def codex_lines(
    turns: list[tuple[str, str]], session: str = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [
        {
            "timestamp": iso(0),
            "type": "session_meta",
            "payload": {"id": session, "cwd": "/p", "cli_version": "0.46.0"},
        },
        {
            "timestamp": iso(0),
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<environment_context>cwd=/p</environment_context>"}
                ],
            },
        },
    ]
    for n, (role, text) in enumerate(turns, 1):
        kind = "input_text" if role == "user" else "output_text"
        lines.append(
            {
                "timestamp": iso(n),
                "type": "response_item",
                "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
            }
        )
        event = "user_message" if role == "user" else "agent_message"
        lines.append({"timestamp": iso(n), "type": "event_msg", "payload": {"type": event, "message": text}})
    return lines


# -- helpers -----------------------------------------------------------------------------------------------


def run_import(home: Path, fmt: str, *paths: Path, session: str | None = None) -> Any:
    importer = Importer(fmt, list(paths), session=session)
    clock = SourceClock()
    return import_into_store(importer, FileSessionStore(home, clock=clock), clock)


def dagmem_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return dagmem_run(*args, "--home", str(home))


def nodes_of(home: Path, sid: str) -> dict[str, Node]:
    snapshot = FileSessionStore(home).load(sid)
    assert snapshot.valid, snapshot.problems
    return snapshot.nodes


def tips(home: Path, sid: str) -> set[str]:
    return {tip.id for tip in FileSessionStore(home).tips(sid)}


def snapshot_files(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def write_and_verify(home: Path) -> None:
    written = dagmem_cli("write", "--force", "--json", home=home)
    assert written.returncode == 0, written.stdout + written.stderr
    verified = dagmem_cli("verify", "--strict", "--json", home=home)
    assert verified.returncode == 0, verified.stdout
    assert json.loads(verified.stdout)["ok"]


def archived_counts(home: Path, sid: str) -> Counter[str]:
    data = (home / "memory" / "sources" / f"{sid}.md").read_bytes()
    scan = scan_archive(data, sid)
    assert scan.status == "complete"
    return Counter(frame.source_id for frame in scan.frames)


def parallel_tools_fork(c: Claude) -> dict[str, str]:
    """A prompt, a reply that calls two tools in parallel (one API turn over four lines, each result pointing
    at its own call), a hook line, the answer; then an edited follow-up prompt: a real fork."""
    k: dict[str, str] = {}
    c.other("summary", summary="Sourdough", leafUuid=uid(99))
    k["u1"] = c.user(None, "How do I bake sourdough bread at home?")
    k["a1"] = c.text(k["u1"], "msg_A", "Let me check two recipes.")
    k["call1"] = c.tool_use(k["a1"], "msg_A", "t1")
    k["call2"] = c.tool_use(k["call1"], "msg_A", "t2")
    k["res1"] = c.tool_result(k["call1"], "t1", "recipe a")
    k["res2"] = c.tool_result(k["call2"], "t2", [{"type": "text", "text": "recipe b"}])
    k["hook"] = c.system(k["res2"])
    k["a2"] = c.text(k["hook"], "msg_B", "Mix flour, water and starter; bake at 250 C.")
    c.other("file-history-snapshot", messageId=k["a2"], snapshot={})
    k["u2"] = c.user(k["a2"], "What about rye flour?")
    k["u2b"] = c.user(k["a2"], "What about spelt flour instead?")  # the prompt, edited
    k["a3"] = c.text(k["u2b"], "msg_C", "Spelt works: use a little less water.")
    return k


# -- claude-code -------------------------------------------------------------------------------------------


def test_claude_parallel_tool_calls_are_one_chain_and_an_edited_prompt_a_fork(tmp_path: Path) -> None:
    c = Claude()
    k = parallel_tools_fork(c)
    path = write_jsonl(tmp_path / "t" / f"{SESSION}.jsonl", c.lines)

    report = run_import(tmp_path / "home", "claude-code", path)

    nodes = nodes_of(tmp_path / "home", SESSION)
    pred = {nid: node.predecessor for nid, node in nodes.items()}
    # The API turn msg_A and its results in file order: a chain, never a fork at call1.
    assert pred[k["call2"]] == k["call1"]
    assert pred[k["res1"]] == k["call2"]
    assert pred[k["res2"]] == k["res1"]
    assert pred[k["a2"]] == k["res2"]  # through the skipped hook line
    assert pred[k["u2"]] == pred[k["u2b"]] == k["a2"]  # the real fork
    assert tips(tmp_path / "home", SESSION) == {k["u2"], k["a3"]}
    assert k["hook"] not in nodes
    assert len(nodes) == 10
    roles = {nid: str(node.role) for nid, node in nodes.items()}
    assert [roles[k[x]] for x in ("u1", "a1", "call1", "res2", "a2")] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    # A result is tool evidence of the call it answers (list content: its text blocks).
    assert nodes[k["res2"]].content == "Read: /x/t2\n→ ok\nrecipe b"
    assert nodes[k["res2"]].metadata["evidence"] == "tool"
    assert nodes[k["u1"]].created_at == pytest.approx(1748772000.0 + 1)  # the line's timestamp
    assert nodes[k["a1"]].metadata["source"] == {
        "format": "claude-code",
        "file": str(path),
        "line": 3,
        "type": "assistant",
    }
    assert FileSessionStore(tmp_path / "home").head(SESSION) == k["a3"]
    assert report.problems == []
    assert report.sessions[SESSION].added == 10


def test_claude_fork_gives_two_tips_whose_shared_prefix_is_written_once(tmp_path: Path) -> None:
    c = Claude()
    k = parallel_tools_fork(c)
    path = write_jsonl(tmp_path / f"{SESSION}.jsonl", c.lines)
    home = tmp_path / "home"
    run_import(home, "claude-code", path)

    write_and_verify(home)

    wsid = read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")
    report = check_home(FileSessionStore(home), home / "memory", wsid, drained=True)
    assert report.ok, report.violations
    counts = archived_counts(home, SESSION)
    shared = [f"{SESSION}/{k[x]}" for x in ("u1", "a1", "a2")]
    assert all(counts[s] == 1 for s in shared)  # each shared turn archived once, for both tips
    # The tool results are tool evidence, records like the turns; the calls are tool rows, never archived.
    records = {f"{SESSION}/{k[x]}" for x in ("u1", "a1", "res1", "res2", "a2", "u2", "u2b", "a3")}
    assert set(counts) == records
    consumed = Counter(
        s
        for line in (home / "memory" / ".dagmem" / "txlog.jsonl").read_text().splitlines()
        for s in json.loads(line)["consumed"]
    )
    assert consumed == Counter(records)  # consumed once each: none twice, none missing


def test_claude_retry_is_a_fork_of_two_replies(tmp_path: Path) -> None:
    c = Claude()
    u1 = c.user(
        None, [{"type": "text", "text": "Name a bread."}, {"type": "image", "source": {"data": "..."}}]
    )
    thought = c.assistant(
        u1, "msg_1", [{"type": "thinking", "thinking": "French or Italian?", "signature": "x"}]
    )
    first = c.text(thought, "msg_1", "Baguette.")
    retry = c.text(u1, "msg_2", "Ciabatta.")  # regenerated: another message id, the same parent
    path = write_jsonl(tmp_path / "s.jsonl", c.lines)
    run_import(tmp_path / "home", "claude-code", path)
    assert tips(tmp_path / "home", SESSION) == {first, retry}
    nodes = nodes_of(tmp_path / "home", SESSION)
    assert nodes[u1].content == "Name a bread.\n\n[image]"  # list content: its text blocks (an image named)
    assert str(nodes[thought].role) == "tool"  # a thinking block is a tool row, never a record
    assert nodes[thought].content == "[thinking] French or Italian?"
    assert nodes[retry].predecessor == u1


def test_claude_sidechains_inline_and_subagent_files_are_branches_of_the_session(tmp_path: Path) -> None:
    c = Claude()
    u1 = c.user(None, "Review the repository.")
    a1 = c.tool_use(u1, "msg_1", "task1", name="Task")
    side = c.user(None, "Sub-agent: list the modules.", isSidechain=True)
    side_answer = c.text(side, "msg_s", "There are three modules.", isSidechain=True)
    r1 = c.tool_result(a1, "task1", "three modules")
    a2 = c.text(r1, "msg_2", "The sub-agent found three modules.")
    main = write_jsonl(tmp_path / f"{SESSION}.jsonl", c.lines)
    agent = Claude()
    agent.n = 500
    ag1 = agent.user(None, "Agent: read the README.", isSidechain=True, agentId="a1b2")
    ag2 = agent.text(ag1, "msg_ag", "The README explains the setup.", isSidechain=True, agentId="a1b2")
    write_jsonl(tmp_path / SESSION / "subagents" / "agent-a1b2.jsonl", agent.lines)
    compact = Claude()
    compact.n = 900
    compact.user(None, "Summarise the conversation", isSidechain=True)
    write_jsonl(tmp_path / SESSION / "subagents" / "agent-acompact-1.jsonl", compact.lines)

    report = run_import(tmp_path / "home", "claude-code", main)  # the sub-agent file is found beside it

    assert report.files == 2
    assert tips(tmp_path / "home", SESSION) == {side_answer, ag2, a2}
    nodes = nodes_of(tmp_path / "home", SESSION)
    assert nodes[side].predecessor is None
    assert nodes[ag1].predecessor is None
    assert nodes[side_answer].metadata["source"]["sidechain"] is True
    # Sidechain lines are appended as side branches (`spawned`), the main transcript's lines are not.
    assert all(nodes[n].metadata.get("spawned") is True for n in (side, side_answer, ag1, ag2))
    assert not any("spawned" in nodes[n].metadata for n in (u1, a1, r1, a2))
    assert FileSessionStore(tmp_path / "home").head(SESSION) == a2  # sidechains never move the head
    assert uid(901) not in nodes  # the compaction agent's replay is left out
    write_and_verify(tmp_path / "home")


def test_claude_a_subagent_file_of_its_own_session_is_spawned_from_the_task_that_started_it(
    tmp_path: Path,
) -> None:
    c = Claude()
    u1 = c.user(None, "Review the repository.")
    a1 = c.tool_use(u1, "msg_1", "task1", name="Task")
    # The task's result names the sub-agent it ran (`toolUseResult.agentId`, and in its text).
    block = {"tool_use_id": "task1", "type": "tool_result", "content": "Three modules.\nagentId: a1b2"}
    r1 = c.user(a1, [block], toolUseResult={"agentId": "a1b2", "status": "completed"})
    c.text(r1, "msg_2", "The sub-agent found three modules.")
    main = write_jsonl(tmp_path / f"{SESSION}.jsonl", c.lines)
    child_sid = "9a8b7c6d-0000-4000-8000-00000000c0de"
    agent = Claude(session=child_sid)  # its lines name a session of their own
    agent.n = 500
    ag1 = agent.user(None, "Agent: read the README.", isSidechain=True, agentId="a1b2")
    ag2 = agent.text(ag1, "msg_ag", "The README explains the setup.", isSidechain=True, agentId="a1b2")
    write_jsonl(tmp_path / SESSION / "subagents" / "agent-a1b2.jsonl", agent.lines)
    other = Claude()  # a sub-agent of the same session: a side branch there, as before
    other.n = 700
    ot1 = other.user(None, "Agent: count the tests.", isSidechain=True, agentId="c3d4")
    write_jsonl(tmp_path / SESSION / "subagents" / "agent-c3d4.jsonl", other.lines)

    run_import(tmp_path / "home", "claude-code", main)

    store = FileSessionStore(tmp_path / "home")
    assert store.meta(child_sid).spawned_from == f"{SESSION}/{r1}"
    assert store.meta(SESSION).spawned_from is None
    child = nodes_of(tmp_path / "home", child_sid)
    assert not any(n.metadata.get("spawned") for n in child.values())  # its own main line
    assert store.head(child_sid) == ag2
    assert nodes_of(tmp_path / "home", SESSION)[ot1].metadata.get("spawned") is True
    # A second import adds nothing and keeps the link.
    run_import(tmp_path / "home", "claude-code", main)
    assert FileSessionStore(tmp_path / "home").meta(child_sid).spawned_from == f"{SESSION}/{r1}"
    write_and_verify(tmp_path / "home")


def test_claude_head_is_the_main_transcript_s_leaf_after_an_edit_and_a_late_sidechain(tmp_path: Path) -> None:
    c = Claude()
    u1 = c.user(None, "Plan me a city break in October.")
    a1 = c.text(u1, "msg_1", "Which city would you like?")
    lisbon = c.user(a1, "Lisbon, please.")
    c.text(lisbon, "msg_2", "Lisbon in October is mild and sunny.")
    kyoto = c.user(a1, "Kyoto, please.")  # the user edited the prompt: the transcript goes on from here
    leaf = c.text(kyoto, "msg_3", "Kyoto in October has the first autumn leaves.")
    side = c.user(None, "Sub-agent: find temple opening hours.", isSidechain=True)
    c.text(side, "msg_s", "Most temples open at 8.", isSidechain=True)  # last in file order, a sidechain
    main = write_jsonl(tmp_path / f"{SESSION}.jsonl", c.lines)
    report = run_import(tmp_path / "home", "claude-code", main)
    assert report.sessions[SESSION].head == leaf
    assert FileSessionStore(tmp_path / "home").head(SESSION) == leaf
    assert nodes_of(tmp_path / "home", SESSION)[side].metadata["spawned"] is True


def test_claude_bad_lines_are_reported_with_file_and_line_and_the_rest_imported(tmp_path: Path) -> None:
    c = Claude()
    u1 = c.user(None, "First question about kayaks.")
    a1 = c.text(u1, "msg_1", "Sea kayaks are longer.")
    broken = c.user(a1, "placeholder")
    del c.lines[-1]["message"]  # JSON, but a user line without its message: skipped, its child follows a1
    u2 = c.user(broken, "Second question about paddles.")
    meta = c.user(u2, "<command-name>/clear</command-name>", isMeta=True)
    lines: list[Any] = list(c.lines)
    lines.insert(2, "this line is not JSON {")
    lines.insert(3, "")  # a blank line is not a problem
    path = write_jsonl(tmp_path / "s.jsonl", lines, tail='{"type": "user", "uuid": "torn-li')

    report = run_import(tmp_path / "home", "claude-code", path)

    assert [str(p) for p in report.problems] == [
        f"{path}:3: not JSON (Expecting value: line 1 column 1 (char 0)); skipped",
        f"{path}:5: a user line without a message object; skipped",
        f"{path}:8: a torn last line (no newline, not JSON); skipped",
    ]
    nodes = nodes_of(tmp_path / "home", SESSION)
    assert set(nodes) == {u1, a1, u2, meta}
    assert nodes[u2].predecessor == a1
    assert str(nodes[meta].role) == "system"  # text the CLI injected is not something the user said


def test_claude_cli_reports_bad_lines_and_never_a_traceback(tmp_path: Path) -> None:
    c = Claude()
    c.text(c.user(None, "hello"), "m", "hi")
    path = write_jsonl(tmp_path / "s.jsonl", [*c.lines, "{oops"])
    result = dagmem_cli("import", "claude-code", str(path), home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    assert f"{path}:3: not JSON" in result.stderr
    assert "Traceback" not in result.stderr
    assert "2 turns added" in result.stdout
    missing = dagmem_cli(
        "import", "claude-code", str(tmp_path / "nope.jsonl"), "--json", home=tmp_path / "h2"
    )
    assert missing.returncode == 2
    assert json.loads(missing.stdout)["code"] == "INVALID_INPUT"
    assert not (tmp_path / "h2").exists()
    bad_session = dagmem_cli("import", "claude-code", str(path), "--session", "../x", home=tmp_path / "h3")
    assert bad_session.returncode == 2
    assert "Traceback" not in bad_session.stderr


def test_claude_import_twice_changes_nothing_and_a_grown_file_adds_only_the_new_turns(tmp_path: Path) -> None:
    c = Claude()
    k = parallel_tools_fork(c)
    path = write_jsonl(tmp_path / "s.jsonl", c.lines)
    home = tmp_path / "home"
    run_import(home, "claude-code", path)
    before = snapshot_files(home)
    again = run_import(home, "claude-code", path)
    assert snapshot_files(home) == before
    assert again.added == 0
    assert again.sessions[SESSION].present == 10

    u3 = c.user(k["a3"], "And how long to bake?")
    a4 = c.text(u3, "msg_D", "Forty minutes.")
    write_jsonl(path, c.lines)
    grown = run_import(home, "claude-code", path)
    assert grown.added == 2
    assert grown.sessions[SESSION].present == 10
    assert nodes_of(home, SESSION)[u3].predecessor == k["a3"]
    assert FileSessionStore(home).head(SESSION) == a4


def test_claude_real_sized_session(tmp_path: Path) -> None:
    path, lines, expected, forks = claude_big(tmp_path / f"{SESSION}.jsonl", 600)
    assert lines > 3000
    assert len(forks) > 20
    home = tmp_path / "home"
    report = run_import(home, "claude-code", path)
    assert report.problems == []
    assert report.added == expected
    nodes = nodes_of(home, SESSION)
    # Forks exactly where the transcript has them (edits and retries), never at parallel tool calls.
    children = Counter(node.predecessor for node in nodes.values())
    assert {parent for parent, count in children.items() if count > 1} == forks
    assert run_import(home, "claude-code", path).added == 0
    write_and_verify(home)


# -- pi ----------------------------------------------------------------------------------------------------


def pi_tree() -> list[Any]:
    return [
        {"type": "session", "version": 3, "id": "pi-s1", "timestamp": iso(0), "cwd": "/p"},
        {"type": "message", "id": "a0000001", "parentId": None, "timestamp": iso(1),
         "message": {"role": "user", "content": "What is a monad?", "timestamp": 1748772001000}},
        {"type": "thinking_level_change", "id": "a0000002", "parentId": "a0000001", "timestamp": iso(2),
         "thinkingLevel": "high"},
        {"type": "message", "id": "a0000003", "parentId": "a0000002", "timestamp": iso(3),
         "message": {"role": "assistant", "content": [
             {"type": "thinking", "thinking": "hmm"},
             {"type": "text", "text": "A monoid in the category of endofunctors."},
             {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}]}},
        {"type": "message", "id": "a0000004", "parentId": "a0000003", "timestamp": iso(4),
         "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                     "content": [{"type": "text", "text": "file a"}], "isError": False}},
        {"type": "message", "id": "a0000005", "parentId": "a0000004", "timestamp": iso(5),
         "message": {"role": "user", "content": [{"type": "text", "text": "Simpler, please."}]}},
        {"type": "branch_summary", "id": "a0000006", "parentId": "a0000003", "timestamp": iso(6),
         "fromId": "a0000005", "summary": "asked for simpler"},
        {"type": "message", "id": "a0000007", "parentId": "a0000006", "timestamp": iso(7),
         "message": {"role": "user", "content": "Give an example instead."}},
        {"type": "message", "id": "a0000008", "parentId": "a0000007", "timestamp": iso(8),
         "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "c2", "name": "bash",
                                                       "arguments": {"command": "ghci"}}]}},
    ]  # fmt: skip


def test_pi_tree_forks_through_skipped_entries_and_the_head_is_the_last_entry(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "2025-06-01T10-00-00_x.jsonl", pi_tree(), tail="{not json")
    report = run_import(tmp_path / "home", "pi", path)
    assert [p.line for p in report.problems] == [10]
    nodes = nodes_of(tmp_path / "home", "pi-s1")
    assert set(nodes) == {"a0000001", "a0000003", "a0000004", "a0000005", "a0000007", "a0000008"}
    assert nodes["a0000003"].predecessor == "a0000001"  # through the thinking-level change
    assert nodes["a0000007"].predecessor == "a0000003"  # through the branch summary: a fork at a0000003
    assert tips(tmp_path / "home", "pi-s1") == {"a0000005", "a0000008"}
    assert str(nodes["a0000003"].role) == "assistant"
    assert nodes["a0000003"].content == "A monoid in the category of endofunctors."
    assert nodes["a0000003"].metadata["source"]["tools"] == ["read"]
    assert [str(nodes[x].role) for x in ("a0000004", "a0000008")] == ["tool", "tool"]
    assert FileSessionStore(tmp_path / "home").head("pi-s1") == "a0000008"
    write_and_verify(tmp_path / "home")


def test_pi_version_1_is_one_chain(tmp_path: Path) -> None:
    lines = [
        {"type": "session", "id": "old-pi", "timestamp": iso(0), "cwd": "/p"},
        {"type": "message", "timestamp": iso(1), "message": {"role": "user", "content": "hello"}},
        {"type": "model_change", "timestamp": iso(2), "provider": "x", "modelId": "y"},
        {
            "type": "message",
            "timestamp": iso(3),
            "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
        },
        {"type": "message", "timestamp": iso(4), "message": {"role": "user", "content": "hello"}},
    ]
    path = write_jsonl(tmp_path / "old.jsonl", lines)
    run_import(tmp_path / "home", "pi", path)
    branch = FileSessionStore(tmp_path / "home").branch(
        "old-pi", FileSessionStore(tmp_path / "home").head("old-pi") or ""
    )
    assert [n.content for n in branch] == ["hello", "hi", "hello"]
    assert run_import(tmp_path / "home", "pi", path).added == 0


def test_pi_real_sized_session(tmp_path: Path) -> None:
    lines, expected = pi_lines_big(800)
    path = write_jsonl(tmp_path / "big.jsonl", lines)
    assert len(lines) > 3000
    home = tmp_path / "home"
    report = run_import(home, "pi", path)
    assert report.added == expected
    assert not report.problems
    assert len(tips(home, "pi-session-1")) == 1
    assert run_import(home, "pi", path).added == 0
    write_and_verify(home)


# -- codex -------------------------------------------------------------------------------------------------

CODEX_ID = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"


def test_codex_rollout_items_map_to_a_chain(tmp_path: Path) -> None:
    lines: list[Any] = codex_lines([("user", "what is 2+2?"), ("assistant", "4")])
    lines += [
        {"timestamp": iso(5), "type": "turn_context", "payload": {"model": "gpt-5-codex"}},
        {"timestamp": iso(6), "type": "response_item", "payload": {"type": "reasoning", "summary": [], "encrypted_content": "x"}},
        {"timestamp": iso(7), "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "call_1"}},
        {"timestamp": iso(8), "type": "response_item", "payload": {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}},
        {"timestamp": iso(9), "type": "compacted", "payload": {"message": "summary of the above"}},
        {"timestamp": iso(10), "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "There is a.txt."}]}},
        "garbage",
    ]  # fmt: skip
    path = write_jsonl(tmp_path / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl", lines)
    report = run_import(tmp_path / "home", "codex", path)
    assert [p.line for p in report.problems] == [len(lines)]
    store = FileSessionStore(tmp_path / "home")
    branch = store.branch(CODEX_ID, store.head(CODEX_ID) or "")
    assert [(str(n.role), n.content) for n in branch] == [
        ("system", "<environment_context>cwd=/p</environment_context>"),
        ("user", "what is 2+2?"),
        ("assistant", "4"),
        ("tool", '[function_call shell] {"command":["ls"]}'),
        ("tool", "shell: ls\n→ ok\na.txt"),  # the output: tool evidence of the call it answers
        ("assistant", "There is a.txt."),
    ]
    assert len(tips(tmp_path / "home", CODEX_ID)) == 1
    write_and_verify(tmp_path / "home")


def test_codex_older_rollout_format(tmp_path: Path) -> None:
    lines = [
        {"id": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "timestamp": iso(0), "instructions": None},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "old question"}]},
        {"record_type": "state"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "old answer"}]},
    ]
    path = write_jsonl(tmp_path / "rollout-old.jsonl", lines)
    run_import(tmp_path / "home", "codex", path)
    nodes = nodes_of(tmp_path / "home", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
    assert sorted(n.content for n in nodes.values()) == ["old answer", "old question"]


def test_codex_real_sized_rollout_and_a_grown_file(tmp_path: Path) -> None:
    turns = [
        ("user" if i % 2 == 0 else "assistant", f"codex turn {i} about parsing " + "x " * (i % 30))
        for i in range(1600)
    ]
    lines = codex_lines(turns)
    path = write_jsonl(tmp_path / f"rollout-{CODEX_ID}.jsonl", lines[:2000])
    home = tmp_path / "home"
    first = run_import(home, "codex", path)
    write_jsonl(path, lines)
    grown = run_import(home, "codex", path)
    assert len(lines) > 3000
    assert first.added + grown.added == 1601
    assert grown.sessions[CODEX_ID].present == first.added
    assert len(tips(home, CODEX_ID)) == 1
    write_and_verify(home)


# -- openai ------------------------------------------------------------------------------------------------


def test_openai_message_list_with_tool_calls_and_a_bad_message(tmp_path: Path) -> None:
    messages = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}, {"type": "image_url", "image_url": {"url": "x"}}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "rain, 9 C"},
        {"role": "narrator", "content": "?"},
        {"role": "assistant", "content": "Rainy and 9 degrees."},
    ]  # fmt: skip
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages, indent=1))
    report = run_import(tmp_path / "home", "openai", path)
    assert len(report.problems) == 1
    assert "unknown role 'narrator'" in str(report.problems[0])
    starts = [n for n, line in enumerate(json.dumps(messages, indent=1).splitlines(), 1) if line == " {"]
    assert report.problems[0].line == starts[4]  # the line the fifth message starts on
    store = FileSessionStore(tmp_path / "home")
    branch = store.branch("chat", store.head("chat") or "")
    assert [str(n.role) for n in branch] == ["system", "user", "tool", "tool", "assistant"]
    assert branch[1].content == "Weather in Oslo?"
    assert branch[1].created_at == pytest.approx(path.stat().st_mtime)  # no time in the source: the file's
    write_and_verify(tmp_path / "home")


def test_openai_bad_message_is_named_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(
        '[\n  {"role": "user", "content": "a"},\n  42,\n  {"role": "assistant", "content": "b"}\n]\n'
    )
    report = run_import(tmp_path / "home", "openai", path)
    assert [str(p) for p in report.problems] == [f"{path}:3: a message that is not a JSON object; skipped"]
    not_json = tmp_path / "d.json"
    not_json.write_text('[{"role": "user", "content": "a"}, ')
    assert [p.line for p in run_import(tmp_path / "home", "openai", not_json).problems] == [1]


def test_openai_two_lists_sharing_a_beginning_fork_where_they_part(tmp_path: Path) -> None:
    base = [
        {"role": "user", "content": "Plan a picnic."},
        {"role": "assistant", "content": "Sandwiches and fruit."},
    ]
    one = tmp_path / "one.json"
    two = tmp_path / "two.json"
    one.write_text(json.dumps([*base, {"role": "user", "content": "For ten people?"}]))
    two.write_text(json.dumps([*base, {"role": "user", "content": "In the rain?"}]))
    home = tmp_path / "home"
    report = run_import(home, "openai", one, two, session="picnic")
    assert report.added == 4
    assert len(nodes_of(home, "picnic")) == 4
    assert len(tips(home, "picnic")) == 2
    write_and_verify(home)
    counts = archived_counts(home, "picnic")
    assert len(counts) == 4
    assert set(counts.values()) == {1}


def test_openai_real_sized_list(tmp_path: Path) -> None:
    rng = random.Random(5)
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "w " * rng.randrange(40)}
        for i in range(3000)
    ]
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"messages": messages}))
    home = tmp_path / "home"
    assert run_import(home, "openai", path).added == 3000
    assert run_import(home, "openai", path).added == 0
    write_and_verify(home)


# -- follow: a running runtime fed as the file grows ---------------------------------------------------------


@pytest.mark.anyio
async def test_follow_feeds_a_runtime_moves_the_head_and_writes_the_abandoned_branch(tmp_path: Path) -> None:
    c = Claude()
    u1 = c.user(None, "Tell me about the moons of Jupiter.")
    a1 = c.text(u1, "msg_1", "Io, Europa, Ganymede and Callisto are the largest.")
    u2 = c.user(a1, "Which one has an ocean?")
    a2 = c.text(u2, "msg_2", "Europa, under its ice.")
    path = write_jsonl(tmp_path / "s.jsonl", c.lines, tail='{"type": "user", "uu')  # a line being written
    home = tmp_path / "home"
    clock = SourceClock()
    store = FileSessionStore(home, clock=clock)
    importer = Importer("claude-code", [path])
    wsid = None
    written: set[str] = set()
    abandoned_written = anyio.Event()

    def trace(kind: str, fields: dict[str, Any]) -> None:
        if kind == "written":
            written.update(fields["nodes"])
            if {u2, a2} <= written:
                abandoned_written.set()

    async with dagmem.Runtime.open(home, store=store, abandon_after=0.2, trace=trace) as runtime:
        wsid = runtime.workspace_id
        follower = Follower(importer, runtime, store, clock)
        assert await follower.poll() == 4
        assert follower.report.problems == []  # the half-written line is held back, not reported
        # The user went back and asked again after a1: the source's head moves to the new branch.
        u2b = c.user(a1, "Which one is the biggest?")
        a2b = c.text(u2b, "msg_3", "Ganymede, bigger than Mercury.")
        write_jsonl(path, c.lines)
        assert await follower.poll() == 2
        assert store.head(SESSION) == a2b
        # After abandon_after the abandoned branch (u2, a2) is force-written, while following goes on.
        with anyio.fail_after(60):
            await abandoned_written.wait()
        assert all(node.metadata.get(MARKER_KEY) for node in store.read_nodes(SESSION, [u2, a2]))
        await follower.finish()  # the boundary write: nothing owed
    report = check_home(FileSessionStore(home), home / "memory", wsid, drained=True)
    assert report.ok, report.violations
    assert report.records == 6


@pytest.mark.anyio
async def test_follow_appends_sidechain_lines_as_side_branches_that_leave_the_head(tmp_path: Path) -> None:
    c = Claude()
    u1 = c.user(None, "Review the repository.")
    side = c.user(u1, "Sub-agent: list the modules.", isSidechain=True)
    side_answer = c.text(side, "msg_s", "There are three modules.", isSidechain=True)
    a1 = c.text(u1, "msg_1", "The repository has three modules.")
    late = c.user(side_answer, "Sub-agent: and their tests?", isSidechain=True)  # last in the file
    path = write_jsonl(tmp_path / "s.jsonl", c.lines)
    home = tmp_path / "home"
    clock = SourceClock()
    store = FileSessionStore(home, clock=clock)
    async with dagmem.Runtime.open(home, store=store) as runtime:
        follower = Follower(Importer("claude-code", [path]), runtime, store, clock)
        assert await follower.poll() == 5
        assert store.head(SESSION) == a1  # the main transcript's leaf, never moved by a sidechain line
        nodes = store.load(SESSION).nodes
        assert [n for n in nodes if nodes[n].metadata.get("spawned") is True] == [side, side_answer, late]
        await follower.finish()


@pytest.mark.anyio
async def test_a_stop_during_a_poll_lands_between_nodes_and_the_report_counts_every_node_taken(
    tmp_path: Path,
) -> None:
    c = Claude()
    u1 = c.user(None, "Plan a week in Kyoto.")
    c.text(u1, "msg_1", "Temples on day one, Arashiyama on day two.")
    path = write_jsonl(tmp_path / "s.jsonl", c.lines)
    home = tmp_path / "home"
    clock = SourceClock()
    store = FileSessionStore(home, clock=clock)
    async with dagmem.Runtime.open(home, store=store) as runtime:
        entered, replied = anyio.Event(), anyio.Event()

        class SlowReply:
            """The real runtime, whose reply comes late: the stop arrives after the turn is taken."""

            async def append_turn(self, session_id: str, turn: dagmem.Turn) -> str:
                node_id = await runtime.append_turn(session_id, turn)
                if not entered.is_set():  # the first reply comes only once the stop has been sent
                    entered.set()
                    await replied.wait()
                return node_id

            set_head = runtime.set_head
            end_session = runtime.end_session

        follower = Follower(Importer("claude-code", [path]), SlowReply(), store, clock)
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(follower.poll)
                await entered.wait()
                scope.cancel()  # Ctrl-C, while the first node's reply is on its way
                replied.set()
        taken = len(store.load(SESSION).nodes)
        assert taken == 1  # the poll stopped after the node in flight, not at the end of the file
        assert follower.report.added == taken
        assert await follower.poll() == 1  # the next poll goes on from there, nothing twice
        assert follower.report.added == len(store.load(SESSION).nodes) == 2


@pytest.mark.anyio
@pytest.mark.parametrize("started", ["before the forget", "after the forget"])
async def test_a_forgotten_turn_seen_again_through_follow_is_a_tombstone_never_memory(
    tmp_path: Path, started: str
) -> None:
    """A turn followed, written and forgotten, then seen again through follow (the host resumes the session
    as a new transcript holding the same lines): the runtime stores it as the tombstone an import stores
    (empty, `forgotten_at`), whether the follow was running when the forget happened or started after;
    nothing owes it, no block cites it, and no copy of its text is anywhere under the home."""
    secret = "hunter2-s3cr3t-db-password"
    c = Claude()
    asked = c.user(None, "Which database do we use for the billing service?")
    said = c.text(asked, "msg_1", "Postgres 16 for the billing service, on the db host.")
    pasted = c.user(said, f"The billing db password is {secret} by the way.")
    c.text(pasted, "msg_2", "Thanks, noted for the billing service.")
    folder = tmp_path / "project"
    write_jsonl(folder / f"{SESSION}.jsonl", c.lines)
    home = tmp_path / "home"
    clock = SourceClock()
    store = FileSessionStore(home, clock=clock)
    other = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    async with dagmem.Runtime.open(home, store=store) as rt:
        wsid = rt.workspace_id
        follower = Follower(Importer("claude-code", [folder]), rt, store, clock)
        assert await follower.poll() == 4
        await rt.flush(force=True)
        report = await rt.forget(match=secret)
        assert report.clean, report.copies
        assert report.targets == [f"{SESSION}/{pasted}"]
        if started == "after the forget":  # `dagmem import --follow` started again
            follower = Follower(Importer("claude-code", [folder]), rt, store, clock)
        write_jsonl(folder / f"{other}.jsonl", [{**line, "sessionId": other} for line in c.lines])
        assert await follower.poll() == 4
        await follower.finish()
        await rt.flush(force=True)
        hits = await rt.recall("billing db password", k=10)
    assert follower.report.count(other).forgotten == 1
    assert any(f"{other}/{pasted}" in p.reason and "forgotten" in p.reason for p in follower.report.problems)
    for sid in (SESSION, other):
        node = FileSessionStore(home).load(sid).nodes[pasted]
        assert node.content == ""
        assert node.metadata.get(FORGOTTEN_KEY) is not None  # a tombstone, as an import stores it
        # Written before it was forgotten, the first keeps its mark (markers stay true); the copy is no
        # record: never written, never marked.
        assert (MARKER_KEY in node.metadata) is (sid == SESSION)
    cited = {
        (source.session_id, source.anchor)
        for path in (home / "memory" / "topics").glob("*.md")
        if path.name != "index.md"
        for block in parse_topic(path.read_text("utf-8"), f"topics/{path.name}").blocks
        for citation in block.citations
        for source in citation.sources
    }
    assert (other, anchor_of(f"{other}/{asked}")) in cited  # the resumed copy's other turns were written
    assert (other, anchor_of(f"{other}/{pasted}")) not in cited
    assert all(secret not in hit.text for hit in hits)
    assert [str(p) for p in home.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()] == []
    assert verify_forgotten(home) == []
    oracle = check_home(FileSessionStore(home), home / "memory", wsid, drained=True)
    assert oracle.ok, oracle.violations


def test_follow_on_the_command_line_stops_cleanly_on_ctrl_c_with_a_boundary_write(tmp_path: Path) -> None:
    c = Claude()
    u1 = c.user(None, "Plan a week in Kyoto.")
    c.text(u1, "msg_1", "Temples on day one, Arashiyama on day two.")
    path = write_jsonl(tmp_path / "s.jsonl", c.lines)
    home = tmp_path / "home"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dagmem", "import", "claude-code", str(path), "--follow", "--interval", "0.1",
         "--json", "--home", str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (home / "sessions" / SESSION / "meta.json").exists():
            assert time.monotonic() < deadline
            assert proc.poll() is None
            time.sleep(0.05)
        u2 = c.user(uid(2), "And a day trip to Nara?")
        c.text(u2, "msg_2", "Yes: the deer park and Todai-ji.")
        write_jsonl(path, c.lines)
        while len(FileSessionStore(home).load(SESSION).nodes) < 4:
            assert time.monotonic() < deadline
            assert proc.poll() is None
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert json.loads(out)["added"] == 4
    verified = dagmem_cli("verify", "--strict", "--json", home=home)  # the boundary write left nothing owed
    assert verified.returncode == 0, verified.stdout


def test_following_a_file_that_is_replaced_reads_it_again_without_duplicates(tmp_path: Path) -> None:
    turns = [("user", "first"), ("assistant", "second")]
    path = write_jsonl(tmp_path / f"rollout-{CODEX_ID}.jsonl", codex_lines(turns))
    importer = Importer("codex", [path])
    assert len(importer.poll(final=False)) == 3
    replacement = write_jsonl(tmp_path / "new.jsonl", codex_lines([*turns, ("user", "third")]))
    replacement.replace(path)  # a new file in its place (an editor's save, a log rotation)
    assert [p.content for p in importer.poll(final=False)] == ["third"]


def test_claude_a_project_directory_imports_every_session_and_its_sub_agents(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-home-u-project"
    for n, sid in enumerate((SESSION, "6c8d0a1f-2e3b-4d4c-8f90-1b2c3d4e5f60")):
        c = Claude(sid)
        c.n = 100 * n
        c.text(c.user(None, f"question in {sid}"), f"m{n}", "answer")
        write_jsonl(project / f"{sid}.jsonl", c.lines)
    agent = Claude(SESSION)
    agent.n = 900
    agent.user(None, "sub-agent prompt", isSidechain=True)
    write_jsonl(project / SESSION / "subagents" / "agent-77.jsonl", agent.lines)
    result = dagmem_cli("import", "claude-code", str(project), "--json", home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["files"] == 3
    assert {sid: s["added"] for sid, s in out["sessions"].items()} == {
        SESSION: 3,
        "6c8d0a1f-2e3b-4d4c-8f90-1b2c3d4e5f60": 2,
    }
