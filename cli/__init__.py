"""The `dagmem` command line: one table of command records (`commands/`), a module per command's
implementation, and one way errors are shown."""

from __future__ import annotations

from ._main import main as main

__all__ = ["main"]
