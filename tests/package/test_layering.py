"""The package's layering holds: every import of every module (lazy ones inside functions and the
type-checking ones included) is read with `ast`, and

- a package's private modules (`pkg._x`) are imported only from inside `pkg`: outside it, its
  `__init__` is the face;
- the package import graph is the layering map the docstrings of `dagmem/__init__.py` and
  `dagmem/memory/__init__.py` describe (encoded below as data): nothing imports back up.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import dagmem
import dagmem.memory
from dagmem.tests._source import ROOT, package_sources

# The shared vocabulary at the bottom of the domain, then each layer of `dagmem.memory` and what it may
# import (besides itself).
_VOCAB = {
    "memory.errors",
    "memory.faults",
    "memory.outcomes",
    "memory.settings",
    "memory.switch",
    "memory.text",
}
_BELOW_POLICY = _VOCAB | {
    "memory.format",
    "memory.trust",
    "memory.durable",
    "memory.store",
    "memory.workspace",
}
_CURRENCY = {"memory.currency", "memory.shapes", "memory.checkout"}
MEMORY: dict[str, set[str]] = {
    "memory": set(),  # the package's `__init__` is a docstring
    "memory.errors": set(),
    "memory.faults": {"memory.errors"},
    "memory.outcomes": {"memory.errors", "memory.faults"},
    "memory.settings": {"memory.errors", "memory.switch"},
    "memory.switch": set(),
    "memory.text": set(),  # pure: what words say, each language a table
    "memory.format": _VOCAB,
    "memory.trust": _VOCAB,  # pure: the hold rule, the instruction tripwire, scopes
    "memory.durable": _VOCAB | {"memory.format"},
    "memory.store": _VOCAB | {"memory.format", "memory.durable"},
    "memory.workspace": _VOCAB | {"memory.format", "memory.durable"},
    "memory.policy": _VOCAB | {"memory.format"},  # pure: no files
    "memory.currency": _VOCAB | {"memory.format"},  # pure: what is current, from the DAG alone
    "memory.checkout": _VOCAB | {"memory.format"},  # git, read from a checkout's files; merge facts
    "memory.shapes": _BELOW_POLICY | {"memory.currency"},  # the cache of session shapes
    "memory.recall": _BELOW_POLICY | _CURRENCY | {"memory.policy"},
    "memory.write": _BELOW_POLICY | _CURRENCY | {"memory.policy"},  # recall sits above write: a hook
    # Forget: the store, the workspace, the write core's claim rule and recall's rebuild.
    "memory.forget": _BELOW_POLICY | _CURRENCY | {"memory.recall", "memory.write"},
    "memory.writing": _BELOW_POLICY
    | _CURRENCY
    | {"memory.policy", "memory.recall", "memory.write", "memory.forget"},
    "memory.listing": _BELOW_POLICY | _CURRENCY | {"memory.policy", "memory.recall", "memory.write"},
    "memory.adopt": _BELOW_POLICY
    | _CURRENCY
    | {"memory.policy", "memory.recall", "memory.write", "memory.writing", "memory.forget"},
    # The independent oracle: the formats, the safe reads, the store and currency's pure rules, never the
    # writer's own code.
    "memory.audit": _VOCAB | {"memory.format", "memory.durable", "memory.store", "memory.currency"},
}
_DOMAIN = set(MEMORY)
_LEAVES = {"_version", "_console", "_lazy"}  # import nothing of dagmem: every layer may use them
_RUNTIME = _DOMAIN | _LEAVES | {"supervision", "actors"}
PACKAGES: dict[str, set[str]] = {
    "_version": set(),
    "_console": set(),
    "_lazy": set(),
    **MEMORY,
    "supervision": _DOMAIN,
    "actors": _DOMAIN | {"supervision"},
    "cluster": _RUNTIME,
    "serve": _RUNTIME,
    "view": _RUNTIME,
    "sim": _RUNTIME,
    "bench": _RUNTIME | {"sim", "cluster", "hooks"},
    "hooks": _DOMAIN | _LEAVES,  # a host's hook: the domain only (no runtime: one short process per event)
    "cli": _RUNTIME | {"cluster", "serve", "view", "sim", "bench", "hooks"},
    "__main__": {"_version", "cli", "hooks"},
    "dagmem": _RUNTIME,  # the root re-exports the public API (lazily); nothing imports it back
}


def _modules() -> Iterator[tuple[Path, list[str]]]:
    for path in package_sources():
        parts = path.relative_to(ROOT).with_suffix("").parts
        yield path, ["dagmem", *(parts[:-1] if parts[-1] == "__init__" else parts)]


def _is_module(dotted: list[str]) -> bool:
    where = ROOT.joinpath(*dotted[1:])
    return where.is_dir() or where.with_suffix(".py").is_file()


def _imports(path: Path, name: list[str]) -> Iterator[tuple[int, list[str]]]:
    """Every dagmem module `path` imports, absolute and dotted (`from pkg import mod` names `pkg.mod`)."""
    package = name if path.name == "__init__.py" else name[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = base + (node.module.split(".") if node.module else [])
            else:
                target = (node.module or "").split(".")
            for alias in node.names:
                named = [*target, alias.name]
                yield node.lineno, named if _is_module(named) else target


def _unit(dotted: list[str]) -> str:
    if len(dotted) == 1:
        return "dagmem"
    if dotted[1] == "memory" and len(dotted) > 2:
        return "memory." + dotted[2]
    return dotted[1]


def test_the_scan_sees_the_package() -> None:
    seen = {_unit(name) for _path, name in _modules()}
    assert {"actors", "cli", "memory.write", "memory.audit", "sim", "bench"} <= seen
    edges = {(_unit(name), _unit(t)) for path, name in _modules() for _l, t in _imports(path, name)}
    assert ("cli", "sim") in edges  # lazy and eager alike
    assert ("memory.write", "memory.format") in edges


def test_no_module_imports_a_private_module_of_another_package() -> None:
    offenders = []
    for path, name in _modules():
        for line, target in _imports(path, name):
            if target[0] != "dagmem":
                continue
            for i, part in enumerate(target[1:], start=1):
                if part.startswith("_") and not part.startswith("__") and _is_module(target[: i + 1]):
                    owner = target[:i]
                    if name[: len(owner)] != owner:
                        offenders.append(f"{path.relative_to(ROOT)}:{line}: {'.'.join(target[: i + 1])}")
                    break
    assert offenders == []


def test_the_package_import_graph_is_the_layering_map() -> None:
    unknown, upward = set(), []
    for path, name in _modules():
        me = _unit(name)
        if me not in PACKAGES:
            unknown.add(me)
            continue
        for line, target in _imports(path, name):
            if target[0] != "dagmem":
                continue
            them = _unit(target)
            if them != me and them not in PACKAGES[me] and them not in _LEAVES:
                upward.append(f"{path.relative_to(ROOT)}:{line}: {me} imports {them}")
    assert unknown == set(), "a package the layering map does not place: add it to the map and the docstring"
    assert upward == []


def test_the_docstrings_name_every_layer_of_the_map() -> None:
    top = dagmem.__doc__ or ""
    for package in PACKAGES:
        if package in {"dagmem", "__main__"} | _LEAVES or package.startswith("memory."):
            continue
        assert f"`dagmem.{package}`" in top, package
    domain = dagmem.memory.__doc__ or ""
    for unit in MEMORY:
        if unit != "memory":
            assert f"`{unit.removeprefix('memory.')}`" in domain, unit
