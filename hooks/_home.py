"""Where a hook's memory lives: one home per project by default.

`--home` wins, then `DAGMEM_HOME`, then `<project>/.dagmem`, where the project is the directory the host
names (`CLAUDE_PROJECT_DIR` for Claude Code, the payload's `cwd`, else the hook's own working directory):
the same `./.dagmem` every other `dagmem` command defaults to when run from the project's root. A hook
whose working directory was deleted and that nothing else points to a project logs under the user's
state directory instead (`fallback_home`)."""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # not `typing`'s: a hook that only queues a job imports almost nothing
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["HOME_DIR", "fallback_home", "hook_home", "state_dir"]

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
    try:
        return Path(os.getcwd()) / HOME_DIR
    except OSError:  # the working directory was deleted under the host: no project to find
        return fallback_home(env)


def fallback_home(env: Mapping[str, str] = os.environ) -> Path:
    """Where a hook that can find no home at all (its working directory deleted, and nothing else names
    a project) leaves its one log line: the user's state directory (`$XDG_STATE_HOME/dagmem`, else
    `~/.local/state/dagmem`), never a made-up project."""
    state = env.get("XDG_STATE_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".local/state"
    )
    return Path(state) / "dagmem"


def state_dir(home: Path) -> Path:
    """The hooks' own files under the home: their log, the sync lock and the queue of pending syncs."""
    return home / "hooks"
