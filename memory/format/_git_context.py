"""Where a turn was said in git: its repository, branch and commit, and for an edit the file it touched
and a hash of what it wrote there (DESIGN §2, docs/formats.md "Git context").

One value, `GitContext`, kept in two places with one JSON form: a node's `metadata["git"]` (set by the
importers and the hooks' worker from what the agent saw, never by a caller's metadata) and the archive
frame's `source-meta`, `"git": {...}`, written only when known, so a frame without it is byte for byte
what it always was. The JSON is an object of strings, keys sorted, only those known:

    repo     the repository: the absolute path of its common git directory (worktrees of one repository
             share it), or `cwd:<path>` when the directory the agent worked in is not on this machine
             (an imported transcript from elsewhere: then only the path it was at is known)
    branch   the branch checked out (`refs/heads/<branch>`), absent on a detached HEAD
    commit   the commit HEAD named when the turn was said, when it could be known
    path     an edit's file, relative to the worktree's root
    cited    what the edit wrote there: `<lines>:<crc32 of the first line, 8 hex>:<sha256 of all, 16 hex>`
             over its non-blank lines, each stripped (`memory.checkout.cited_of`)

Values are bounded (`check_git`): a context that breaks a bound is dropped, never cut, so the archive's
header line stays short whatever a transcript holds.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["GIT_JSON_BYTES", "GIT_KEY", "GitContext", "git_context_of"]

#: The node metadata key (reserved: `append`'s metadata may not set it).
GIT_KEY: Final = "git"
#: The JSON form's bytes, at most: with the rest of `source-meta`, the header line stays under 4 KiB.
GIT_JSON_BYTES: Final = 2048
_KEYS: Final = frozenset({"repo", "branch", "commit", "path", "cited"})
_COMMIT: Final = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_CITED: Final = re.compile(r"[1-9][0-9]{0,5}:[0-9a-f]{8}:[0-9a-f]{16}")
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class GitContext:
    """Where in git a record was said (docs/formats.md, "Git context"): the repository (its common git
    directory, or `cwd:<path>` for a directory this machine does not have), the branch, the commit, and
    for an edit its file relative to the worktree's root and a hash of the lines it wrote there."""

    repo: str
    branch: str | None = None
    commit: str | None = None
    path: str | None = None
    cited: str | None = None

    def to_json(self) -> dict[str, str]:
        """The JSON object: only the fields known, keys sorted."""
        found = {
            "branch": self.branch,
            "cited": self.cited,
            "commit": self.commit,
            "path": self.path,
            "repo": self.repo,
        }
        return {key: value for key, value in found.items() if value is not None}

    def canonical(self) -> str:
        """The JSON text as `source-meta` holds it (sorted, compact, UTF-8 as is)."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def replace_branch(self, branch: str | None) -> GitContext:
        return GitContext(self.repo, branch, self.commit, self.path, self.cited)


def _text(value: object, limit: int) -> str | None:
    if not isinstance(value, str) or not value or len(value) > limit or _CONTROL.search(value):
        return None
    try:
        value.encode()
    except UnicodeEncodeError:  # a lone surrogate: not text the archive can hold
        return None
    return value


def git_context_of(value: Any) -> GitContext | None:
    """The context a JSON value states, None when it is not one (another shape, a bound broken: a node
    written by an older dagmem's caller may hold anything under `git`)."""
    if isinstance(value, GitContext):
        value = value.to_json()
    if not isinstance(value, dict) or not value.keys() <= _KEYS or "repo" not in value:
        return None
    repo = _text(value.get("repo"), 1024)
    if repo is None:
        return None
    fields: dict[str, str | None] = {}
    for key, limit in (("branch", 255), ("path", 1024)):
        raw = value.get(key)
        fields[key] = None if raw is None else _text(raw, limit)
        if raw is not None and fields[key] is None:
            return None
    commit, cited = value.get("commit"), value.get("cited")
    if commit is not None and not (isinstance(commit, str) and _COMMIT.fullmatch(commit)):
        return None
    if cited is not None and not (isinstance(cited, str) and _CITED.fullmatch(cited)):
        return None
    path = fields["path"]
    if path is not None and (path.startswith("/") or ".." in path.split("/")):
        return None  # relative to the worktree's root, never outside it
    found = GitContext(repo, fields["branch"], commit, path, cited)
    if len(found.canonical().encode()) > GIT_JSON_BYTES:
        return None
    return found
