"""Every lazy package face is written once, as its table: the runtime offers the table's names (its
`__all__` is derived from them), and the imports under `TYPE_CHECKING`, which the type checker reads
instead, bind exactly those names to the very objects the table loads. A face's `__all__` is exactly its
public names, and every one resolves."""

from __future__ import annotations
import __future__

import ast
import importlib
import types
from pathlib import Path
from typing import Any

import pytest

from dagmem._lazy import lazy
from dagmem.tests._source import ROOT, package_sources


def _lazy_faces() -> list[str]:
    """Every package whose `__init__.py` binds its names with `lazy(...)`."""
    return [
        ".".join(("dagmem", *path.parent.relative_to(ROOT).parts))
        for path in package_sources()
        if path.name == "__init__.py" and "lazy(" in path.read_text(encoding="utf-8")
    ]


FACES = _lazy_faces()


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


def type_checker_view(face: types.ModuleType) -> dict[str, Any]:
    """The names the face's `if TYPE_CHECKING:` block exports, each to the object it names, as a strict
    type checker reads them (the face shows it no `__all__`): an import under its own name (`from M import
    X as X`) and an assignment (`Y = X`) are exported; a plain import (`from M import X`, or `as` another
    name) is not."""
    assert face.__file__ is not None
    tree = ast.parse(Path(face.__file__).read_text(encoding="utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1, face.__name__
    bound: dict[str, Any] = {}
    exported: dict[str, Any] = {}
    for statement in blocks[0].body:
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


def test_every_lazy_face_is_found() -> None:
    assert {"dagmem", "dagmem.hooks", "dagmem.bench", "dagmem.memory.recall", "dagmem.memory.write"} <= set(
        FACES
    )
    assert len(FACES) == len(set(FACES))


@pytest.mark.parametrize("name", FACES)
def test_the_type_checker_sees_exactly_the_table(name: str) -> None:
    face = importlib.import_module(name)
    seen = type_checker_view(face)
    assert sorted(seen) == sorted(offered(face))
    for public in offered(face):
        assert getattr(face, public) is seen[public], public  # the table loads what the import names


def _plumbing(face: types.ModuleType, name: str, value: object) -> bool:
    """A public-looking name that is how the face is built, not what it offers: a subpackage or submodule
    under its own name, `from __future__`, the `lazy` helper, the `TYPE_CHECKING` flag."""
    own_module = isinstance(value, types.ModuleType) and value.__name__ == f"{face.__name__}.{name}"
    return own_module or isinstance(value, __future__._Feature) or value is lazy or name == "TYPE_CHECKING"


@pytest.mark.parametrize("name", FACES)
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
