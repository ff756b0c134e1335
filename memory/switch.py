"""The one switch that turns memory off: `DAGMEM_MEMORY`. The hooks, the command line and `Runtime.open`
read it here; a module of its own because every hook asks it first, before it imports anything else."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not `typing`'s: a hook that only queues a job imports almost nothing
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["memory_off"]

_OFF = frozenset({"off", "0", "false", "no", "none"})


def memory_off(env: Mapping[str, str] = os.environ) -> bool:
    """Whether `DAGMEM_MEMORY` switches memory off for this process (`off`, `0`, `false`, `no`, `none`)."""
    return env.get("DAGMEM_MEMORY", "").strip().lower() in _OFF
