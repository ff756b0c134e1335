"""Real git repositories for the git-axis tests: a repository with worktrees, commits made at given times
(no clock read, no sleep), and Claude Code transcript lines said in a worktree on a branch (`cwd`,
`gitBranch`), an edit's tool call and result among them."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["Repo", "Said", "iso"]

T0 = 1_790_000_000  # 2026-09-21: every time below is T0 + seconds


def iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


class Repo:
    """A repository whose main worktree is `root` (branch `main`), commits dated as asked."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git(root, "init", "-q", "-b", "main")
        self.git(root, "config", "user.email", "t@example.com")
        self.git(root, "config", "user.name", "t")

    def git(self, where: Path, *args: str, at: float = T0) -> str:
        stamp = f"@{int(at)} +0000"
        env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        done = subprocess.run(
            ["git", "-C", str(where), *args], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout

    def commit(self, where: Path, files: dict[str, str], message: str, at: float) -> str:
        for name, text in files.items():
            path = where / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.git(where, "add", "-A", at=at)
        self.git(where, "commit", "-q", "-m", message, at=at)
        return self.git(where, "rev-parse", "HEAD").strip()

    def worktree(self, path: Path, branch: str, at: float = T0) -> Path:
        self.git(self.root, "worktree", "add", "-q", "-b", branch, str(path), at=at)
        return path

    def merge(self, where: Path, branch: str, at: float) -> str:
        self.git(where, "merge", "-q", "--no-ff", branch, "-m", f"merge {branch}", at=at)
        return self.git(where, "rev-parse", "HEAD").strip()


class Said:
    """One Claude Code session file: lines said in `cwd` on `branch`, one second apart from `start`."""

    def __init__(self, path: Path, session: str, cwd: Path, branch: str | None, start: float) -> None:
        self.path, self.session, self.cwd, self.branch = path, session, cwd, branch
        self.at = start
        self.parent: str | None = None
        self.n = 0
        path.parent.mkdir(parents=True, exist_ok=True)

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> str:
        self.n += 1
        key = f"{self.session[:8]}-0000-4000-8000-{self.n:012d}"
        line: dict[str, Any] = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "cwd": str(self.cwd),
            "sessionId": self.session,
            "type": kind,
            "uuid": key,
            "timestamp": iso(self.at),
            "message": message,
            **extra,
        }
        if self.branch is not None:
            line["gitBranch"] = self.branch
        with self.path.open("a") as f:
            f.write(json.dumps(line) + "\n")
        self.parent = key
        self.at += 1
        return key

    def user(self, text: str) -> str:
        return self._line("user", {"role": "user", "content": text})

    def assistant(self, text: str) -> str:
        content = [{"type": "text", "text": text}]
        return self._line(
            "assistant", {"id": f"msg_{self.n}", "role": "assistant", "model": "m", "content": content}
        )

    def edit(self, file: str, old: str, new: str) -> str:
        """An Edit call of `file` (relative to `cwd`, as the agent named it absolute) and its result."""
        call = f"toolu_{self.session[:4]}{self.n}"
        use = {"type": "tool_use", "id": call, "name": "Edit",
               "input": {"file_path": str(self.cwd / file), "old_string": old, "new_string": new}}  # fmt: skip
        self._line("assistant", {"id": f"msg_{self.n}", "role": "assistant", "model": "m", "content": [use]})
        result = {"type": "tool_result", "tool_use_id": call, "content": "The file has been updated."}
        return self._line("user", {"role": "user", "content": [result]})
