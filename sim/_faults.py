"""The simulator's fault plan: which fault sites fail, how, decided from the seed (DESIGN §6).

Armed with `dagmem.memory.faults.armed(plan.hit)`, the plan sees every named fault site the product
passes. At the sites below, each hit fails with probability `rate`, and a second draw picks how:

- an **actor crash**: `InjectedCrash` in a session actor as it handles a turn;
- a **writer crash** between the steps of a write (archive, stage, the txlog commit point, install, marks, the
  status file) or while recovering: `InjectedCrash`, or a `Tear` that first lands part of an append;
- a **retryable failure**: lock contention (`CONCURRENT_UPDATE` as the install takes the workspace
  lock), or a model timeout from the distiller;
- a **permanent failure**: `EACCES` from a write, or a model that refuses the request. The session
  parks the batch until its next boundary (idle, end, or the final drain).

Decisions are a function of `(seed, site, n)` for the n-th hit of that site: each site has its own
generator and every hit draws the same amount, so sites the plan never fails (fsyncs, directory syncs)
do not shift the others, and the in-memory and on-disk stores see the same faults.
"""

from __future__ import annotations

import errno
import random
from collections import Counter
from collections.abc import Callable

from ..memory.faults import InjectedCrash, Tear
from ..memory.outcomes import ReasonCode, WriteFailure
from ..memory.write import BatchInput, Distiller, Edits, TopicReader

__all__ = ["SITES", "FaultPlan", "FaultyDistiller"]

# site -> (kind, weight) choices. "distill" is not a product site: `FaultyDistiller` reports it.
SITES: dict[str, tuple[tuple[str, float], ...]] = {
    "session:append": (("actor-crash", 1.0),),
    "write:mark": (("writer-crash", 1.0),),
    "writer:batch": (("writer-crash", 1.0),),
    "archive:write": (("writer-crash", 0.4), ("torn-write", 0.4), ("permanent-failure", 0.2)),
    "stage:write": (("writer-crash", 0.7), ("permanent-failure", 0.3)),
    "stage:rename": (("writer-crash", 1.0),),
    "txlog:write": (("writer-crash", 0.4), ("torn-write", 0.4), ("permanent-failure", 0.2)),
    "install:rename": (("writer-crash", 1.0),),
    "install:cleanup": (("writer-crash", 1.0),),
    "status:rename": (("writer-crash", 1.0),),
    "lock": (("lock-contention", 1.0),),
    "distill": (("retryable-failure", 0.6), ("permanent-failure", 0.4)),
}


class FaultPlan:
    """A seeded decision for every hit of a fault site; counts what it injected."""

    def __init__(self, seed: int | str, rate: float) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault rate must be within [0, 1], not {rate}")
        self.seed = seed
        self.rate = rate
        self.enabled = rate > 0
        self.injected: Counter[str] = Counter()  # kind -> count
        self.by_site: Counter[str] = Counter()
        self.writing = False  # the writer is inside a batch (the lock it takes is an install's)
        self._rngs: dict[str, random.Random] = {}
        self.count = 0
        self.observer: Callable[[str, str], None] | None = None  # told (site, kind) before each fault

    def _draw(self, site: str) -> tuple[float, float]:
        rng = self._rngs.get(site)
        if rng is None:
            rng = self._rngs[site] = random.Random(f"dagmem-sim:faults:{self.seed}:{site}")
        return rng.random(), rng.random()

    def decide(self, site: str) -> str | None:
        """The kind of fault for this hit of `site`, or None."""
        choices = SITES.get(site)
        if choices is None:
            return None
        if site == "lock" and not self.writing:
            return None  # the lock taken as a restarted writer opens the workspace: not modelled
        fire, pick = self._draw(site)
        if not self.enabled or fire >= self.rate:
            return None
        total = sum(weight for _kind, weight in choices)
        pick *= total
        for kind, weight in choices:
            if pick < weight:
                return kind
            pick -= weight
        return choices[-1][0]

    def hit(self, site: str) -> None:
        """The `faults.armed` hook: maybe fail here."""
        if site == "writer:batch":
            self.writing = True
        kind = self.decide(site)
        if kind is None:
            return
        self.injected[kind] += 1
        self.by_site[site] += 1
        self.count += 1
        if self.observer is not None:
            self.observer(site, kind)
        if kind in ("actor-crash", "writer-crash"):
            if kind == "writer-crash":
                self.writing = False
            raise InjectedCrash(site)
        if kind == "torn-write":
            self.writing = False
            raise Tear(site, keep=1 + self.count % 97)
        if kind == "lock-contention":
            raise WriteFailure(ReasonCode.CONCURRENT_UPDATE, "injected: the workspace lock is busy")
        if kind == "retryable-failure":
            raise WriteFailure(ReasonCode.MODEL_TIMEOUT, "injected: the model timed out")
        if site == "distill":
            raise WriteFailure(ReasonCode.MODEL_INVALID_REQUEST, "injected: the model refused the batch")
        raise PermissionError(errno.EACCES, f"injected: permission denied at {site}")

    def writer_stopped(self) -> None:
        """The writer crashed (or restarted): the next lock it takes opens the workspace."""
        self.writing = False

    def write_done(self) -> None:
        self.writing = False


class FaultyDistiller:
    """Wraps a distiller: before each call the plan may make the model fail."""

    def __init__(self, inner: Distiller, plan: FaultPlan) -> None:
        self.inner = inner
        self.plan = plan
        self.name = inner.name
        self.calls = 0

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        self.calls += 1
        self.plan.hit("distill")
        return self.inner.distill(batch, topics)
