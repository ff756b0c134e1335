"""Codex and pi tool calls with their results are tool evidence too (`format.ToolEvidence`). Codex: a
`function_call`, `custom_tool_call` or `local_shell_call` and its `*_output`, joined by `call_id`; a shell
command as an argv array or a string; the exit status in the output's JSON `metadata` or its `Exit code:` /
`Process exited with code` header. pi: an assistant's `toolCall` blocks and the `toolResult` messages that
answer them (`isError`, a failed command's "Command exited with code N"), and the person's own `!`
commands (`bashExecution`). The lines are written in the shapes those tools write (openai/codex's
`ResponseItem`, pi-mono's session entries)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dagmem import FileSessionStore
from dagmem.tests.memory.adopt.test_import import iso, run_import, write_and_verify, write_jsonl

CODEX_ID = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"


def item(n: int, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": iso(n), "type": "response_item", "payload": payload}


def call(n: int, name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return item(
        n, {"type": "function_call", "name": name, "arguments": json.dumps(arguments), "call_id": call_id}
    )


def output(n: int, call_id: str, text: str, kind: str = "function_call_output") -> dict[str, Any]:
    return item(n, {"type": kind, "call_id": call_id, "output": text})


def branch_texts(home: Path, sid: str) -> list[tuple[str, bool, str]]:
    store = FileSessionStore(home)
    nodes = store.branch(sid, store.head(sid) or "")
    return [(n.role.value, n.metadata.get("evidence") == "tool", n.content) for n in nodes]


def test_codex_calls_and_their_outputs_are_tool_evidence(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-    a + b + 1\n+    a + b\n*** End Patch\n"
    cargo_failed = json.dumps(
        {
            "output": "running 12 tests\ntest add ... FAILED\n\ntest result: FAILED. 11 passed; 1 failed; 0 ignored\n",
            "metadata": {"exit_code": 101, "duration_seconds": 3.2},
        }
    )
    lines = [
        {"timestamp": iso(0), "type": "session_meta", "payload": {"id": CODEX_ID, "cwd": "/repo"}},
        item(1, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the tests."}]}),
        call(2, "shell", {"command": ["bash", "-lc", "cargo test"], "workdir": "/repo", "timeout_ms": 120000}, "c1"),
        output(3, "c1", cargo_failed),
        item(4, {"type": "custom_tool_call", "status": "completed", "call_id": "c2", "name": "apply_patch", "input": patch}),
        output(5, "c2", "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM src/lib.rs\n",
               "custom_tool_call_output"),
        call(6, "exec_command", {"cmd": "cargo test", "workdir": "/repo", "yield_time_ms": 1000}, "c3"),
        output(7, "c3", "Chunk ID: c15eb7\nWall time: 2.0541 seconds\nProcess exited with code 0\nOriginal token count: 40\n"
               "Output:\nrunning 12 tests\ntest result: ok. 12 passed; 0 failed; 0 ignored\n"),
        call(8, "update_plan", {"plan": [{"status": "completed", "step": "Fix the sum"},
                                         {"status": "in_progress", "step": "Run the tests"}]}, "c4"),
        output(9, "c4", "Plan updated"),
        item(10, {"type": "local_shell_call", "call_id": "c5", "status": "completed",
                  "action": {"type": "exec", "command": ["git", "status", "--short"]}}),
        output(11, "c5", json.dumps({"output": " M src/lib.rs\n", "metadata": {"exit_code": 0}})),
        output(12, "c9", "done"),  # its call is not in this file
        item(13, {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Fixed."}]}),
    ]  # fmt: skip
    path = write_jsonl(tmp_path / f"rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl", lines)
    home = tmp_path / "home"
    assert run_import(home, "codex", path).problems == []
    evidence = [text for _, is_evidence, text in branch_texts(home, CODEX_ID) if is_evidence]
    assert evidence == [
        "shell: cargo test\n→ error · exit 101 · 11 passed; 1 failed · 12 tests\n"
        "running 12 tests\ntest add ... FAILED\n\ntest result: FAILED. 11 passed; 1 failed; 0 ignored",
        f"apply_patch: src/lib.rs\n→ ok · exit 0\n{patch.strip()}",
        "exec_command: cargo test\n→ ok · exit 0 · 12 passed; 0 failed · 12 tests\n"
        "running 12 tests\ntest result: ok. 12 passed; 0 failed; 0 ignored",
        "update_plan: ☑ Fix the sum; ◐ Run the tests\n→ ok\n☑ Fix the sum\n◐ Run the tests",
        "local_shell_call: git status --short\n→ ok · exit 0\n M src/lib.rs",
        "tool: \n→ ok\ndone",
    ]
    calls = [
        text for role, is_evidence, text in branch_texts(home, CODEX_ID) if role == "tool" and not is_evidence
    ]
    assert calls[0].startswith("[function_call shell]")  # the call itself: a tool row, as before
    write_and_verify(home)


def pi_entry(n: int, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": f"{n:08x}", "parentId": parent, "timestamp": iso(n), "message": message}


def test_pi_tool_results_and_the_persons_commands_are_tool_evidence(tmp_path: Path) -> None:
    def assistant_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        block = {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
        return {"role": "assistant", "content": [block], "api": "anthropic-messages", "stopReason": "toolUse"}

    def result(call_id: str, name: str, text: str, *, error: bool = False) -> dict[str, Any]:
        return {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": error,
            "timestamp": 1733234567900,
        }

    failed = "> vitest run\n\n Test Files  1 failed (1)\n      Tests  2 failed | 10 passed (12)\n\n\nCommand exited with code 1"
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Make the tests pass.", "timestamp": 1733234567890},
        assistant_call("t1", "bash", {"command": "npm test"}),
        result("t1", "bash", failed, error=True),
        assistant_call("t2", "edit", {"path": "src/sum.ts", "oldText": "return a - b;", "newText": "return a + b;"}),
        result("t2", "edit", "Successfully replaced text in src/sum.ts."),
        assistant_call("t3", "read", {"path": "package.json", "limit": 20}),
        result("t3", "read", '{\n  "name": "sum",\n  "scripts": {\n    "test": "vitest run"\n  },\n  "x": 1\n}'),
        {"role": "bashExecution", "command": "git status --short", "output": " M src/sum.ts\n", "exitCode": 0,
         "cancelled": False, "truncated": False, "timestamp": 1733234567950},
        result("t9", "grep", "src/sum.ts:1:export"),  # its call is not in this file: its toolName names it
        {"role": "assistant", "content": [{"type": "text", "text": "Fixed the sign."}]},
    ]  # fmt: skip
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "pi-s", "timestamp": iso(0), "cwd": "/p"}
    ]
    parent: str | None = None
    for n, message in enumerate(messages, 1):
        lines.append(pi_entry(n, parent, message))
        parent = lines[-1]["id"]
    path = write_jsonl(tmp_path / "2025-12-03T14-00-00_pi-s.jsonl", lines)
    home = tmp_path / "home"
    assert run_import(home, "pi", path).problems == []
    evidence = [text for _, is_evidence, text in branch_texts(home, "pi-s") if is_evidence]
    assert evidence == [
        "bash: npm test\n→ error · exit 1 · 10 passed · 2 failed · 1 failed\n"
        "> vitest run\n\n Test Files  1 failed (1)\n      Tests  2 failed | 10 passed (12)",
        "edit: src/sum.ts\n→ ok\n- return a - b;\n+ return a + b;",
        'read: package.json (limit 20)\n→ ok\n{\n  "name": "sum",\n  "scripts": {\n    "test": "vitest run"\n  },',
        "bash: git status --short\n→ ok · exit 0\n M src/sum.ts",
        "grep: \n→ ok\nsrc/sum.ts:1:export",
    ]
    write_and_verify(home)
