"""`DAGMEM_MEMORY=off` (and `Runtime.open(..., memory=False)`): every memory verb refuses with one line
before anything is opened or created; the commands that only look at a home still do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import dagmem
from dagmem.cli.commands import COMMANDS
from dagmem.memory.errors import MemoryOff
from dagmem.tests._cli import dagmem_run

_ARGS = {"recall": ["anything"], "import": ["claude-code", "t.jsonl"], "write": [], "core": []}
VERBS = sorted(c.name for c in COMMANDS if c.memory)


def test_the_memory_verbs_are_the_ones_that_write_or_recall() -> None:
    assert VERBS == ["core", "demo", "import", "mcp", "migrate", "recall", "reorganise", "write"]


@pytest.mark.parametrize("verb", VERBS)
def test_a_memory_verb_refuses_with_one_line_and_creates_nothing(tmp_path: Path, verb: str) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "DAGMEM_MEMORY": "off"}
    result = dagmem_run(verb, *_ARGS.get(verb, []), "--home", str(home), cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "memory is off" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_status_still_reads_a_home_with_memory_off(tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()
    env = {**os.environ, "DAGMEM_MEMORY": "off"}
    assert dagmem_run("status", "--home", str(tmp_path), env=env).returncode == 0


@pytest.mark.anyio
async def test_runtime_open_with_memory_off_raises_before_creating_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(MemoryOff, match="memory is off"):
        async with dagmem.Runtime.open(tmp_path / "home", memory=False):
            pass
    monkeypatch.setenv("DAGMEM_MEMORY", "off")
    with pytest.raises(MemoryOff):
        async with dagmem.Runtime.open(tmp_path / "home"):
            pass
    assert not (tmp_path / "home").exists()
