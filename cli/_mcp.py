"""`dagmem mcp [--home H]`: serve the home's memory to an MCP host over stdin/stdout until stdin ends or a
SIGTERM, then boundary-write every session (nothing is left owed)."""

from __future__ import annotations

import argparse
from pathlib import Path

import anyio

from ..actors import RuntimeConfig
from ..memory.errors import ExtraMissing
from ._errors import CommandError

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    home: Path = args.home
    if home.exists() and not home.is_dir():
        raise CommandError(f"--home {home}: not a directory")
    try:
        from ..serve import serve
    except ExtraMissing:
        raise CommandError(
            "dagmem mcp needs the MCP SDK: pip install 'dagmem[mcp]'", code="INVALID_INPUT"
        ) from None
    config = RuntimeConfig(token_threshold=args.threshold, idle_after=args.idle_after)
    anyio.run(lambda: serve(home, config=config))
    return 0
