"""The commands' console lives below every surface (`dagmem._console`): the simulator's and the benchmarks'
reports print through it too, and they sit under the CLI."""

from __future__ import annotations

from .._console import PIPED_WIDTH, console

__all__ = ["PIPED_WIDTH", "console"]
