"""A reader at a checkout, and what a hit's evidence is to it on the git axis (docs/currency.md, "Git
branches").

Each cited record that says where it was said (`format.GitContext`) is, for a reader at repository R,
branch B and commit H:

- the reader's own: said in R on B, or on a branch merged into H (`Facts`: the branch's line holds a
  commit H contains made at or after the record's time), or in R on no known branch;
- on an unmerged branch: said in R on another branch not merged into H;
- another repository's: said in a repository other than R that still exists here;
- of no known place (nothing on this axis): no git context, or a repository this machine does not have
  (`cwd:...`, an imported transcript from elsewhere; a repository moved since).

A hit is the reader's own when any of its records is; else on an unmerged branch (the newest such
record's branch) when any is; else another repository's when any is; else it has no git label.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass

from ..format import GitContext
from ._merged import RepoFacts
from ._read import Checkout

__all__ = ["GitLabel", "GitReader"]


@dataclass(frozen=True, slots=True)
class GitLabel:
    """A hit on the git axis: the branch its records were said on, whether that counts as the reader's
    (`merged`: the reader's own branch, or merged into its HEAD), whether the repository is the reader's,
    and what the reader is on (`into`: its branch, or its commit's first 8 hex digits when detached)."""

    branch: str | None
    merged: bool
    repo_same: bool
    into: str | None = None


class GitReader:
    """The reader at `checkout`, with the repository's merge facts (`None`: none known yet)."""

    def __init__(self, checkout: Checkout, facts: RepoFacts | None = None) -> None:
        self.checkout = checkout
        self.facts = facts if facts is not None else RepoFacts()
        self.stale = False  # a merge was decided without an exact fact: a refresh is due
        self._until: dict[str, int | None] = {}
        self._exists: dict[str, bool] = {}
        commit = checkout.commit
        self.into = checkout.branch or (commit[:8] if commit else None)

    def _merged(self, branch: str, when: float | None) -> bool:
        if branch not in self._until:
            until, exact = self.facts.until(
                self.checkout.location, self.checkout.commit, self.checkout.branch, branch
            )
            self.stale = self.stale or not exact
            self._until[branch] = until
        until = self._until[branch]
        return until is not None and when is not None and math.floor(when) <= until

    def _elsewhere(self, repo: str) -> bool:
        """Another repository that this machine has (one only named by a path, or gone, is no place)."""
        if repo not in self._exists:
            self._exists[repo] = not repo.startswith("cwd:") and os.path.isdir(repo)
        return self._exists[repo]

    def label(self, records: Iterable[tuple[GitContext | None, float | None]]) -> GitLabel | None:
        """The label of a hit citing `records` ((context, time) each), None when none has a place."""
        own: GitLabel | None = None
        unmerged: tuple[float, str] | None = None
        other: GitLabel | None = None
        for git, when in records:
            if git is None:
                continue
            if git.repo == self.checkout.repo:
                branch = git.branch
                if branch is None or branch == self.checkout.branch or self._merged(branch, when):
                    own = own or GitLabel(branch, True, True, self.into)
                elif unmerged is None or (when or 0.0) >= unmerged[0]:
                    unmerged = (when or 0.0, branch)
            elif other is None and self._elsewhere(git.repo):
                other = GitLabel(git.branch, False, False, self.into)
        if own is not None:
            return own
        if unmerged is not None:
            return GitLabel(unmerged[1], False, True, self.into)
        return other
