"""Benchmarks: each measures its setups side by side in one run and prints ratios (`dagmem bench NAME`).

The command reaches them through this face: `report` (the named benchmarks, their table and plot) and
`locomo` (recall on the LoCoMo conversations). Each loads on first use: the benchmarks pull in numpy, the
recall index and the runtime, which `dagmem bench --help` should not pay for.
"""

from __future__ import annotations

import typing as _typing

if _typing.TYPE_CHECKING:
    from . import _locomo as locomo
    from . import _report as report

__all__ = ["locomo", "report"]

_LAZY = {"locomo": "._locomo", "report": "._report"}


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY:
        import importlib

        value = importlib.import_module(_LAZY[name], __name__)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
