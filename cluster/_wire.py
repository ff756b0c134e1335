"""What crosses the wire between a client and a home's actor.

An actor's method never raises a dagmem error through Ray: Ray would pickle it, and an exception whose
`__init__` takes other arguments than its message (`UnknownNode(session, node)`, `HomeBusy(path, holder)`)
cannot be unpickled. So the actor answers `("ok", value)` or `("error", Failure)`, and the client raises an
instance of the same class, with the same message and attributes, again."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from ..memory.errors import DagmemError

__all__ = ["Failure", "Reply", "failure_of", "raise_failure"]

Reply = tuple[str, Any]


@dataclass(frozen=True)
class Failure:
    module: str
    name: str
    message: str
    attrs: dict[str, Any] = field(default_factory=dict)


_PLAIN = (str, int, float, bool, type(None), PurePath)


def failure_of(exc: DagmemError) -> Failure:
    cls = type(exc)
    attrs = {key: value for key, value in vars(exc).items() if isinstance(value, _PLAIN)}
    return Failure(cls.__module__, cls.__qualname__, str(exc), attrs)


def raise_failure(failure: Failure) -> None:
    """Raise the actor's error here, as the same class when it is importable (a dagmem error)."""
    cls: type[DagmemError] = DagmemError
    try:
        found = getattr(importlib.import_module(failure.module), failure.name)
    except (ImportError, AttributeError):
        found = None
    if isinstance(found, type) and issubclass(found, DagmemError):
        cls = found
    exc = cls.__new__(cls)
    Exception.__init__(exc, failure.message)
    for key, value in failure.attrs.items():
        setattr(exc, key, value)
    raise exc
