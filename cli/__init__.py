"""The `dagmem` command line: one table of command records (`commands/`), a module per command's
implementation, and one way errors are shown."""

from __future__ import annotations

from .._lazy import eager
from ._main import main as main

eager(globals())
