"""The package's own source files, for the tests that read the code itself (layering, layout, errors).

A checkout holds more `.py` files than the package's: its virtualenv (`./dev.sh` makes `.venv/` inside
it), other hidden folders, a build directory, and the tests. One rule for all of those tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagmem

__all__ = ["ROOT", "package_sources"]

ROOT = Path(dagmem.__file__).resolve().parent


def package_sources() -> Iterator[Path]:
    """Every `.py` file of the package, in path order: not the tests, a build or any hidden folder."""
    for path in sorted(ROOT.rglob("*.py")):
        first = path.relative_to(ROOT).parts[0]
        if first in {"tests", "build"} or first.startswith("."):
            continue
        yield path
