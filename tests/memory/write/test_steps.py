"""A working session's blocks: a tool call's evidence joins the step that made it, narration never makes a
block alone, the file an edit changed names the page, and a sub-agent's prompt is the agent's words."""

from __future__ import annotations

from pathlib import Path

from dagmem import FileSessionStore
from dagmem.memory.format import ArchiveRecord, ToolEvidence, parse_topic
from dagmem.memory.write._exchanges import exchanges
from dagmem.memory.writing import write_home


def record(n: int, role: str, text: str, at: float = 1_800_000_000.0) -> ArchiveRecord:
    return ArchiveRecord("s", f"n{n}", role, n, at + n, text)


def tool(n: int, name: str, what: str, ok: bool = True, output: str = "") -> ArchiveRecord:
    return record(n, "tool", ToolEvidence(name, what, ok, None, (), output).render())


def test_tool_evidence_joins_the_step_that_made_it_and_narration_never_stands_alone() -> None:
    records = [
        record(1, "user", "Fix the failing stats test."),
        record(2, "assistant", "Let me run the tests:"),
        tool(3, "Bash", "go test ./...", False, "FAIL"),
        record(4, "assistant", "The default format is wrong. Let me fix it:"),
        tool(5, "Edit", "cmd/stats.go"),
        tool(6, "Bash", "go test ./..."),
        record(7, "assistant", "Perfect!"),
    ]
    groups = [[r.node_id for r in group] for group in exchanges(records)]
    assert groups == [["n1", "n2", "n3"], ["n4", "n5", "n6", "n7"]]


def test_a_long_run_of_tool_calls_is_cut_into_steps_of_a_few_calls() -> None:
    records = [record(1, "assistant", "Let me read every module:")]
    records += [tool(n, "Read", f"lib/m{n}.ex") for n in range(2, 12)]
    groups = exchanges(records)
    assert all(sum(r.role == "tool" for r in group) <= 4 for group in groups)
    assert [r.node_id for group in groups for r in group] == [r.node_id for r in records]


def test_the_file_an_edit_changed_names_the_page(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    store.append("s", "user", "The token counts are dropped from the page; fix it please.")
    store.append("s", "assistant", "Let me look at where they are made:")
    evidence = ToolEvidence("Edit", "claude_code_log/renderer.py", True, None, (), "+ tokens = usage.total")
    store.append("s", "tool", evidence.render(), metadata={"evidence": "tool"})
    assert [r.outcome for r in write_home(tmp_path, force=True)] == ["written"]
    names = sorted(p.name for p in (tmp_path / "memory" / "topics").glob("*.md"))
    assert "renderer-py.md" in names
    page = parse_topic(
        (tmp_path / "memory" / "topics" / "renderer-py.md").read_text(), "topics/renderer-py.md"
    )
    assert page.title == "renderer.py"


def test_a_sub_agents_prompt_is_quoted_as_the_agents_words(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    store.append("s", "user", "Count the modules of the repository, please.", origin="assistant")
    store.append("s", "assistant", "There are seven modules.")
    assert [r.outcome for r in write_home(tmp_path, force=True)] == ["written"]
    text = "".join(p.read_text() for p in (tmp_path / "memory" / "topics").glob("*.md"))
    assert "Agent: “Count the modules" in text
    assert "User: “Count the modules" not in text
