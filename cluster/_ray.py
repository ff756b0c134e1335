"""Ray is an optional extra: imported here only, when the cluster is used, with a message saying how to
install it. `import dagmem` (and every other command) never imports Ray."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..memory.errors import DagmemError, ExtraMissing

__all__ = ["INSTALL", "NAMESPACE", "ClusterError", "HomeUnavailable", "RayMissing", "require_ray"]

INSTALL = "pip install 'dagmem[ray]'"
NAMESPACE = "dagmem"


class ClusterError(DagmemError):
    """The cluster could not do what was asked (no Ray cluster at the address, a home served elsewhere)."""

    code = "CLUSTER_FAILED"


class RayMissing(ClusterError, ExtraMissing):
    """`dagmem.cluster` needs Ray, which is not installed."""

    code = "RAY_MISSING"


class HomeUnavailable(ClusterError):
    """The home lives on a node that is not alive: its files are on that node's disk."""

    code = "HOME_UNAVAILABLE"


def require_ray() -> ModuleType:
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise RayMissing(f"dagmem.cluster needs Ray, which is not installed ({exc}): {INSTALL}") from None
