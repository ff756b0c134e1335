"""`dagmem.cluster`: homes served by a pool of Ray actors, each serving many homes (DESIGN §11; extra `ray`:
`pip install 'dagmem[ray]'`).

The home is the shard. An actor runs the ordinary `dagmem.Runtime` on each home it serves (opened on first
use, closed when idle or crowded out, LRU), so the cluster is a layer over the embedded runtime, not a
second implementation; a home goes to the actor rendezvous hashing picks over the pool. Importing this package never imports Ray;
`connect` says how to install it when it is missing."""

from __future__ import annotations

from .._lazy import eager
from ._actor import DEFAULT_LIMITS as DEFAULT_LIMITS
from ._client import ACTOR_PREFIX as ACTOR_PREFIX
from ._client import DEFAULT_ACTORS as DEFAULT_ACTORS
from ._client import Cluster as Cluster
from ._client import actor_name as actor_name
from ._client import connect as connect
from ._load import Load as Load
from ._load import audit as audit
from ._load import drive as drive
from ._load import fault_run as fault_run
from ._placement import rendezvous as rendezvous
from ._ray import INSTALL as INSTALL
from ._ray import NAMESPACE as NAMESPACE
from ._ray import ClusterError as ClusterError
from ._ray import HomeUnavailable as HomeUnavailable
from ._ray import RayMissing as RayMissing
from ._ray import require_ray as require_ray

eager(globals())
