"""Package faces, each written once. A lazy face names what it offers and each name loads its module on
first use, so a process pays only for the surfaces it touches (`import dagmem` loads no numpy, a hook no
pydantic); an eager face imports its names (`from ._x import X as X`, what the type checker exports) and
`eager(globals())` derives its `__all__` from them (tests/package/test_faces.py holds the two together).

A lazy face's table is the one list of what it offers: its `__getattr__`, `__dir__` and `__all__` come
from it. The type checker, which runs nothing, reads the same names as imports under `TYPE_CHECKING`, and
tests/package/test_faces.py holds those to the table. The runtime's part sits in the `else:` branch, out
of the type checker's sight: it would read a module `__getattr__` as answering any name (a name missing
from the imports would go unnoticed).

    if TYPE_CHECKING:
        from ._hit import Hit as Hit
        from ._embed import MODEL
        EMBED_MODEL = MODEL  # another name: assigned, as an import under another name is not exported
    else:
        __getattr__, __dir__, __all__ = lazy(
            __name__, globals(), {"Hit": "._hit", "EMBED_MODEL": "._embed:MODEL"}
        )

A table value is `MODULE` (its attribute of the same name), `MODULE:ATTRIBUTE` (another name) or `MODULE:`
(the module itself); a relative MODULE is relative to the package. A leaf: it imports nothing of dagmem,
so every layer may use it."""

from __future__ import annotations
import __future__

import sys

TYPE_CHECKING = False  # not `typing`'s: importing typing costs a fresh process about 2 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["eager", "lazy"]


def lazy(
    package: str, namespace: dict[str, Any], table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The `__getattr__`, `__dir__` and `__all__` of `package` (whose globals are `namespace`) for `table`."""

    def __getattr__(name: str) -> Any:
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, colon, attribute = where.partition(":")
        module = _load(module_name, package)
        value = module if colon and not attribute else getattr(module, attribute or name)
        namespace[name] = value  # once: later lookups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__, sorted(table)


def eager(namespace: dict[str, Any]) -> None:
    """Set the `__all__` of an eager face (whose globals are `namespace`), once its imports ran: every name
    they bound but those that build it (`_` names, a submodule under its own name, `from __future__`'s,
    this helper). Set, not returned: a computed `__all__` is no list to the linter."""
    package = namespace["__name__"]
    namespace["__all__"] = sorted(
        name
        for name, value in namespace.items()
        if not name.startswith("_")
        and value is not eager
        and not isinstance(value, __future__._Feature)
        and not (isinstance(value, type(sys)) and value.__name__ == f"{package}.{name}")
    )


def _load(name: str, package: str) -> Any:
    """`importlib.import_module(name, package)` through the `import` statement's machinery: the same
    module, but seen by `python -X importtime` (which does not time `importlib.import_module`)."""
    level = len(name) - len(name.lstrip("."))
    if level:
        base = package.rsplit(".", level - 1)[0] if level > 1 else package
        name = f"{base}.{name[level:]}" if name[level:] else base
    __import__(name)
    return sys.modules[name]
