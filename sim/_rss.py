"""This process's peak resident memory, as its own.

`getrusage`'s `ru_maxrss` survives `execve` on Linux: a `dagmem sim` started from a large process (a
benchmark run) reported its parent's peak. `VmHWM` in /proc belongs to the address space, which `execve`
replaces, so it is the child's own; elsewhere `ru_maxrss` is what there is.
"""

from __future__ import annotations

import resource
import sys

__all__ = ["peak_rss_bytes"]


def peak_rss_bytes() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere
