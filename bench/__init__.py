"""Benchmarks: each measures its setups side by side in one run and prints ratios (`dagmem bench NAME`).

The command reaches them through this face: `report` (the named benchmarks, their table and plot),
`locomo` (recall on the LoCoMo conversations), `coding` (real Claude Code transcripts replayed through
the hooks), `beam` (recall on BEAM's long chats) and `blind` (the hand-written currency sets, `dagmem
bench currency --blind`). Each loads on first use: the benchmarks pull in numpy, the
recall index and the runtime, which `dagmem bench --help` should not pay for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy

if TYPE_CHECKING:
    from . import _beam, _blind, _coding, _locomo, _report

    beam = _beam
    blind = _blind
    coding = _coding
    locomo = _locomo
    report = _report
else:
    __getattr__, __dir__, __all__ = lazy(
        __name__,
        globals(),
        {
            "beam": "._beam:",
            "blind": "._blind:",
            "coding": "._coding:",
            "locomo": "._locomo:",
            "report": "._report:",
        },
    )
