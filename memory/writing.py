"""Writing a home with its recall index kept up to date: the write pass (`dagmem write`) over a workspace
opened with recall's updater as its install hook. Recall sits above the write core, so the two meet here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .policy import DEFAULT_THRESHOLD
from .settings import DEFAULTS
from .write import Distiller, SessionResult, write_pass

if TYPE_CHECKING:
    from .recall import RecallUpdater

__all__ = ["write_home"]


def write_home(
    home: Path,
    *,
    sessions: Iterable[str] | None = None,
    force: bool = False,
    distiller: Distiller | None = None,
    threshold: int = DEFAULT_THRESHOLD,
    idle_after: float = DEFAULTS.idle_after,
    now: float | None = None,
    on_session: Callable[[SessionResult], None] | None = None,
    recall: RecallUpdater | None = None,
) -> list[SessionResult]:
    """The write pass over a home (one result per session, in session-id order), each install indexed for
    recall as it commits. A bad `threshold` or `idle_after` raises `InvalidInput` before anything is
    opened. `recall`: the updater to index with (a caller that runs many passes keeps one, and with it
    the index it last wrote); by default a new one, as a new process has."""
    from .forget import finish_pending  # a forget a crash left part done is finished before any write

    finish_pending(home)
    if recall is None:
        # Imported here: the read side (numpy, the embedding model) loads when a pass runs, not on import.
        from .recall import RecallUpdater

        recall = RecallUpdater()
    return write_pass(
        home,
        on_install=recall,
        sessions=sessions,
        force=force,
        distiller=distiller,
        threshold=threshold,
        idle_after=idle_after,
        now=now,
        on_session=on_session,
    )
