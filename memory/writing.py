"""The one door for writing a home from outside a runtime: `open_for_writing` opens its workspace with
what every write needs attached (recall's updater as its install hook, so that each install is indexed
for recall as it commits), and `write_home` runs the write pass (`dagmem write`) through it. Recall sits
above the write core, so the two meet here."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from .format import HomePaths
from .policy import DEFAULT_THRESHOLD
from .settings import DEFAULTS
from .workspace import Workspace
from .write import Distiller, SessionResult, write_pass

if TYPE_CHECKING:
    from .recall import RecallUpdater

__all__ = ["open_for_writing", "write_home"]


def open_for_writing(
    home: Path,
    *,
    recall: RecallUpdater | None = None,
    fsync: bool = True,
    clock: Callable[[], float] = time.time,
    workspace_id: str | None = None,
) -> Workspace:
    """The workspace of `home` (`<home>/memory`), opened to write: each install is indexed for recall as
    it commits. `recall`: the updater to index with (a runtime, or a caller that runs many passes, keeps
    one, and with it the index it last wrote); by default a new one, as a new process has. The caller
    closes it (it is a context manager)."""
    if recall is None:
        # Imported here: the read side (numpy, the embedding model) loads when a write runs, not on import.
        from .recall import RecallUpdater

        recall = RecallUpdater()
    return Workspace(
        HomePaths(home).memory, fsync=fsync, clock=clock, workspace_id=workspace_id, on_install=recall
    )


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
    """The write pass over a home (one result per session, in session-id order), its workspace opened for
    writing (`recall`: see `open_for_writing`). A bad `threshold` or `idle_after` raises `InvalidInput`
    before anything is opened."""
    from .forget import finish_pending  # a forget a crash left part done is finished before any write

    finish_pending(home)
    return write_pass(
        home,
        open_workspace=functools.partial(open_for_writing, recall=recall),
        sessions=sessions,
        force=force,
        distiller=distiller,
        threshold=threshold,
        idle_after=idle_after,
        now=now,
        on_session=on_session,
    )
