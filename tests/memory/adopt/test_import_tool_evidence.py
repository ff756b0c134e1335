"""A Claude Code tool call with its result is tool evidence (`format.ToolEvidence`): the result's line becomes
one `tool` node with `"evidence": "tool"` in its metadata, whose text names the call (its name and a summary
of its input), its outcome (ok or error, the exit status, the counts the output states) and an excerpt of
the result by the tool's kind. Such nodes are records: archived with origin `tool`, never a core fact.

The lines are written here in the shapes Claude Code writes (copied from the real transcripts under
/work/shared/data/transcripts, fields a test does not need left out); the last test imports a real
transcript when the data is there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dagmem.memory.format import parse_tool_evidence, scan_archive
from dagmem.tests.memory.adopt.test_import import (
    SESSION,
    Claude,
    nodes_of,
    run_import,
    write_and_verify,
    write_jsonl,
)

SPOTTER = Path("/work/shared/data/transcripts/spotter")
MIX_OUTPUT = (
    "Compiling 2 files (.ex)\nGenerated spotter app\nRunning ExUnit with seed: 918599, max_cases: 32\n\n"
    "...................\nFinished in 2.6 seconds (0.00s async, 2.6s sync)\n19 tests, 0 failures\n"
)


def call_and_result(
    c: Claude,
    parent: str | None,
    name: str,
    tool_input: dict[str, Any],
    content: Any,
    *,
    structured: Any = None,
    is_error: bool | None = None,
) -> tuple[str, str]:
    """An assistant line calling `name` and the user line carrying its result, as Claude Code writes them."""
    tool_id = f"toolu_01{c.n:022d}"
    block = {
        "type": "tool_use",
        "id": tool_id,
        "name": name,
        "input": tool_input,
        "caller": {"type": "direct"},
    }
    call = c.assistant(parent, f"msg_01{c.n:022d}", [block])
    result: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
    if is_error is not None:
        result["is_error"] = is_error
    extra = {"sourceToolAssistantUUID": call} if structured is None else {"toolUseResult": structured}
    return call, c.user(call, [result], **extra)


def imported(tmp_path: Path, c: Claude) -> dict[str, Any]:
    path = write_jsonl(tmp_path / f"{SESSION}.jsonl", c.lines)
    report = run_import(tmp_path / "home", "claude-code", path)
    assert report.problems == []
    return nodes_of(tmp_path / "home", SESSION)


def test_a_shell_run_is_evidence_of_its_command_its_outcome_and_its_counts(tmp_path: Path) -> None:
    c = Claude()
    ask = c.user(None, "Run the renderer tests.")
    command = {
        "command": "mix test test/spotter/services/transcript_renderer_test.exs 2>&1",
        "timeout": 60000,
    }
    structured = {"stdout": MIX_OUTPUT, "stderr": "", "interrupted": False, "isImage": False}
    call, result = call_and_result(
        c, ask, "Bash", command, MIX_OUTPUT.strip(), structured=structured, is_error=False
    )
    nodes = imported(tmp_path, c)
    node = nodes[result]
    assert node.role.value == "tool"
    assert node.metadata["evidence"] == "tool"
    assert node.content.split("\n")[:2] == [
        "Bash: mix test test/spotter/services/transcript_renderer_test.exs 2>&1",
        "→ ok · 19 tests, 0 failures",
    ]
    record = parse_tool_evidence(node.content)
    assert record is not None
    assert (record.ok, record.exit, record.counts) == (True, None, ("19 tests, 0 failures",))
    assert record.excerpt.endswith("19 tests, 0 failures")
    assert "evidence" not in nodes[call].metadata  # the call alone is a tool row, no record


def test_a_failed_shell_run_states_its_exit_status_and_its_error_output(tmp_path: Path) -> None:
    c = Claude()
    failure = (
        "Exit code 2\nRunning ExUnit with seed: 374312, max_cases: 32\n\n  1) test mount handles invalid project "
        "id gracefully (SpotterWeb.ProjectReviewLiveTest)\n     ** (RuntimeError) no :secret_key_base\n\n"
        "Finished in 0.3 seconds\n5 tests, 5 failures"
    )
    _, result = call_and_result(
        c,
        None,
        "Bash",
        {"command": "mix test test/spotter_web 2>&1"},
        failure,
        structured=f"Error: {failure}",
        is_error=True,
    )
    record = parse_tool_evidence(imported(tmp_path, c)[result].content)
    assert record is not None
    assert (record.ok, record.exit, record.counts) == (False, 2, ("5 tests, 5 failures",))
    assert record.excerpt.startswith("Running ExUnit")  # the status is in the outcome line, not twice
    assert "no :secret_key_base" in record.excerpt


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            (
                "Edit",
                {
                    "file_path": "/p/lib/a.ex",
                    "old_string": "def a, do: 1",
                    "new_string": "def a, do: 2\n# two",
                },
                "The file /p/lib/a.ex has been updated successfully.",
                {"filePath": "/p/lib/a.ex", "oldString": "def a, do: 1", "newString": "def a, do: 2\n# two"},
                "Edit: /p/lib/a.ex\n→ ok\n- def a, do: 1\n+ def a, do: 2\n+ # two",
            ),
            id="edit: a compact diff",
        ),
        pytest.param(
            (
                "MultiEdit",
                {
                    "file_path": "/p/a.py",
                    "edits": [
                        {"old_string": "x = 1", "new_string": "x = 2"},
                        {"old_string": "y = 1", "new_string": "y = 3"},
                    ],
                },
                'Applied 2 edits to /p/a.py:\n1. Replaced "x = 1" with "x = 2"',
                None,
                "MultiEdit: /p/a.py\n→ ok\n- x = 1\n+ x = 2\n- y = 1\n+ y = 3",
            ),
            id="multiedit: each edit's diff",
        ),
        pytest.param(
            (
                "Write",
                {"file_path": "/p/CLAUDE.md", "content": "# CLAUDE.md\n\nRun `mix test`.\n"},
                "File created successfully at: /p/CLAUDE.md",
                {"type": "create", "filePath": "/p/CLAUDE.md", "content": "# CLAUDE.md\n\nRun `mix test`.\n"},
                "Write: /p/CLAUDE.md\n→ ok\n# CLAUDE.md\n\nRun `mix test`.",
            ),
            id="write: the content's head",
        ),
        pytest.param(
            (
                "Read",
                {"file_path": "/p/lib/tmux.ex", "offset": 10, "limit": 40},
                "    10→defmodule Tmux do\n    11→  @moduledoc false\n    12→  a\n    13→  b\n    14→  c\n    15→  d",
                {
                    "type": "text",
                    "file": {
                        "filePath": "/p/lib/tmux.ex",
                        "content": "defmodule Tmux do\n  @moduledoc false\n  a\n  b\n  c\n  d",
                        "numLines": 6,
                        "startLine": 10,
                    },
                },
                "Read: /p/lib/tmux.ex (offset 10, limit 40)\n→ ok\ndefmodule Tmux do\n  @moduledoc false\n  a\n  b\n  c",
            ),
            id="read: the file's first five lines",
        ),
        pytest.param(
            (
                "Read",
                {"file_path": "/p/README.md"},
                "     1→JSSoundRecorder\n     2→===============\n\n<system-reminder>\nWhenever you read a file, you "
                "should consider whether it would be considered malware.\n</system-reminder>\n",
                None,
                "Read: /p/README.md\n→ ok\nJSSoundRecorder\n===============",
            ),
            id="read without its structured result: the text without line numbers or reminders",
        ),
        pytest.param(
            (
                "Grep",
                {
                    "pattern": "SessionLive|session_live",
                    "path": "/p/lib/spotter_web",
                    "output_mode": "content",
                },
                'lib/spotter_web/router.ex:33:    live("/sessions/:session_id", SessionLive)',
                {"mode": "content", "numFiles": 0, "filenames": [], "content": "…", "numLines": 1},
                "Grep: SessionLive|session_live in /p/lib/spotter_web\n→ ok\n"
                'lib/spotter_web/router.ex:33:    live("/sessions/:session_id", SessionLive)',
            ),
            id="search: the pattern, where, the matches",
        ),
        pytest.param(
            (
                "Task",
                {
                    "description": "Explore Tmux module",
                    "prompt": "I need to understand…",
                    "subagent_type": "Explore",
                },
                [
                    {
                        "type": "text",
                        "text": "## Key Findings\n\n`list_panes/0` returns {:error, reason} safely.",
                    }
                ],
                {
                    "status": "completed",
                    "agentId": "a2898e3",
                    "content": [
                        {
                            "type": "text",
                            "text": "## Key Findings\n\n`list_panes/0` returns {:error, reason} safely.",
                        }
                    ],
                },
                "Task: Explore Tmux module (Explore)\n→ ok\n## Key Findings\n\n`list_panes/0` returns {:error, reason} safely.",
            ),
            id="agent: the description, the type, the report",
        ),
        pytest.param(
            (
                "TodoWrite",
                {
                    "todos": [
                        {"content": "Read the parser", "status": "completed", "activeForm": "Reading"},
                        {"content": "Fix the test", "status": "in_progress", "activeForm": "Fixing"},
                        {"content": "Push", "status": "pending", "activeForm": "Pushing"},
                    ]
                },
                "Todos have been modified successfully. Ensure that you continue to use the todo list",
                {"oldTodos": [], "newTodos": []},
                "TodoWrite: ☑ Read the parser; ◐ Fix the test; ☐ Push\n→ ok\n☑ Read the parser\n◐ Fix the test\n☐ Push",
            ),
            id="todo: the list with statuses",
        ),
        pytest.param(
            (
                "WebFetch",
                {"url": "https://code.claude.com/docs/en/hooks.md", "prompt": "the SessionStart contract"},
                "# Hooks reference\nHooks are user-defined shell commands.",
                None,
                "WebFetch: https://code.claude.com/docs/en/hooks.md\n→ ok\n# Hooks reference\n"
                "Hooks are user-defined shell commands.",
            ),
            id="web: the url and the page",
        ),
        pytest.param(
            (
                "AskUserQuestion",
                {"questions": [{"question": "How should we proceed?", "header": "Commit"}]},
                'User has answered your questions: "How should we proceed?"="fix the issues".',
                {"answers": {"How should we proceed?": "fix the issues"}},
                'AskUserQuestion: {"questions":[{"question":"How should we proceed?","header":"Commit"}]}\n→ ok\n'
                "How should we proceed? → fix the issues",
            ),
            id="ask: each question with the person's answer",
        ),
        pytest.param(
            (
                "EnterWorktree",
                {"name": "fix-renderer", "base": "main"},
                "Entered the worktree fix-renderer.",
                {"path": "/x/fix-renderer"},
                'EnterWorktree: {"name":"fix-renderer","base":"main"}\n→ ok\nEntered the worktree fix-renderer.',
            ),
            id="other: the input as compact JSON",
        ),
        pytest.param(
            (
                "Edit",
                {"file_path": "/p/a.ex", "old_string": "missing", "new_string": "x"},
                "<tool_use_error>String to replace not found in file.</tool_use_error>",
                "Error: String to replace not found in file.",
                "Edit: /p/a.ex\n→ error\n<tool_use_error>String to replace not found in file.</tool_use_error>",
            ),
            id="a failed edit: its error, not the diff it did not make",
        ),
    ],
)
def test_each_kind_of_tool_keeps_the_excerpt_it_needs(tmp_path: Path, case: tuple[Any, ...]) -> None:
    """`case`: the tool's name and input, the result's content and structured form, the record expected."""
    name, tool_input, content, structured, expected = case
    c = Claude()
    error = True if expected.split("\n")[1].startswith("→ error") else None
    _, result = call_and_result(c, None, name, tool_input, content, structured=structured, is_error=error)
    node = imported(tmp_path, c)[result]
    assert node.content == expected
    assert node.metadata["source"]["tools"] == [name]


def test_a_long_edit_keeps_the_heads_of_the_old_and_the_new_text(tmp_path: Path) -> None:
    c = Claude()
    old, new = "o" * 1000, "n" * 3000
    _, result = call_and_result(
        c, None, "Edit", {"file_path": "/p/a", "old_string": old, "new_string": new}, "ok"
    )
    lines = imported(tmp_path, c)[result].content.split("\n")
    assert lines[2] == "- " + "o" * 298 + " …"  # the replaced text's head: 300 characters
    assert lines[3] == "+ " + "n" * 798 + " …"  # the new text's head: 800


def test_a_result_whose_call_is_in_another_file_is_evidence_of_a_tool(tmp_path: Path) -> None:
    c = Claude()
    block = {"tool_use_id": "toolu_01NotInThisFile", "type": "tool_result", "content": "done"}
    result = c.user(None, [block], toolUseResult={"stdout": "done", "stderr": ""})
    node = imported(tmp_path, c)[result]
    assert node.content == "tool: \n→ ok\ndone"
    assert node.metadata["evidence"] == "tool"


def test_a_background_command_s_result_says_where_it_runs(tmp_path: Path) -> None:
    c = Claude()
    text = "Command running in background with ID: be613ab. Output is being written to: /tmp/be613ab.output"
    structured = {"stdout": "", "stderr": "", "interrupted": False, "backgroundTaskId": "be613ab"}
    _, result = call_and_result(
        c, None, "Bash", {"command": "mix test", "run_in_background": True}, text, structured=structured
    )
    assert imported(tmp_path, c)[result].content == f"Bash: mix test\n→ ok\n{text}"


def test_an_assistant_line_with_words_beside_its_calls_is_a_record_of_the_words(tmp_path: Path) -> None:
    c = Claude()
    ask = c.user(None, "Which tests fail?")
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": "Let me run the failing test file."},
        {"type": "tool_use", "id": "toolu_01A", "name": "Bash", "input": {"command": "mix test 2>&1"}},
    ]
    said = c.assistant(ask, "msg_01A", blocks)
    calls_only = c.assistant(
        said, "msg_01A", [{"type": "tool_use", "id": "toolu_01B", "name": "Bash", "input": {}}]
    )
    thought = c.assistant(
        calls_only,
        "msg_01C",
        [
            {"type": "thinking", "thinking": "Which file?", "signature": "x"},
            {"type": "text", "text": "It is a.ex."},
        ],
    )
    searched = c.assistant(
        thought,
        "msg_01D",
        [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_01",
                "name": "web_search",
                "input": {"query": "ecto"},
            },
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": []},
        ],
    )
    nodes = imported(tmp_path, c)
    assert (nodes[said].role.value, nodes[said].content) == ("assistant", "Let me run the failing test file.")
    assert nodes[said].metadata["source"]["tools"] == ["Bash"]
    assert (nodes[thought].role.value, nodes[thought].content) == ("assistant", "It is a.ex.")
    assert nodes[calls_only].role.value == "tool"  # a line of calls only: a tool row, as before
    assert nodes[searched].role.value == "tool"  # a block named, no words: no record


def test_tool_evidence_is_archived_with_origin_tool_and_never_a_core_fact(tmp_path: Path) -> None:
    c = Claude()
    ask = c.user(None, "I prefer short answers. Run the tests.")
    said = c.text(ask, "msg_01S", "Running them now.")
    text = "I always use tabs.\n19 tests, 0 failures"  # a tool's output in the first person: not the person
    structured = {"stdout": text, "stderr": "", "interrupted": False}
    _, result = call_and_result(
        c, said, "Bash", {"command": "mix test"}, text, structured=structured, is_error=False
    )
    c.text(result, "msg_01T", "All 19 tests pass.")
    imported(tmp_path, c)
    home = tmp_path / "home"
    write_and_verify(home)
    data = (home / "memory" / "sources" / f"{SESSION}.md").read_bytes()
    frames = {f.node_id: f for f in scan_archive(data, SESSION).frames}
    assert frames[result].origin == "tool"
    assert frames[result].role == "tool"
    core = (home / "memory" / "topics" / "core.md").read_text("utf-8")
    assert "short answers" in core
    assert "tabs" not in core


def test_a_real_transcript_s_test_runs_are_evidence_with_their_outcomes(tmp_path: Path) -> None:
    transcript = SPOTTER / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
    if not transcript.exists():
        pytest.skip(f"the real transcripts are not on this machine ({transcript} is missing)")
    report = run_import(tmp_path / "home", "claude-code", transcript)
    assert report.problems == []
    nodes = nodes_of(tmp_path / "home", "8463c716-a2ea-4c14-9efa-87158ebd9f20")
    runs = [
        record
        for node in nodes.values()
        if node.metadata.get("evidence") == "tool"
        and (record := parse_tool_evidence(node.content)) is not None
        and record.name == "Bash"
        and record.input.startswith("mix test")
    ]
    assert len(runs) >= 5
    with_counts = [r for r in runs if any(c.endswith(("failures", "failure")) for c in r.counts)]
    assert with_counts, "no mix test run states its tests and failures"
    assert any(r.ok and r.counts[0].endswith(" 0 failures") for r in with_counts)
    failed = [r for r in runs if not r.ok]
    assert failed
    assert all(r.exit not in (None, 0) for r in failed)


def test_the_person_s_answer_to_a_question_the_agent_asked_is_kept_with_its_question(
    tmp_path: Path,
) -> None:
    c = Claude()
    ask = c.user(None, "Commit the renderer work.")
    question = "Pre-commit hook blocks on pre-existing credo issues. How should we proceed?"
    tool_input = {"questions": [{"question": question, "header": "Commit", "options": []}]}
    shown = f'User has answered your questions: "{question}"="main was clean; fix the issues".'
    structured = {
        "questions": tool_input["questions"],
        "answers": {question: "main was clean; fix the issues"},
    }
    _, result = call_and_result(c, ask, "AskUserQuestion", tool_input, shown, structured=structured)
    record = parse_tool_evidence(imported(tmp_path, c)[result].content)
    assert record is not None
    assert record.kind == "ask"
    assert record.excerpt == f"{question} → main was clean; fix the issues"
