"""Where a hook's memory lives: one home per project by default.

`--home` wins, then `DAGMEM_HOME`, then `<project>/.dagmem`, where the project is the directory the host
names (`CLAUDE_PROJECT_DIR` for Claude Code, the payload's `cwd`, else the hook's own working directory):
the same `./.dagmem` every other `dagmem` command defaults to when run from the project's root."""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # not `typing`'s: a hook that only queues a job imports almost nothing
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["HOME_DIR", "hook_home", "state_dir"]

HOME_DIR = ".dagmem"


def hook_home(explicit: Path | None, cwd: object = None, env: Mapping[str, str] = os.environ) -> Path:
    """The home a hook reads and writes (not created here)."""
    if explicit is not None:
        return explicit
    if env.get("DAGMEM_HOME"):
        return Path(env["DAGMEM_HOME"])
    for project in (env.get("CLAUDE_PROJECT_DIR"), cwd):
        if isinstance(project, str) and project and os.path.isdir(project):  # never a home in a made-up place
            return Path(project) / HOME_DIR
    return Path(os.getcwd()) / HOME_DIR


def state_dir(home: Path) -> Path:
    """The hooks' own files under the home: their log, the sync lock and the queue of pending syncs."""
    return home / "hooks"
