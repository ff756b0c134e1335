"""The delay before a restart: exponential in a child's consecutive failures, capped, jittered."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

__all__ = ["Backoff"]


@dataclass(frozen=True)
class Backoff:
    """Delay before restarting a child that failed `consecutive` times in a row.

    The count grows with each failure of the same child and goes back to 1 when the child had run
    `reset_after` seconds (on the event-loop clock) before failing; `None` means the supervisor's
    `period`. Jitter spreads restarts of many supervisors apart; it draws from the `random.Random`
    passed in, so a seeded run is reproducible.
    """

    initial: float = 0.01
    factor: float = 2.0
    maximum: float = 5.0
    jitter: float = 0.1
    reset_after: float | None = None

    def __post_init__(self) -> None:
        if not (self.initial >= 0 and self.maximum >= 0 and self.factor >= 1):
            raise ValueError(f"backoff needs initial >= 0, maximum >= 0, factor >= 1: {self}")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"backoff jitter must be within [0, 1]: {self.jitter}")
        if self.reset_after is not None and self.reset_after < 0:
            raise ValueError(f"backoff reset_after must be >= 0: {self.reset_after}")

    def delay(self, consecutive: int, rng: random.Random) -> float:
        """`min(maximum, initial * factor**(consecutive - 1)) * (1 + jitter * rng.uniform(-1, 1))`."""
        if consecutive < 1:
            raise ValueError(f"consecutive failures start at 1, got {consecutive}")
        try:
            base = self.initial * self.factor ** (consecutive - 1)
        except OverflowError:  # factor**n beyond float range: long past the cap anyway
            base = math.inf if self.initial > 0 else 0.0
        # Always draw, even without jitter, so the rng advances the same way whatever the settings.
        spread = rng.uniform(-1.0, 1.0)
        return min(self.maximum, base) * (1.0 + self.jitter * spread)
