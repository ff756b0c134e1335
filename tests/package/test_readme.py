"""The README's embedding example runs as written (on asyncio, and on trio as its comment says), it opens
with the commands CI runs, and its module tree is the package's."""

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


def module_tree() -> dict[str, list[str]]:
    """The README's module tree (the block closing "## Architecture"): each top-level entry (`actors/`),
    with the entries indented under it (`memory/`'s `format/`, `errors.py`, ...). An entry's names are
    what comes before its description (two spaces or more), comma-separated."""
    match = re.search(
        r"^## Architecture\n.*?^```\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M
    )
    assert match is not None, "the README's Architecture section draws the module tree"
    tree: dict[str, list[str]] = {}
    top = ""
    for line in match.group(1).splitlines():
        nested = line.startswith("  ")
        names = [name.strip() for name in re.split(r"\s{2,}", line.strip())[0].split(",")]
        if nested:
            tree[top] += names
        else:
            [top] = names
            tree[top] = []
    return tree


def _packages(parent: Path) -> set[str]:
    return {f"{p.name}/" for p in parent.iterdir() if (p / "__init__.py").is_file()}


def test_the_readme_s_module_tree_is_the_package_s() -> None:
    """Every entry names what is there, and every package is there: each at the top and under `memory/`,
    and each module of `memory/` (a layer of its own)."""
    root = README.parent
    tree = module_tree()
    for top, nested in tree.items():
        assert (root / top).is_dir(), top
        for name in nested:
            assert (root / top / name).exists(), f"{top}{name}"
    assert _packages(root) <= set(tree)
    memory = root / "memory"
    layers = _packages(memory) | {p.name for p in memory.glob("*.py") if not p.name.startswith("_")}
    assert set(tree["memory/"]) == layers
    assert "tests/" in tree  # a directory, not a package: listed all the same


def _named(pattern: str, text: str) -> set[str]:
    """The backquoted names of the one sentence `pattern` finds in `text`."""
    found = re.search(pattern, text, re.S)
    assert found is not None, pattern
    return set(re.findall(r"`([^`]+)`", found.group(1)))


def test_the_reserved_names_are_stated_as_the_code_has_them() -> None:
    """The metadata keys `append` refuses (the README's list) and the topic names no subject takes
    (docs/formats.md's) are the code's own sets."""
    from dagmem.memory.store import RESERVED_METADATA_KEYS
    from dagmem.memory.write import RESERVED_TOPIC_SLUGS

    readme = README.read_text(encoding="utf-8")
    assert _named(r"without dagmem's own keys (.*?);", readme) == set(RESERVED_METADATA_KEYS)
    formats = (README.parent / "docs" / "formats.md").read_text(encoding="utf-8")
    assert _named(r"(Five slugs are reserved.*?)\. A\s", formats) == set(RESERVED_TOPIC_SLUGS)
