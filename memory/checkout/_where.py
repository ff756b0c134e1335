"""Where an imported turn was said in git, from what the agent saw (a transcript line's `cwd` and its
branch, Claude Code's `gitBranch`) and what this machine still has of it (docs/formats.md, "Git context").

- The directory is a worktree here: the repository is its common directory (every worktree of one
  repository gives the same), the branch the one the line names (what the agent saw, not what is
  checked out now; a line naming none gets the repository alone), and the commit HEAD named at the
  line's time, from the worktree's reflog, when the branch checked out now is the line's (else it is
  not known).
- It is not (a transcript from another machine, a deleted worktree): `cwd:<the directory>` stands for
  the repository, with the line's branch; nothing at all when the line names no branch (nothing says it
  was git work).
- An edit's file (`cited`, a path and `cited_of` its new text): its path relative to the worktree's root
  when the file lies inside it and exists here, else nothing of it.

`Whereabouts` remembers each directory's answer for one import (its worktree is looked up once).
"""

from __future__ import annotations

import os

from ..format import GitContext, git_context_of
from ._read import Location, head_at, locate, read_checkout

__all__ = ["Whereabouts"]

_DETACHED = "HEAD"  # Claude Code's `gitBranch` on a detached HEAD


class Whereabouts:
    def __init__(self) -> None:
        self._located: dict[str, tuple[Location | None, str | None]] = {}  # cwd -> (worktree, its branch now)
        # Each distinct context made once (its bounds checked once): most lines of a transcript share one.
        self._made: dict[tuple[str, ...], GitContext | None] = {}

    def _where(self, cwd: str) -> tuple[Location | None, str | None]:
        if cwd not in self._located:
            found = read_checkout(cwd) if os.path.isabs(cwd) else None
            self._located[cwd] = (found.location, found.branch) if found is not None else (locate(cwd), None)
        return self._located[cwd]

    def context(
        self, cwd: object, branch: object, when: float | None, cited: tuple[str, str | None] | None = None
    ) -> GitContext | None:
        """The git context of a line said in `cwd` on `branch` (None: the line names none) at `when`."""
        if not isinstance(cwd, str) or not cwd:
            return None
        named = branch if isinstance(branch, str) and branch and branch != _DETACHED else None
        location, now = self._where(cwd)
        if location is None:
            if not isinstance(branch, str) or not branch:
                return None
            return self._make(f"cwd:{cwd}", named, None, None, None)
        commit = head_at(location, when) if when is not None and named is not None and named == now else None
        path, spec = self._cited(location, cwd, cited)
        return self._make(location.common, named, commit, path, spec)

    def _make(self, *fields: str | None) -> GitContext | None:
        key = tuple(field or "" for field in fields)
        if key not in self._made:
            if len(self._made) >= 4096:  # an edit's context is its own: a long import must not hold them all
                self._made.clear()
            names = ("repo", "branch", "commit", "path", "cited")
            self._made[key] = git_context_of(
                {n: v for n, v in zip(names, fields, strict=True) if v is not None}
            )
        return self._made[key]

    @staticmethod
    def _cited(
        location: Location, cwd: str, cited: tuple[str, str | None] | None
    ) -> tuple[str | None, str | None]:
        if cited is None:
            return None, None
        raw, spec = cited
        full = os.path.realpath(os.path.join(cwd, raw))
        root = location.root.rstrip("/") + "/"
        if not full.startswith(root) or not os.path.isfile(full):
            return None, None
        return full[len(root) :], spec
