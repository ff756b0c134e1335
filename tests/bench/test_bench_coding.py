"""`dagmem bench coding`: the pieces checked by hand (which line is a prompt, the timestamp rewrite, the
replay's event order on a tiny transcript with a sub-agent and a compaction, the judge-free scoring, the
baseline's budget), then the `--quick` run (the checkout's own three projects) end to end through the
command: its report's documented shape, and figures that add up."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from dagmem.bench import _coding as coding
from dagmem.bench import _coding_data as data
from dagmem.bench import _coding_lines as lines
from dagmem.bench._coding_baseline import SEPARATOR, Baseline, budgeted
from dagmem.bench._coding_hooks import Answer
from dagmem.bench._coding_plan import Fire, Write, plan
from dagmem.bench._coding_replay import ProjectRun, _Live, _Replay
from dagmem.bench._coding_score import AFTER, METHODS, Row, answered, compacted_context, summary
from dagmem.bench._coding_shape import is_narration
from dagmem.cli import main
from dagmem.memory.errors import InvalidInput
from dagmem.tests._bench_shape import assert_documented_shape

SESSION = "5e551011-0000-4000-8000-000000000001"


def _line(kind: str, n: int, content: Any = None, **extra: Any) -> dict[str, Any]:
    line: dict[str, Any] = {
        "parentUuid": None,
        "isSidechain": False,
        "sessionId": SESSION,
        "type": kind,
        "uuid": f"00000000-0000-4000-8000-{n:012d}",
        "timestamp": f"2025-01-01T10:00:{n:02d}.000Z",
        **extra,
    }
    if content is not None:
        role = "assistant" if kind == "assistant" else "user"
        line["message"] = {"role": role, "content": content}
    return line


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def _result(text: str) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": "t1", "content": text}]


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def tiny(tmp_path: Path) -> data.Session:
    """A session: a typed prompt, a sub-agent (its own file), an interrupt marker, a slash command, a
    background task's notification, a compaction (with its compaction agent's file), a last prompt."""
    main_file = tmp_path / "src" / f"{SESSION}.jsonl"
    agents = main_file.parent / SESSION / "subagents"
    _write(
        main_file,
        [
            {"type": "file-history-snapshot", "snapshot": {"timestamp": "2025-01-01T09:00:00.000Z"}},  # 1
            _line("user", 2, "Map the parser for me, with a sub-agent."),  # 2
            _line("assistant", 3, [{"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "map"}}]),
            _line("user", 4, _result("The parser is in parse.go."), toolUseResult={"agentId": "a1"}),  # 4
            _line("assistant", 5, _text("The parser is in parse.go.")),  # 5
            _line("user", 6, _text("[Request interrupted by user for tool use]")),  # 6
            _line("user", 7, "<command-name>/review</command-name>\n<command-args>parse.go</command-args>"),
            _line("assistant", 8, _text("Reviewed.")),  # 8
            _line("user", 9, "<task-notification>done</task-notification>"),  # 9: Claude Code's, after a Stop
            _line("assistant", 10, _text("Noted.")),  # 10
            _line("system", 11, subtype="compact_boundary", compactMetadata={"trigger": "manual"}),  # 11
            _line("user", 12, "This session is being continued...", isCompactSummary=True),  # 12
            _line("assistant", 13, _text("Carrying on.")),  # 13
            _line("user", 14, "did you push?"),  # 14
            _line("assistant", 15, _text("Yes.")),  # 15
        ],
    )  # fmt: skip
    _write(agents / "agent-a1.jsonl", [_line("user", 20, "map", isSidechain=True), _line("assistant", 21, _text("parse.go"), isSidechain=True)])  # fmt: skip
    _write(agents / "agent-acompact-x.jsonl", [_line("user", 30, "summarise", isSidechain=True)])
    return data.sessions_of("src", tmp_path)[0]


def _shown(step: Write | Fire) -> str:
    if isinstance(step, Write):
        return f"{'agent-' + step.agent if step.agent else 'main'}:{step.number}"
    detail = step.fields.get("prompt") or step.fields.get("source") or step.fields.get("trigger") or ""
    detail = detail or step.fields.get("agent_id") or step.fields.get("reason") or ""
    return f"{step.event}({detail})" + ("+wait" if step.wait else "")


def test_the_plan_fires_each_event_where_claude_code_does(tiny: data.Session) -> None:
    assert [_shown(s) for s in plan(tiny)] == [
        "SessionStart(startup)",
        "main:1",
        "UserPromptSubmit(Map the parser for me, with a sub-agent.)",
        "main:2",
        "main:3",
        "agent-a1:1", "agent-a1:2", "SubagentStop(a1)+wait",  # the whole file, before the result naming it
        "main:4",
        "main:5",
        "main:6",  # the interrupt marker: nobody typed it, and Claude Code fires no Stop on an interrupt
        "UserPromptSubmit(/review parse.go)",  # a slash command, as the person typed it
        "main:7",
        "main:8",
        "Stop()+wait",  # a background task's notification starts the agent again: its turn had ended
        "main:9",
        "main:10",
        "PreCompact(manual)",  # no wait here: the product must wait itself before the compact start
        "agent-acompact-x:1",
        "main:11",
        "main:12",
        "SessionStart(compact)",
        "main:13",
        "Stop()+wait",
        "UserPromptSubmit(did you push?)",
        "main:14",
        "main:15",
        "Stop()+wait",
        "SessionEnd(prompt_input_exit)+wait",
    ]  # fmt: skip
    boundaries = [s.number for s in plan(tiny) if isinstance(s, Write) and s.boundary]
    assert boundaries == [11]


def test_inline_sidechain_lines_are_written_in_order_then_subagent_stop(tmp_path: Path) -> None:
    _write(
        tmp_path / "p" / f"{SESSION}.jsonl",
        [
            _line("user", 1, "go"),
            _line("user", 2, "task", isSidechain=True),
            _line("assistant", 3, _text("found"), isSidechain=True),
            _line("user", 4, _result("found")),
            _line("assistant", 5, _text("done")),
        ],
    )
    shown = [_shown(s) for s in plan(data.sessions_of("p", tmp_path)[0])]
    assert shown == [
        "SessionStart(startup)", "UserPromptSubmit(go)", "main:1", "main:2", "main:3", "SubagentStop()+wait",
        "main:4", "main:5", "Stop()+wait", "SessionEnd(prompt_input_exit)+wait",
    ]  # fmt: skip


class _Recorder:
    """Hooks that only record what the live files held when each event fired."""

    def __init__(self, live: _Live, home: Path) -> None:
        self.live = live
        self.home = home  # no worker ever runs there: it is always idle
        self.seen: list[tuple[str, dict[str, Any], dict[str, int]]] = []

    def run(self, event: str, payload: dict[str, Any]) -> Answer:
        held = {p.name: len(p.read_text().splitlines()) for p in self.live.folder.rglob("*.jsonl")}
        self.seen.append((event, payload, held))
        return Answer(f"context of {event} {payload.get('source', '')}".strip())

    def wait_for_worker(self) -> None:
        return None


def test_the_replay_writes_each_line_before_or_after_its_event(tiny: data.Session, tmp_path: Path) -> None:
    live = _Live(tmp_path / "claude" / "projects" / "-p")
    recorder = _Recorder(live, tmp_path / "home")
    run = ProjectRun("p")
    _Replay(run, recorder, live, tmp_path).session(tiny)  # type: ignore[arg-type]
    live.close()
    main_name = f"{SESSION}.jsonl"
    by_event = [
        (event, held.get(main_name, 0), held.get("agent-a1.jsonl", 0)) for event, _p, held in recorder.seen
    ]
    assert by_event[:3] == [("SessionStart", 0, 0), ("UserPromptSubmit", 1, 0), ("SubagentStop", 3, 2)]
    compact = next(i for i, (event, p, _h) in enumerate(recorder.seen) if p.get("source") == "compact")
    assert recorder.seen[compact][2][main_name] == 12  # the boundary and its summary are written
    assert recorder.seen[compact - 1][0] == "PreCompact"
    assert recorder.seen[compact - 1][2][main_name] == 10
    assert [event for event, _p, _h in recorder.seen[-2:]] == ["Stop", "SessionEnd"]
    _event, payload, _held = recorder.seen[2]
    assert payload["agent_transcript_path"].endswith(f"{SESSION}/subagents/agent-a1.jsonl")
    assert payload["stop_hook_active"] is False
    assert {"session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode"} <= set(payload)
    assert run.compactions_busy == 0
    assert run.compactions == {
        SESSION: [(run.written[(tiny.path.resolve(), 11)][1], "context of SessionStart compact")]
    }
    # Every line was written as in the source but for its own timestamp, set to when it was written.
    written = (live.folder / main_name).read_text().splitlines()
    source = tiny.path.read_text().splitlines()
    assert len(written) == len(source) == 15
    assert written[0] == source[0]  # a snapshot's nested timestamp is not the line's own
    for mine, theirs in zip(written[1:], source[1:], strict=True):
        a, b = json.loads(mine), json.loads(theirs)
        assert a.pop("timestamp") != b.pop("timestamp")
        assert a == b


def test_the_timestamp_rewrite_keeps_every_other_byte() -> None:
    raw = '{"message":{"content":"a \\"timestamp\\": x","timestamp":"inner"},"type": "user" , "timestamp" : "old","n":1}'
    out = lines.with_timestamp(raw, "2026-01-01T00:00:00.000Z")
    assert out == raw.replace('"old"', '"2026-01-01T00:00:00.000Z"')
    assert lines.with_timestamp('{"timestamp": 5, "a": "b"}', "x") == '{"timestamp": 5, "a": "b"}'
    assert lines.with_timestamp("not json", "x") == "not json"


def test_which_lines_the_person_typed() -> None:
    def typed(content: Any, **extra: Any) -> str | None:
        return lines.typed_prompt(_line("user", 1, content, **extra))

    assert typed("hello") == "hello"
    assert typed([{"type": "text", "text": "<ide_opened_file>a.py</ide_opened_file>"}, {"type": "text", "text": "fix it"}]) == "fix it"  # fmt: skip
    assert typed("<command-message>init</command-message>\n<command-name>/init</command-name>") == "/init"
    assert typed("<command-name>clear</command-name><command-args></command-args>") == "/clear"
    for chrome in ("[Request interrupted by user]", "<task-notification>x</task-notification>",
                   "<local-command-stdout></local-command-stdout>", "<bash-input>ls</bash-input>"):  # fmt: skip
        assert typed(chrome) is None
        assert lines.opens_turn(_line("user", 1, chrome))
        assert lines.is_interrupt(_line("user", 1, chrome)) == chrome.startswith("[Request interrupted")
    assert typed("x", isMeta=True) is None
    assert typed("x", isCompactSummary=True) is None
    assert typed("x", isSidechain=True) is None
    assert typed(_result("out")) is None


def test_a_turns_text_for_the_baseline_holds_no_tool_output_or_thinking_unless_asked() -> None:
    said = _line("assistant", 1, [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Use X."},
                                  {"type": "tool_use", "name": "Bash", "input": {"command": "make"}}])  # fmt: skip
    assert lines.text_turn(said) == "Use X."
    assert lines.text_turn(said, tools=True) == 'Use X.\nBash {"command": "make"}'
    assert lines.text_turn(_line("user", 2, _result("ok 3 tests"))) == ""
    assert lines.text_turn(_line("user", 2, _result("ok 3 tests")), tools=True) == "ok 3 tests"
    assert lines.text_turn(_line("user", 3, "map it", isSidechain=True)) == "map it"  # a sub-agent's task


def test_a_key_counts_only_when_it_is_in_the_context_whatever_its_case() -> None:
    context = (
        "<memory-context>\nRun `MIX COMPILE --warnings-as-errors` then mix credo --strict\n</memory-context>"
    )
    assert answered(context, ["mix compile --warnings-as-errors", "mix credo --strict"])
    assert not answered(context, ["mix compile --warnings-as-errors", "mix dialyzer"])
    assert not answered("", ["anything"])
    assert answered("", [])  # no key: nothing is missing


def test_the_baseline_joins_the_best_turns_and_cuts_the_last_at_the_budget() -> None:
    assert budgeted(["aaaa", "bbbb", "cccc"], 100) == f"aaaa{SEPARATOR}bbbb{SEPARATOR}cccc"
    assert budgeted(["aaaa", "bbbb", "cccc"], 7) == f"aaaa{SEPARATOR}b"
    assert len(budgeted(["a" * 50, "b" * 50], 60)) == 60
    assert budgeted(["aaaa"], 0) == ""
    base = Baseline(["the deploy uses port 8080", "unrelated chatter about lunch", "deploy deploy rollback"])
    ranked = base.ranked("how do we deploy")
    assert ranked[0] == "deploy deploy rollback"
    assert "unrelated chatter about lunch" not in ranked  # no term in common: not a match
    assert base.context("how do we deploy", 10) == "deploy dep"
    assert Baseline([]).context("anything", 100) == ""


def test_after_compaction_counts_only_evidence_said_before_a_boundary(tmp_path: Path) -> None:
    source = tmp_path / "spotter" / "s.jsonl"
    run = ProjectRun("spotter")
    run.written = {(source.resolve(), n): ("s", n) for n in range(1, 21)}
    run.compactions = {"s": [(10, "post-compaction context")]}

    def question(*evidence: int) -> data.Question:
        return data.Question("q", "dev", "spotter", "k", "w", "?", "", ("x",), tuple(("spotter/s.jsonl", n) for n in evidence))  # fmt: skip

    assert compacted_context(question(3, 9), run, tmp_path) == "post-compaction context"
    assert compacted_context(question(3, 11), run, tmp_path) is None  # one line after the boundary
    assert compacted_context(question(99), run, tmp_path) is None  # never written
    assert compacted_context(question(), run, tmp_path) is None


def test_narration_is_a_short_assistant_turn_opening_with_one_of_the_listed_words() -> None:
    assert is_narration("assistant", "Let me look at the stats command.")
    assert is_narration("assistant", "Now I'll wire the flag in.")
    assert is_narration("assistant", "ok, running the tests")
    assert not is_narration("assistant", "Goodness, the parser is in parse.go.")
    assert not is_narration("user", "Let me know when it is done.")
    assert not is_narration("assistant", "Let me explain: " + "x" * 300)


def test_sets_are_read_apart_and_all_reports_each_and_both(tmp_path: Path) -> None:
    for name in ("spotter", "ccl"):
        for which in data.SETS:
            item = {"id": f"{name}-{which}", "project": "ours/gocli", "kind": "k", "where": "w", "question": "?",
                    "keys": ["a"], "evidence": [{"file": "ours/gocli/x.jsonl", "line": 1}]}  # fmt: skip
            (tmp_path / f"{name}-{which}.json").write_text(json.dumps([item]))
    dev = data.load_questions(["dev"], devsets=tmp_path)
    assert [q.id for q in dev] == ["spotter-dev", "ccl-dev"]
    both = data.load_questions(data.SETS, devsets=tmp_path)
    assert [q.set for q in both] == ["dev", "dev", "unseen", "unseen"]
    rows = [Row(q, dict.fromkeys(METHODS, q.set == "dev"), 0) for q in both]
    scopes = coding._scopes(rows)
    assert list(scopes) == ["dev", "unseen", "overall"]
    assert summary(scopes["overall"])["memory"] == 0.5
    assert summary(scopes["dev"])[AFTER] is None


def test_no_transcripts_is_one_line_naming_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(data, "DEVSETS", tmp_path / "checkout" / "devsets" / "coding")
    with pytest.raises(InvalidInput, match="--data DIR"):
        data.transcripts_root(None, environ={})
    with pytest.raises(InvalidInput, match="--data"):
        data.transcripts_root(tmp_path / "missing", environ={})
    assert data.transcripts_root(None, environ={"DAGMEM_TRANSCRIPTS": str(tmp_path)}) == tmp_path


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("bench-coding")
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = main(["bench", "coding", "--quick", "--json", "--out", str(out)])
    assert status == 0
    return json.loads(buffer.getvalue()), out


def test_the_quick_run_reports_in_the_documented_shape(quick: tuple[dict[str, Any], Path]) -> None:
    printed, out = quick
    assert_documented_shape(printed, out)
    assert printed["benchmarks"] == ["coding"]
    names = [r["name"] for r in printed["results"]]
    for needle in ("memory hit rate (dev", "SessionStart alone hit rate", "UserPromptSubmit hook wall time p50",
                   "narration-only blocks", "injected chars p50, UserPromptSubmit", "brief.md"):  # fmt: skip
        assert any(needle in n for n in names), needle
    goals = {r["goal"] for r in printed["results"]}
    assert {
        "ratio >= 1",
        "value >= 0.2",
        "value <= 3000",
        "value >= 0.25",
        "value <= 0",
        "ratio <= 12",
    } <= goals
    assert (out / "bench.md").read_text().count("### hit rates, dev") == 1


def test_the_quick_run_scores_what_the_hooks_injected(quick: tuple[dict[str, Any], Path]) -> None:
    printed, out = quick
    raw = printed["raw"]["coding"]
    questions = data.load_questions(["dev"], data.OURS)
    records = [json.loads(line) for line in (out / "coding-contexts.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == [q.id for q in questions]
    assert raw["questions"] == len(questions)
    for record, question in zip(records, questions, strict=True):
        contexts = record["contexts"]
        assert record["hit"]["memory"] == answered(contexts["user_prompt_submit"], question.keys)
        assert record["hit"]["start"] == answered(contexts["session_start"], question.keys)
    overall = raw["scored"]["dev"]["summary"]
    assert overall["memory"] == round(sum(r["hit"]["memory"] for r in records) / len(records), 3)
    assert set(raw["scored"]["dev"]["project"]) == set(data.OURS)
    # The hooks ran as Claude Code runs them, and each ran without a problem.
    projects = raw["projects"]
    assert projects["ours/rustlib"]["events"]["SubagentStop"] == 1  # its inline sub-agent
    for name in data.OURS:
        events = projects[name]["events"]
        assert events["SessionStart"] == 2  # the replayed session's start, then the new one's
        assert events["SessionEnd"] == 1
        assert projects[name]["shape"]["blocks"] > 0  # the replay wrote memory
    assert raw["problems"] == 0, [p["problems_first"] for p in projects.values()]
    assert raw["log_lines"] == 0, [p["log_first"] for p in projects.values()]
    assert raw["hooks_ms"]["UserPromptSubmit"]["n"] >= len(questions)
    assert raw["pass_ms"]["n"] == sum(ms["n"] for ms in raw["hooks_ms"].values())  # one beside each hook


def test_the_quick_run_measures_the_git_axis_beside_the_plain_ranking(
    quick: tuple[dict[str, Any], Path],
) -> None:
    """Two dev-set transcripts replayed in two worktrees on two branches, then merged: before the merge
    each side's answering hits are labelled with their branch (the plain ranking labels none), after it
    they are the project's; the other worktree finds what one established (a home per worktree does not);
    a file renamed or rewritten since is labelled; the check's cost is measured on and off."""
    printed, _out = quick
    git = printed["raw"]["coding"]["git"]
    assert git["problems"] == []
    assert git["unmerged_labelled"]["dagmem"]["n"] > 0
    assert git["unmerged_labelled"]["dagmem"]["rate"] == 1.0
    assert git["unmerged_labelled"]["plain"]["rate"] == 0.0
    assert git["merged_unlabelled"]["dagmem"]["rate"] == 1.0
    assert git["shared_answered"]["dagmem"]["rate"] > git["shared_answered"]["split"]["rate"]
    assert git["code_labelled"]["dagmem"]["rate"] == 1.0
    assert git["code_labelled"]["plain"]["rate"] == 0.0
    assert (
        git["hooks_ms"]["UserPromptSubmit, checks on"]["n"]
        == git["hooks_ms"]["UserPromptSubmit, checks off"]["n"]
    )
    names = [r["name"] for r in printed["results"]]
    assert any(
        n.startswith("coding git: UserPromptSubmit hook wall time p50 with the code check on") for n in names
    )
