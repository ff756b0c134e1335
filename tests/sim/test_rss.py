"""The simulator's and the benchmarks' peak RSS is the process's own, not its parent's."""

from __future__ import annotations

import subprocess
import sys

from dagmem.sim import peak_rss_bytes


def test_a_child_started_from_a_large_process_reports_its_own_peak() -> None:
    # `ru_maxrss` survives execve on Linux: a child of a 400 MiB process reported 400 MiB as its own peak.
    ballast = bytearray(400 * 2**20)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page, so that it is resident
    assert peak_rss_bytes() >= 400 * 2**20
    child = subprocess.run(
        [sys.executable, "-c", "from dagmem.sim import peak_rss_bytes; print(peak_rss_bytes())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(child.stdout) < 300 * 2**20  # importing dagmem costs ~60 MiB
    del ballast
