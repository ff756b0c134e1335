"""The knobs a user sets (batch size, idle and abandon timeouts), their defaults and their checks: one home.

The runtime, `Runtime.open`, the cluster client, the write pass and the command line all take their
defaults from `DEFAULTS`, so `Runtime.open`'s "config= beside a knob" check compares against the same
numbers every layer uses. `check_seconds` is the one check of a number of seconds. `memory_off` (the
`DAGMEM_MEMORY` switch) lives in `switch`, which a hook imports without these checks' `dataclasses`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from .errors import InvalidInput
from .switch import memory_off

__all__ = ["DEFAULTS", "Settings", "check_seconds", "check_threshold", "memory_off"]


def check_threshold(value: object, what: str = "token threshold") -> int:
    """A batch size in tokens: a whole number of at least 1 (0, a negative, NaN or infinity is refused with
    `InvalidInput`, never coerced). The runtime's config, the planner and `dagmem write` all ask here."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{what} must be a whole number of tokens, not {value!r}")
    if value < 1:
        raise InvalidInput(f"{what} must be at least 1 token, not {value}")
    return value


def check_seconds(name: str, value: object, *, zero_ok: bool) -> float:
    """A finite number of seconds, above 0 (or at least 0 with `zero_ok`), else `InvalidInput` naming
    `name`. NaN compares false with everything, so `nan` would pass a bare `<= 0` check and never fire."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{name} must be a number of seconds, not {value!r}")
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
        bound = "at least 0" if zero_ok else "above 0"
        raise InvalidInput(f"{name} must be a finite number of seconds {bound}, not {value!r}")
    return float(value)


@dataclass(frozen=True)
class Settings:
    token_threshold: int = 16_000  # tokens of unwritten records that make a batch
    idle_after: float = 1800.0  # seconds of silence that end a session (event-loop clock)
    abandon_after: float = 60.0  # seconds before a branch the head left is force-written

    def __post_init__(self) -> None:
        check_threshold(self.token_threshold, "token_threshold")
        check_seconds("idle_after", self.idle_after, zero_ok=False)
        check_seconds("abandon_after", self.abandon_after, zero_ok=True)


DEFAULTS: Final = Settings()
