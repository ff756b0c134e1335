"""`dagmem bench NAME`: run one benchmark of `dagmem.bench`."""

from __future__ import annotations

import argparse


def command(args: argparse.Namespace) -> int:
    # Imported when chosen: each benchmark pulls in what it measures.
    if args.name == "store":
        from ..bench import _store as bench
    elif args.name == "write":
        from ..bench import _write as bench  # type: ignore[no-redef]
    else:
        from ..bench import _runtime as bench  # type: ignore[no-redef]
    status: int = bench.main(args)
    return status
