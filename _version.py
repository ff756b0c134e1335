"""The one home of the version: the package root re-exports it and the packaging reads it (pyproject's
`[tool.setuptools.dynamic]`), so modules below the root import it from here, never from the root."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
