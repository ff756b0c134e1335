"""The `dagmem` command line: argument parsing, one module per command, and one way errors are shown."""

from __future__ import annotations

from ._main import main as main

__all__ = ["main"]
