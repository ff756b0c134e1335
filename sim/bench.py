"""`dagmem bench NAME`: dispatch to one benchmark module (`dagmem.sim.bench_<name>`)."""

from __future__ import annotations

import argparse
import importlib


def command(args: argparse.Namespace) -> int:
    module = importlib.import_module(f"dagmem.sim.bench_{args.name}")
    status: int = module.main(args)
    return status
