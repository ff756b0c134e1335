"""Recall sits above the write: nothing in the write core or the workspace imports `memory.recall` (the
recall index is kept up to date by the workspace's `on_install` hook, which whoever opens it gives).
Checked on the source, every import statement, at any depth (a lazy import in a function counts too). And
one door attaches that hook: `open_for_writing`, which every write opens its workspace through."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dagmem.tests._source import ROOT, package_sources

LAYERS = ("memory/write", "memory/workspace")


def _imported(path: Path) -> set[str]:
    """Every module `path` imports, absolute (`dagmem.memory.recall._update`)."""
    package = ["dagmem", *path.relative_to(ROOT).with_suffix("").parts]
    if package[-1] == "__init__":
        package.pop()
    else:
        package.pop()  # a module's relative imports start from its package
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module":
            names.update(
                arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            )
    return names


def _is_recall(name: str) -> bool:
    return name == "dagmem.memory.recall" or name.startswith("dagmem.memory.recall.")


def test_the_import_parser_sees_relative_and_lazy_imports() -> None:
    names = _imported(ROOT / "actors" / "_runtime.py")
    assert any(_is_recall(name) for name in names)  # `from ..memory.recall import ...`
    names = _imported(ROOT / "memory" / "writing.py")
    assert "dagmem.memory.recall.RecallUpdater" in names  # an import inside a function


@pytest.mark.parametrize("layer", LAYERS)
def test_the_write_core_and_the_workspace_never_import_recall(layer: str) -> None:
    files = sorted((ROOT / layer).rglob("*.py"))
    assert files
    offenders = {
        str(path.relative_to(ROOT)): sorted(name for name in _imported(path) if _is_recall(name))
        for path in files
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def _hooked_opens(path: Path) -> list[int]:
    """The lines where `path` opens a `Workspace` with an install hook (`on_install=`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Workspace"
        and any(keyword.arg == "on_install" for keyword in node.keywords)
    ]


def test_only_open_for_writing_attaches_the_install_hook() -> None:
    """Every write outside a runtime opens its workspace through `memory.writing.open_for_writing` (and a
    runtime's writer actor through it too): no other module attaches recall's updater by hand."""
    hooked = {
        str(path.relative_to(ROOT)): lines for path in package_sources() if (lines := _hooked_opens(path))
    }
    assert list(hooked) == ["memory/writing.py"]
    assert len(hooked["memory/writing.py"]) == 1
