"""Benchmarks: each measures its setups side by side in one run and prints ratios (`dagmem bench NAME`).

The command reaches them through this face: `report` (the named benchmarks, their table and plot),
`locomo` (recall on the LoCoMo conversations) and `coding` (real Claude Code transcripts replayed through
the hooks). Each loads on first use: the benchmarks pull in numpy, the
recall index and the runtime, which `dagmem bench --help` should not pay for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy

if TYPE_CHECKING:
    from . import _coding as coding
    from . import _locomo as locomo
    from . import _report as report

__all__ = ["coding", "locomo", "report"]

__getattr__, __dir__ = lazy(
    __name__, globals(), {"coding": "._coding:", "locomo": "._locomo:", "report": "._report:"}
)
