"""A host that embeds the runtime keeps a tool call with its result as tool evidence: `append(sid, "tool",
ToolEvidence(...).render(), metadata={"evidence": "tool"})`. The key is the host's to set (not one of
dagmem's own); such a row is a record (archived with origin `tool`, recalled as quoted material), a tool
row without it is not."""

from __future__ import annotations

from pathlib import Path

import pytest

import dagmem
from dagmem import FileSessionStore, Runtime
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import parse_tool_evidence, scan_archive
from dagmem.sim import check_home

pytestmark = pytest.mark.anyio


async def test_a_host_appends_tool_evidence_and_it_is_a_record(tmp_path: Path) -> None:
    record = dagmem.ToolEvidence(
        "Bash", "mix test 2>&1", ok=False, exit=2, counts=("12 tests, 1 failure",), excerpt="1) test mount"
    )
    text = record.render()
    assert parse_tool_evidence(text) == record
    async with Runtime.open(tmp_path) as rt:
        await rt.append("s", "user", "Why does the session live test fail?")
        evidence = await rt.append("s", "tool", text, metadata={"evidence": "tool"})
        plain = await rt.append("s", "tool", "[tool_use Bash] {}")  # no key: a tool row, never memory
        await rt.append("s", "assistant", "The mount test lacks a secret_key_base.")
        await rt.end_session("s")
        await rt.flush(force=True)
        hits = await rt.recall("Why does the session live test fail? mix test exit 2", session_id="s")
        context = dagmem.render_context(hits, await rt.core_async())
    frames = {
        f.node_id: f
        for f in scan_archive((tmp_path / "memory" / "sources" / "s.md").read_bytes(), "s").frames
    }
    assert frames[evidence].origin == "tool"
    assert frames[evidence].content == text
    assert plain not in frames
    assert '<quoted-material origin="tool">' in context
    workspace = read_workspace_id(tmp_path / "memory" / ".dagmem" / "workspace-id")
    report = check_home(FileSessionStore(tmp_path), tmp_path / "memory", workspace, drained=True)
    assert report.ok, report.violations
