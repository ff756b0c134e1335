"""Named fault sites for crash-injection tests.

Product code calls `hit("<site>")` before each durable step (a write, an fsync, a rename, a txlog append,
a marker write, a git step). Unarmed, `hit` is one global load and a comparison. A test arms a hook that
counts hits and raises `InjectedCrash` at the chosen one, or asks a write to stop part way (a torn write).
`InjectedCrash` is a `BaseException` so that no `except Exception` in the product can swallow a simulated
process death.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["InjectedCrash", "Tear", "armed", "crash_once", "hit"]


class InjectedCrash(BaseException):
    """The process 'died' at a fault site."""

    def __init__(self, site: str) -> None:
        super().__init__(f"injected crash at {site}")
        self.site = site


class Tear(InjectedCrash):
    """Like `InjectedCrash`, but the write in progress first lands `keep` of its bytes."""

    def __init__(self, site: str, keep: int) -> None:
        super().__init__(site)
        self.keep = keep


Hook = Callable[[str], None]
_hook: Hook | None = None


def hit(site: str) -> None:
    """Mark a fault site. Inert unless a test armed a hook."""
    if _hook is not None:
        _hook(site)


@contextmanager
def armed(hook: Hook) -> Iterator[None]:
    """Arm `hook` for the duration of the block (not re-entrant: one armed test at a time)."""
    global _hook
    previous, _hook = _hook, hook
    try:
        yield
    finally:
        _hook = previous


def crash_once(site: str) -> Hook:
    """A hook that crashes at the first hit of `site` and lets every later hit pass (one death, then a
    restarted actor that must carry on)."""
    fired = False

    def hook(hit: str) -> None:
        nonlocal fired
        if hit == site and not fired:
            fired = True
            raise InjectedCrash(hit)

    return hook
