"""`memory/errors.py`'s docstring draws every exception class dagmem defines, at its place: each class under
its first base (indentation), with the file it lives in and its further bases ("also"). Walking every
module of the package here keeps the drawing from going stale."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path

import dagmem
import dagmem.memory.errors
from dagmem.tests._source import package_sources

ROOT = Path(dagmem.__file__).parent
LINE = re.compile(
    r"^(?P<indent> *)(?P<name>\w+)(?:  (?P<module>[\w/]+\.py))?(?:  \(also (?P<also>[\w, ]+)\))?(?:  -- .*)?$"
)


@dataclass(frozen=True)
class Drawn:
    parent: str | None
    module: str | None
    also: tuple[str, ...]


def drawn() -> dict[str, Drawn]:
    """The tree in the docstring: each class's parent (by indentation), module and further bases."""
    doc = dagmem.memory.errors.__doc__ or ""
    lines = doc.split("Exception tree:\n", 1)[1].splitlines()
    tree: dict[str, Drawn] = {}
    stack: list[tuple[int, str]] = []  # (indent, name) of the open ancestors
    for line in lines:
        if not line.strip():
            continue
        match = LINE.match(line)
        assert match, f"not a line of the tree: {line!r}"
        indent, name = len(match["indent"]), match["name"]
        assert indent % 4 == 0, line
        while stack and stack[-1][0] >= indent:
            stack.pop()
        assert not stack or stack[-1][0] == indent - 4, f"indented too far: {line!r}"
        assert name not in tree, f"{name} is drawn twice"
        also = tuple(a.strip() for a in match["also"].split(",")) if match["also"] else ()
        tree[name] = Drawn(stack[-1][1] if stack else None, match["module"], also)
        stack.append((indent, name))
    return tree


def defined() -> dict[str, type[BaseException]]:
    """Every exception class a module of the package defines (the tests' own excluded)."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages([str(ROOT)], "dagmem."):
        if info.name.startswith(("dagmem.tests", "dagmem.conftest")):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == info.name:
                assert found.setdefault(value.__name__, value) is value, f"two classes named {value.__name__}"
    return found


def test_every_exception_class_is_drawn_at_its_place() -> None:
    tree, classes = drawn(), defined()
    assert len(classes) > 30
    assert set(classes) <= set(tree), f"not drawn: {sorted(set(classes) - set(tree))}"
    for name, cls in classes.items():
        place = tree[name]
        first, *rest = cls.__bases__
        assert place.parent == first.__name__, (
            f"{name}: drawn under {place.parent}, its base is {first.__name__}"
        )
        assert place.also == tuple(b.__name__ for b in rest), name
        assert place.module, name
        assert "dagmem." + place.module.removesuffix(".py").replace("/", ".") == cls.__module__, name


def test_the_tree_draws_nothing_that_is_gone() -> None:
    tree, classes = drawn(), defined()
    builtin = {name for name, place in tree.items() if place.module is None}
    assert builtin == {"BaseException", "Exception"}
    assert all(isinstance(getattr(builtins, name), type) for name in builtin)
    assert set(tree) - builtin == set(classes)


def test_no_exception_class_hides_in_a_function() -> None:
    # Classes a module defines inside a function or class are not module attributes: none derives from an
    # exception, or the walk above could not see it.
    names = set(drawn())
    for path in package_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and id(node) not in top:
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                assert not bases & names, f"{path}: {node.name} is an exception defined out of reach"
