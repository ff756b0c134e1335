"""The `dagmem` command line, run as a user would: a real subprocess over a real home."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dagmem import FileSessionStore
from dagmem.cli.commands import COMMANDS
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import MARKER_KEY
from dagmem.tests._cli import dagmem_run


def dagmem(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return dagmem_run(*args, "--home", str(home))


def as_json(result: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(result.stdout)


def host_session(home: Path, sid: str, turns: int) -> list[str]:
    """A session written in dagmem's documented format by a host that does not embed the runtime."""
    store = FileSessionStore(home)
    return [
        store.append(sid, "user" if i % 2 == 0 else "assistant", f"{sid} turn {i} about sourdough bread").id
        for i in range(turns)
    ]


def test_demo_appends_forks_writes_and_shows(tmp_path: Path) -> None:
    result = dagmem("demo", "--json", home=tmp_path)
    assert result.returncode == 0, result.stderr
    report = as_json(result)
    assert len(report["branches"]) == 2
    assert report["written"]["records"] == 8
    assert report["topics"]
    text = dagmem("demo", home=tmp_path)  # a second run finds the session and owes nothing
    assert text.returncode == 0
    assert "written now: 0 records" in text.stdout


def test_write_then_status_then_verify(tmp_path: Path) -> None:
    host_session(tmp_path, "a", 6)
    host_session(tmp_path, "b", 3)
    status = as_json(dagmem("status", "--json", home=tmp_path))
    assert status["pending_turns"] == 9
    assert status["workspace_id"] is None  # read-only: status creates nothing
    due = as_json(dagmem("write", "--json", home=tmp_path))  # recent sessions, below threshold: not due
    assert due["exit"] == 0
    assert {s["outcome"] for s in due["sessions"]} == {"nothing-due"}
    written = dagmem("write", "--force", "--json", home=tmp_path)
    assert written.returncode == 0, written.stderr
    assert {s["session"]: s["records"] for s in as_json(written)["sessions"]} == {"a": 6, "b": 3}
    status = as_json(dagmem("status", "--json", home=tmp_path))
    assert status["pending_turns"] == 0
    assert status["last_outcome"] == "success"
    assert status["workspace_id"].startswith("w-")
    verify = dagmem("verify", "--strict", home=tmp_path)
    assert verify.returncode == 0, verify.stdout
    assert verify.stdout.strip().endswith("ok")


def test_write_refuses_an_invalid_session_names_it_and_writes_the_others(tmp_path: Path) -> None:
    host_session(tmp_path, "good", 4)
    bad = host_session(tmp_path, "bad", 4)
    broken = tmp_path / "sessions" / "bad" / "history" / "0000" / f"000002-a-{bad[1]}.json"
    broken.write_text("{ truncated")
    result = dagmem("write", "--force", "--json", home=tmp_path)
    assert result.returncode == 1
    sessions = {s["session"]: s for s in as_json(result)["sessions"]}
    assert sessions["good"]["outcome"] == "written"
    assert sessions["bad"]["outcome"] == "invalid"
    assert sessions["bad"]["reason_code"] == "INVALID_INPUT"
    assert str(broken) in sessions["bad"]["detail"]
    assert not (tmp_path / "memory" / "sources" / "bad.md").exists()
    assert (
        as_json(dagmem("status", "--json", home=tmp_path))["last_failure"]["reason_code"] == "INVALID_INPUT"
    )


def test_verify_finds_a_marker_without_install_and_repair_drops_it(tmp_path: Path) -> None:
    host_session(tmp_path, "s", 4)
    assert dagmem("write", "--force", home=tmp_path).returncode == 0
    extra = FileSessionStore(tmp_path).append("s", "user", "a later turn, marked by a bug")
    workspace_id = read_workspace_id(tmp_path / "memory" / ".dagmem" / "workspace-id")
    FileSessionStore(tmp_path).merge_node_metadata("s", {extra.id: {MARKER_KEY: workspace_id}})
    found = dagmem("verify", "--json", home=tmp_path)
    assert found.returncode == 1
    kinds = {(v["kind"], v["subject"]) for v in as_json(found)["violations"]}
    assert ("marker-without-consumption", f"s/{extra.id}") in kinds
    repaired = dagmem("verify", "--repair", "--json", home=tmp_path)
    assert repaired.returncode == 0
    assert as_json(repaired)["repaired"] == [f"s/{extra.id}"]
    assert MARKER_KEY not in FileSessionStore(tmp_path).load("s").nodes[extra.id].metadata
    # The repaired record is owed again, and the next write writes it.
    assert dagmem("verify", "--strict", home=tmp_path).returncode == 1
    assert dagmem("write", "--force", home=tmp_path).returncode == 0
    assert dagmem("verify", "--strict", home=tmp_path).returncode == 0


@pytest.mark.parametrize("command", [command.name for command in COMMANDS])
def test_every_command_has_help(command: str, tmp_path: Path) -> None:
    result = dagmem_run(command, "--help")
    assert result.returncode == 0
    assert "--home" in result.stdout


def test_status_and_verify_are_read_only(tmp_path: Path) -> None:
    host_session(tmp_path, "s", 2)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    leftover = tmp_path / "sessions" / "s" / f".meta.json.{dead.stdout.strip()}-0.tmp"  # a dead writer's temp
    leftover.write_text("partial")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    assert dagmem("status", home=tmp_path).returncode == 0
    assert dagmem("verify", home=tmp_path).returncode == 0
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert dagmem("write", "--force", home=tmp_path).returncode == 0
    assert not leftover.exists()  # a writer sweeps dead writers' temp files
