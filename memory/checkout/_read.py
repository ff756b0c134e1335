"""A checkout's git state read from its files alone: no `git` process, so a hook on a prompt's path pays a
few small reads (docs/formats.md, "Git context").

From a directory upwards, the first `.git` found names the worktree: a directory is a repository's own
worktree (its git directory and common directory are that directory), a file `gitdir: <path>` a linked
worktree (`git worktree add`), whose git directory holds `commondir`, the path of the repository's common
directory relative to it. The common directory is the repository: every worktree of it shares it, its
branches (`refs/heads/`, `packed-refs`) and its objects. `HEAD` (per worktree) names the branch
(`ref: refs/heads/<branch>`) or a commit (detached); a branch's commit is its loose ref, else its line
of `packed-refs`. A repository whose refs are in the `reftable` format has no such files: its branch is
read, its commits are not (None).

Where a directory's `.git` is is remembered per process (it does not move under a running process);
`HEAD` and the refs are read at every call, a few hundred bytes each, so a long-lived runtime sees a
new commit or a switched branch at once. `packed-refs` is parsed once per (size, mtime).
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass
from typing import Final

__all__ = ["Checkout", "Location", "branch_tip", "head_at", "locate", "read_checkout"]

_DEPTH: Final = 64  # directories climbed at most looking for `.git`
_SMALL: Final = 4096  # bytes read of HEAD, a loose ref, a `.git` file, `commondir`
_REFLOG_TAIL: Final = 256 << 10  # bytes of a reflog's end read to date a commit
_SHA: Final = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?")


@dataclass(frozen=True, slots=True)
class Location:
    """Where a worktree's git files are: its root (the directory holding `.git`), its own git directory
    and the repository's common directory (real paths)."""

    root: str
    gitdir: str
    common: str


@dataclass(frozen=True, slots=True)
class Checkout:
    """A worktree's state now: the repository (its common directory), the branch checked out (None when
    detached) and the commit HEAD names (None when unborn or unreadable)."""

    location: Location
    branch: str | None
    commit: str | None

    @property
    def repo(self) -> str:
        return self.location.common

    @property
    def root(self) -> str:
        return self.location.root


_located: dict[str, Location | None] = {}
_reflogs: dict[str, tuple[tuple[int, int], tuple[list[int], list[str]]]] = {}
_packed: dict[str, tuple[tuple[int, int], dict[str, str]]] = {}


