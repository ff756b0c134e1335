"""Every package face is written once. A lazy face's is its table: the runtime offers the table's names
(its `__all__` is derived from them), and the imports under `TYPE_CHECKING`, which the type checker reads
instead, bind exactly those names to the very objects the table loads. An eager face's is its imports:
its `__all__` (`eager(globals())`) is exactly what they export to the type checker. A face's `__all__` is
exactly its public names, and every one resolves."""

from __future__ import annotations
import __future__

import ast
import importlib
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from dagmem._lazy import eager, lazy
from dagmem.tests._source import ROOT, package_sources


def _faces(built_by: str) -> list[str]:
    """Every package whose `__init__.py` builds its face with `built_by` (`lazy(` or `eager(`)."""
    return [
        ".".join(("dagmem", *path.parent.relative_to(ROOT).parts))
        for path in package_sources()
        if path.name == "__init__.py" and built_by in path.read_text(encoding="utf-8")
    ]


FACES = _faces("lazy(")
EAGER = _faces("eager(globals())")


def offered(face: types.ModuleType) -> list[str]:
    """The face's `__all__`: derived at run time, so only its namespace holds it (the type checker is not
    shown it)."""
    names: list[str] = vars(face)["__all__"]
    return names


def _imported(package: str, statement: ast.ImportFrom, name: str) -> Any:
    """What `from MODULE import name` binds, as the statement would at run time: an attribute of the
    module, else its submodule."""
    base = importlib.util.resolve_name("." * statement.level + (statement.module or ""), package)
    module = importlib.import_module(base)
    if hasattr(module, name):
        return getattr(module, name)
    return importlib.import_module(f"{base}.{name}")


def _body(face: types.ModuleType) -> list[ast.stmt]:
    assert face.__file__ is not None
    return ast.parse(Path(face.__file__).read_text(encoding="utf-8")).body


def type_checking_block(face: types.ModuleType) -> list[ast.stmt]:
    """The statements of a lazy face's `if TYPE_CHECKING:` block (the type checker shows it no `__all__`)."""
    blocks = [
        node
        for node in _body(face)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1, face.__name__
    return blocks[0].body


def type_checker_view(face: types.ModuleType, statements: Sequence[ast.stmt]) -> dict[str, Any]:
    """The names `statements` (of the face) export, each to the object it names, as a strict type checker
    reads them: an import under its own name (`from M import X as X`) and an assignment (`Y = X`) are
    exported; a plain import (`from M import X`, or `as` another name) is not."""
    bound: dict[str, Any] = {}
    exported: dict[str, Any] = {}
    for statement in statements:
        if isinstance(statement, ast.ImportFrom):
            for alias in statement.names:
                bound[alias.asname or alias.name] = _imported(face.__name__, statement, alias.name)
                if alias.asname == alias.name:
                    exported[alias.name] = bound[alias.name]
        else:
            assert isinstance(statement, ast.Assign), ast.dump(statement)
            [target], value = statement.targets, statement.value
            assert isinstance(target, ast.Name), ast.dump(statement)
            assert isinstance(value, ast.Name), ast.dump(statement)
            exported[target.id] = bound[value.id]
    return exported


def test_every_face_is_found() -> None:
    assert {"dagmem", "dagmem.hooks", "dagmem.bench", "dagmem.memory.recall", "dagmem.memory.write"} <= set(
        FACES
    )
    assert {"dagmem.actors", "dagmem.cluster", "dagmem.memory.policy", "dagmem.sim", "dagmem.cli"} <= set(
        EAGER
    )
    assert len(FACES + EAGER) == len(set(FACES + EAGER))


@pytest.mark.parametrize("name", FACES)
def test_the_type_checker_sees_exactly_the_table(name: str) -> None:
    face = importlib.import_module(name)
    seen = type_checker_view(face, type_checking_block(face))
    assert sorted(seen) == sorted(offered(face))
    for public in offered(face):
        assert getattr(face, public) is seen[public], public  # the table loads what the import names


@pytest.mark.parametrize("name", EAGER)
def test_an_eager_face_offers_exactly_what_its_imports_export(name: str) -> None:
    face = importlib.import_module(name)
    bindings = [statement for statement in _body(face) if isinstance(statement, ast.ImportFrom | ast.Assign)]
    seen = type_checker_view(face, bindings)
    assert sorted(seen) == offered(face)
    for public in offered(face):
        assert getattr(face, public) is seen[public], public


def _plumbing(face: types.ModuleType, name: str, value: object) -> bool:
    """A public-looking name that is how the face is built, not what it offers: a subpackage or submodule
    under its own name, `from __future__`, the `lazy` and `eager` helpers, the `TYPE_CHECKING` flag."""
    own_module = isinstance(value, types.ModuleType) and value.__name__ == f"{face.__name__}.{name}"
    helper = value is lazy or value is eager
    return own_module or helper or isinstance(value, __future__._Feature) or name == "TYPE_CHECKING"


@pytest.mark.parametrize("name", FACES + EAGER)
def test_all_is_exactly_the_public_names_of_the_face(name: str) -> None:
    # dir() and getattr, not vars(): the names load on first use (a fresh import loads none of them).
    face = importlib.import_module(name)
    public = {
        attribute
        for attribute in dir(face)
        if not attribute.startswith("_") and not _plumbing(face, attribute, getattr(face, attribute))
    }
    assert sorted(offered(face)) == sorted(public)
    assert len(set(offered(face))) == len(offered(face))
