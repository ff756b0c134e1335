"""Optional git history per session: one small commit per turn, listing the paths it touched.

`git add -A` would stat the whole tree every turn (O(session)); naming the paths keeps a commit O(1) in
files. `core.fsync=added` makes git fsync the objects it adds, so a power loss cannot leave a ref that
points at a missing object (FACTS: 1.4-1.7x per commit).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from .. import faults
from ..errors import DagmemError

__all__ = ["GitError", "SessionGit"]

_IDENTITY = ("-c", "user.name=dagmem", "-c", "user.email=dagmem@localhost")


class GitError(DagmemError):
    """A git command of the optional session history failed."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # A host's own git settings (hooks, signing, templates) must not leak into dagmem's commits.
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    env.pop("GIT_INDEX_FILE", None)
    return env


class SessionGit:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _run(self, *args: str) -> None:
        result = subprocess.run(
            ["git", "-C", str(self.root), *_IDENTITY, *args],
            capture_output=True,
            env=_env(),
            check=False,
        )
        if result.returncode != 0:
            message = result.stderr.decode(errors="replace").strip()
            raise GitError(f"git {args[0]} failed in {self.root}: {message}")

    def ensure(self) -> None:
        if (self.root / ".git").is_dir():
            return
        faults.hit("git:init")
        self._run("init", "-q")
        for key, value in (
            ("core.fsync", "added"),
            ("commit.gpgsign", "false"),
            ("core.hooksPath", "/dev/null"),
            ("gc.auto", "0"),
            # Each commit rewrites the index; split, it rewrites only what changed (not O(session)).
            ("core.splitIndex", "true"),
        ):
            self._run("config", key, value)
        # The session's lock file is the store's, not the host's history.
        info = self.root / ".git" / "info"
        info.mkdir(exist_ok=True)
        with (info / "exclude").open("a", encoding="utf-8") as exclude:
            exclude.write("/.lock\n")

    def commit(self, paths: Sequence[str], message: str) -> None:
        """Commit exactly `paths` (relative to the session root)."""
        if not paths:
            return
        self.ensure()
        faults.hit("git:add")
        self._run("add", "--", *paths)
        faults.hit("git:commit")
        self._run("commit", "-q", "--no-verify", "--allow-empty", "-m", message)
