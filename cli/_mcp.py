"""`dagmem mcp [--home H] [--scope FILE] [--read-only]`: serve the home's memory to an MCP host over
stdin/stdout until stdin ends or a SIGTERM, then boundary-write every session (nothing is left owed).

Without `--scope` the client gets the owner's full scope (every session, origin, held item and the core);
a scope file narrows it (see the README's "Trust" section). `--read-only` drops the tools that write."""

from __future__ import annotations

import argparse
from pathlib import Path

import anyio

from ..actors import RuntimeConfig
from ..memory.errors import ExtraMissing, InvalidInput
from ..memory.trust import OWNER, load_scope
from ._errors import CommandError

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    home: Path = args.home
    if home.exists() and not home.is_dir():
        raise CommandError(f"--home {home}: not a directory")
    scope = OWNER
    if args.scope is not None:
        try:
            scope = load_scope(args.scope)
        except InvalidInput as exc:
            raise CommandError(f"--scope: {exc}") from None
    if args.read_only:
        scope = scope.model_copy(update={"read_only": True})
    try:
        from ..serve import serve
    except ExtraMissing:
        raise CommandError(
            "dagmem mcp needs the MCP SDK: pip install 'dagmem[mcp]'", code="INVALID_INPUT"
        ) from None
    config = RuntimeConfig(token_threshold=args.threshold, idle_after=args.idle_after)
    anyio.run(lambda: serve(home, config=config, scope=scope))
    return 0