def _small(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(_SMALL)
    except OSError:
        return None


def _git_file(root: str, dot_git: str) -> Location | None:
    """A `.git` file (a linked worktree): `gitdir: <path>`, then that directory's `commondir`."""
    data = _small(dot_git)
    if data is None or not data.startswith(b"gitdir: "):
        return None
    target = os.fsdecode(data[len(b"gitdir: ") :].strip())
    gitdir = os.path.realpath(os.path.join(root, target))
    found = _small(os.path.join(gitdir, "commondir"))
    common = gitdir
    if found is not None and found.strip():
        common = os.path.realpath(os.path.join(gitdir, os.fsdecode(found.strip())))
    return Location(root, gitdir, common)


def locate(directory: str) -> Location | None:
    """The worktree `directory` lies in, None when none does (or it does not exist here)."""
    try:
        start = os.path.realpath(directory)
    except (OSError, ValueError):
        return None
    if start in _located:
        return _located[start]
    found: Location | None = None
    current = start
    for _ in range(_DEPTH):
        dot_git = os.path.join(current, ".git")
        if os.path.isdir(dot_git):
            if os.path.isfile(os.path.join(dot_git, "HEAD")):
                found = Location(current, dot_git, dot_git)
            break
        if os.path.isfile(dot_git):
            found = _git_file(current, dot_git)
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    if not os.path.isdir(start):
        return found  # not remembered: a directory made later may be elsewhere
    _located[start] = found
    return found


def _packed_refs(common: str) -> dict[str, str]:
    path = os.path.join(common, "packed-refs")
    try:
        stat = os.stat(path)
    except OSError:
        return {}
    key = (stat.st_size, stat.st_mtime_ns)
    cached = _packed.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    refs: dict[str, str] = {}
    try:
        with open(path, "rb") as f:
            for line in f:
                if line.startswith((b"#", b"^")):
                    continue
                sha, _, name = line.rstrip(b"\n").partition(b" ")
                if _SHA.fullmatch(sha) and name:
                    refs[os.fsdecode(name)] = sha.decode()
    except OSError:
        return {}
    _packed[path] = (key, refs)
    return refs


def _ref(location: Location, name: str, depth: int = 0) -> str | None:
    """The commit a ref names: loose (the worktree's own directory for its private refs, else the common
    one), else packed; a symbolic ref followed a few levels."""
    for base in (
        (location.gitdir, location.common) if not name.startswith("refs/heads/") else (location.common,)
    ):
        data = _small(os.path.join(base, name))
        if data is None:
            continue
        data = data.strip()
        if _SHA.fullmatch(data):
            return data.decode()
        if data.startswith(b"ref: ") and depth < 4:
            return _ref(location, os.fsdecode(data[5:].strip()), depth + 1)
        return None
    return _packed_refs(location.common).get(name)


def branch_tip(location: Location, branch: str) -> str | None:
    """The commit `branch` names now (None when there is no such branch, or it is unreadable)."""
    if not branch or ".." in branch or branch.startswith("/"):
        return None
    return _ref(location, f"refs/heads/{branch}")


def read_checkout(directory: str) -> Checkout | None:
    """The checkout `directory` lies in, as it is now; None outside any worktree."""
    location = locate(directory)
    if location is None:
        return None
    head = _small(os.path.join(location.gitdir, "HEAD"))
    if head is None:
        return None
    head = head.strip()
    if head.startswith(b"ref: "):
        name = os.fsdecode(head[5:].strip())
        branch = name[len("refs/heads/") :] if name.startswith("refs/heads/") else None
        return Checkout(location, branch, _ref(location, name))
    if _SHA.fullmatch(head):
        return Checkout(location, None, head.decode())
    return None


def _reflog(gitdir: str) -> tuple[list[int], list[str]]:
    """(times, commits) of a worktree's HEAD reflog (`<gitdir>/logs/HEAD`, each line `<old>
    <new> <who> <time> <zone>\\t<why>`), its last `_REFLOG_TAIL` bytes, parsed once per (size, mtime): an
    import asks it for every line of a transcript."""
    path = os.path.join(gitdir, "logs", "HEAD")
    try:
        with open(path, "rb") as f:
            stat = os.fstat(f.fileno())
            key = (stat.st_size, stat.st_mtime_ns)
            cached = _reflogs.get(path)
            if cached is not None and cached[0] == key:
                return cached[1]
            start = max(0, stat.st_size - _REFLOG_TAIL)
            f.seek(start)
            data = f.read(_REFLOG_TAIL)
    except OSError:
        return [], []
    lines = data.split(b"\n")[1 if start else 0 :]  # a tail's first line may be a line's end
    times: list[int] = []
    commits: list[str] = []
    for line in lines:
        parts = line.partition(b"\t")[0].split(b" ")
        if len(parts) < 5 or not _SHA.fullmatch(parts[1]) or not parts[-2].isdigit():
            continue
        if times and int(parts[-2]) < times[-1]:
            continue  # a clock that went back: the order of the file stands
        times.append(int(parts[-2]))
        commits.append(parts[1].decode())
    parsed = (times, commits)
    _reflogs[path] = (key, parsed)
    return parsed


def head_at(location: Location, when: float) -> str | None:
    """The commit this worktree's HEAD named at `when` (epoch seconds), from its reflog: the newest entry
    at or before `when`. None when the reflog read does not reach back that far, or there is none."""
    times, commits = _reflog(location.gitdir)
    at = bisect.bisect_right(times, when)
    return commits[at - 1] if at else None
