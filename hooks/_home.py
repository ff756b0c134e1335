"""Where a hook's memory lives: one home per project, and one per repository across its worktrees.

`--home` wins, then `DAGMEM_HOME`, then the project's home, where the project is the directory the host
names (`CLAUDE_PROJECT_DIR` for Claude Code, the payload's `cwd`, else the hook's own working directory):
`<project>/.dagmem`, the same `./.dagmem` every other `dagmem` command defaults to when run from the
project's root, except in a linked worktree of a repository (`git worktree add`) that has no `.dagmem` of
its own: there it is the main worktree's `.dagmem`, so every worktree of one repository shares one home
and a session in one remembers what another decided (labelled by its branch). A worktree splits off by
having its own: `mkdir <worktree>/.dagmem` (or `DAGMEM_HOME`, or `dagmem install ... --home H`). The
worktree is found from the files alone (`.git` is a file naming the worktree's git directory, whose
`commondir` names the repository's; the main worktree holds that directory as its `.git`): no `git` run.
A hook whose working directory was deleted and that nothing else points to a project logs under the
user's state directory instead (`fallback_home`)."""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # not `typing`'s: a hook that only queues a job imports almost nothing
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["HOME_DIR", "fallback_home", "hook_home", "project_home", "state_dir"]

HOME_DIR = ".dagmem"


def hook_home(explicit: Path | None, cwd: object = None, env: Mapping[str, str] = os.environ) -> Path:
    """The home a hook reads and writes (not created here)."""
    if explicit is not None:
        return explicit
    if env.get("DAGMEM_HOME"):
        return Path(env["DAGMEM_HOME"])
    for project in (env.get("CLAUDE_PROJECT_DIR"), cwd):
        if isinstance(project, str) and project and os.path.isdir(project):  # never a home in a made-up place
            return project_home(project)
    try:
        return project_home(os.getcwd())
    except OSError:  # the working directory was deleted under the host: no project to find
        return fallback_home(env)


def project_home(project: str) -> Path:
    """The home of the project at `project`: its own `.dagmem` when it has one or is no linked worktree,
    else its repository's main worktree's (see the module)."""
    own = Path(project) / HOME_DIR
    if os.path.lexists(own):
        return own
    shared = _main_worktree(project)
    return own if shared is None else Path(shared) / HOME_DIR


def _main_worktree(project: str) -> str | None:
    """The main worktree of the repository `project` is a linked worktree of, read from its files (a
    few small reads): None for a main worktree, a bare repository's worktree or no repository."""
    current = os.path.abspath(project)
    for _ in range(64):
        dot_git = os.path.join(current, ".git")
        if os.path.isdir(dot_git):
            return None  # a main worktree: its own home
        if os.path.isfile(dot_git):
            try:
                with open(dot_git, "rb") as f:
                    line = f.read(4096)
                if not line.startswith(b"gitdir: "):
                    return None
                gitdir = os.path.join(current, os.fsdecode(line[8:].strip()))
                with open(os.path.join(gitdir, "commondir"), "rb") as f:
                    common = os.path.realpath(os.path.join(gitdir, os.fsdecode(f.read(4096).strip())))
            except OSError:
                return None
            main = os.path.dirname(common)
            if os.path.basename(common) != ".git" or not os.path.isdir(main):
                return None  # a bare repository's worktree: no main worktree to share
            return main
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    return None


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
