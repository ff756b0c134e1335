"""A hook process imports only what its event needs (checked in a fresh interpreter, not timed; the
times are `dagmem bench hooks`'s): no command-line modules for any event, nothing of the read side or
pydantic for the events that only queue a transcript, no numpy or embedding model for a session's start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dagmem.cli import main
from dagmem.tests.hooks._claude import Transcript, wait_for_worker


def _modules(event: str, project: Path, payload: dict[str, object]) -> set[str]:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project)}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "dagmem", "hook", "claude-code", event],
        input=json.dumps(payload), capture_output=True, text=True, timeout=120, check=False, env=env, cwd=project,
    )  # fmt: skip
    assert done.returncode == 0
    return {
        line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")
    }


def test_each_hook_imports_only_what_its_event_needs(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "t" / "s.jsonl")
    t.assistant(t.user(None, "The build runs on the arm64 runners."), "Noted.")
    stop = _modules("Stop", tmp_path, t.payload("Stop"))
    wait_for_worker(tmp_path / ".dagmem")
    start = _modules("SessionStart", tmp_path, t.payload("SessionStart"))
    prompt = _modules("UserPromptSubmit", tmp_path, t.payload("UserPromptSubmit", prompt="Which runners?"))
    for names in (stop, start, prompt):
        assert not {n for n in names if n.startswith("dagmem.cli")}
    tops = {n.split(".")[0] for n in stop}
    assert not tops & {"numpy", "wordllama", "tiktoken", "pydantic", "anyio"}
    assert not {n for n in stop if n.startswith(("dagmem.memory.recall", "dagmem.memory.adopt"))}
    assert not {n.split(".")[0] for n in start} & {"numpy", "wordllama"}
    assert "numpy" in {n.split(".")[0] for n in prompt}  # the search, loaded where it is used


@pytest.mark.timeout(900)
def test_bench_hooks_reports_each_hook_beside_python_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "hooks", "--quick", "--json", "--out", str(tmp_path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert not printed["errors"]
    by_name = {r["name"]: r for r in printed["results"]}
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):
        for q in ("p50", "p95"):
            figure = by_name[f"fresh `dagmem hook claude-code {event}` {q} (baseline: python -c pass)"]
            assert figure["value"] > 0
            assert figure["baseline"] == pytest.approx(printed["raw"]["hooks"][f"pass_{q}_ms"], abs=0.1)
    assert printed["raw"]["hooks"]["log_lines"] == 0  # every hook served its event
