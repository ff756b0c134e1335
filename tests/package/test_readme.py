"""The README's embedding example runs as written (on asyncio, and on trio as its comment says)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def example() -> str:
    match = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert match is not None, "the README has a python example"
    return match.group(1)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_readme_example_runs(tmp_path: Path, backend: str) -> None:
    code = example().replace("anyio.run(main)", f'anyio.run(main, backend="{backend}")')
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "pending_turns=0" in result.stdout
    assert list((tmp_path / ".dagmem" / "memory" / "topics").glob("*.md"))


def test_the_readme_opens_with_the_two_commands_ci_runs() -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["./dev.sh sim", "./dev.sh test"]
    ci = (README.parent / ".ci" / "run").read_text()
    assert "./dev.sh test" in ci
