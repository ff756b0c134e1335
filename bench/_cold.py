"""`dagmem bench cold`: what a fresh process pays before it does anything.

Three commands, each run `runs` times in a fresh interpreter (this one, `sys.executable`), round-robin so
that machine noise hits them alike: `python -c pass` (the interpreter alone, the baseline),
`python -c "import dagmem"`, and `python -m dagmem --version` (what the `dagmem` script runs). Wall clock
from spawn to exit (`time.perf_counter` around `subprocess.run`), p50 and p95 in milliseconds, with
bytecode cached as an installed dagmem has it (`PYTHONDONTWRITEBYTECODE` is not passed on). The goal is
`--version` in 150 ms or less: it answers before the command modules and the libraries under them load.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

from . import _kit as kit

__all__ = ["COMMANDS", "run"]

COMMANDS: dict[str, list[str]] = {
    "pass": ["-c", "pass"],
    "import": ["-c", "import dagmem"],
    "version": ["-m", "dagmem", "--version"],
}


def _once(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True, env=kit.fresh_process_env())
    return (time.perf_counter() - started) * 1000


def run(runs: int = 7) -> dict[str, Any]:
    """p50/p95 in ms of each command in `COMMANDS`, over `runs` fresh processes each (after one warm-up)."""
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for args in COMMANDS.values():  # warm the page cache: the first spawn reads the files from disk
        _once(args)
    for _ in range(runs):
        for name, args in COMMANDS.items():
            samples[name].append(_once(args))
    out: dict[str, Any] = {"runs": runs}
    for name, values in samples.items():
        ordered = sorted(values)
        out[f"{name}_p50_ms"] = round(kit.quantile(ordered, 0.5), 2)
        out[f"{name}_p95_ms"] = round(kit.quantile(ordered, 0.95), 2)
    return out
