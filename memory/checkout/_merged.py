"""What has been merged where: a small cache of facts, computed by `git` outside any prompt's path and
only read on it (docs/formats.md, "Git context"; docs/currency.md, "Git branches").

A turn said on branch B at time t is merged into a reader's commit H when H holds a commit of B's own
line (the first-parent chain of B's tip) made at or after t: the work that followed the turn on B is in
H. So for a pair (H, B's tip) one number decides every turn of B: the committer time of the newest
commit of that chain H contains (`until`), or none when H holds none of it. Such a fact is a property of
two commit ids, never stale: a new commit on either side is a new pair.

`memory/.dagmem/git-merged.json` (a cache: deleting it is safe) holds, per repository (its common
directory):

    {"version": 1, "repos": {"<repo>": {
        "tips": {"<branch>": ["<commit>", <committer time>]},        the tips last seen (a deleted branch keeps its last)
        "facts": {"<H> <tip>": <time> | null},                      `until` for a reader at H and a branch at tip
        "latest": {"<reader branch>\\t<branch>": <time> | null}}}}  the newest fact per pair of branch names

`refresh` (the hooks' worker after each job, `Runtime.recall(checkout=...)`, `dagmem recall --checkout`)
runs `git` to add the facts of every worktree's HEAD against each branch's tip (at most `BRANCHES`
branches, the most recently committed; only pairs not known yet). A reader looks its pair up: exact when
both commits are known; when the reader's HEAD or the branch's tip moved since (a commit not refreshed
yet), the newest fact of the two branch names stands in (approximate), and the hook asks for a refresh.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ._read import Checkout, Location, branch_tip

if TYPE_CHECKING:
    from ._label import GitReader

__all__ = ["BRANCHES", "MERGED_FILE", "Facts", "RepoFacts", "load_facts", "reader_at", "refresh"]

MERGED_FILE: Final = ".dagmem/git-merged.json"  # under memory/
BRANCHES: Final = 64  # branches a refresh covers, the most recently committed
_FACTS: Final = 4096  # facts kept per repository, the newest
_GIT_TIMEOUT: Final = 20.0  # seconds one git command may take


@dataclass
class RepoFacts:
    tips: dict[str, tuple[str, int]] = field(default_factory=dict)
    facts: dict[str, int | None] = field(default_factory=dict)
    latest: dict[str, int | None] = field(default_factory=dict)

    def until(
        self, location: Location, head: str | None, reader_branch: str | None, branch: str
    ) -> tuple[int | None, bool]:
        """(`until` for a reader at `head` and `branch` as it is now, exact?). The branch's tip is read
        from its ref (a deleted branch: its last tip seen); a pair not known falls back on the newest fact
        of the two names (not exact), else (None, False)."""
        tip = branch_tip(location, branch)
        if tip is None and branch in self.tips:
            tip = self.tips[branch][0]
        if head is None or tip is None:
            return None, True  # an unborn HEAD, or a branch gone before any refresh saw it: no fact can come
        if f"{head} {tip}" in self.facts:
            return self.facts[f"{head} {tip}"], True
        key = f"{reader_branch}\t{branch}"
        if reader_branch is not None and key in self.latest:
            return self.latest[key], False
        return None, False

    def to_json(self) -> dict[str, Any]:
        return {
            "tips": {name: list(tip) for name, tip in self.tips.items()},
            "facts": self.facts,
            "latest": self.latest,
        }

    @classmethod
    def from_json(cls, raw: Any) -> RepoFacts:
        if not isinstance(raw, dict):
            return cls()
        tips = {
            str(name): (str(value[0]), int(value[1]))
            for name, value in (raw.get("tips") or {}).items()
            if isinstance(value, list) and len(value) == 2 and isinstance(value[1], int)
        }
        facts = {str(k): v for k, v in (raw.get("facts") or {}).items() if v is None or isinstance(v, int)}
        latest = {str(k): v for k, v in (raw.get("latest") or {}).items() if v is None or isinstance(v, int)}
        return cls(tips, facts, latest)


@dataclass
class Facts:
    repos: dict[str, RepoFacts] = field(default_factory=dict)

    def repo(self, repo: str) -> RepoFacts:
        return self.repos.get(repo) or RepoFacts()


def _path(memory: Path) -> Path:
    return memory / MERGED_FILE


def load_facts(memory: Path) -> Facts:
    """The cache as it is (an empty one when missing or damaged: a reader never fails on a cache)."""
    try:
        raw = json.loads(_path(memory).read_bytes())
    except (OSError, ValueError, RecursionError):
        return Facts()
    if not isinstance(raw, dict) or raw.get("version") != 1 or not isinstance(raw.get("repos"), dict):
        return Facts()
    try:
        return Facts({str(k): RepoFacts.from_json(v) for k, v in raw["repos"].items()})
    except (TypeError, ValueError, IndexError):
        return Facts()


def _save(memory: Path, facts: Facts) -> None:
    path = _path(memory)
    if not path.parent.is_dir():
        return  # no workspace state yet: nothing has been written, nothing to label
    body = {"version": 1, "repos": {repo: f.to_json() for repo, f in facts.repos.items()}}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(body, separators=(",", ":")), encoding="utf-8")
    os.replace(tmp, path)


def _git(location: Location, *args: str) -> str | None:
    import subprocess  # here: a reader (a hook on a prompt's path) never runs git, nor loads this

    try:
        done = subprocess.run(
            ["git", "-C", location.root, *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},  # never take the index lock of the user's repo
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _heads(location: Location) -> list[tuple[str, str | None]]:
    """(commit, branch or None) of every worktree's HEAD."""
    out = _git(location, "worktree", "list", "--porcelain") or ""
    heads: list[tuple[str, str | None]] = []
    commit: str | None = None
    for line in [*out.split("\n"), ""]:
        if line.startswith("HEAD "):
            commit = line[5:].strip()
        elif line.startswith("branch refs/heads/") and commit is not None:
            heads.append((commit, line[len("branch refs/heads/") :]))
            commit = None
        elif not line and commit is not None:
            heads.append((commit, None))  # detached
            commit = None
    return heads


def _branches(location: Location) -> dict[str, tuple[str, int]]:
    out = _git(
        location,
        "for-each-ref",
        "--sort=-committerdate",
        f"--count={BRANCHES}",
        "--format=%(objectname) %(committerdate:unix) %(refname)",
        "refs/heads",
    )
    found: dict[str, tuple[str, int]] = {}
    for line in (out or "").splitlines():
        sha, _, rest = line.partition(" ")
        when, _, ref = rest.partition(" ")
        if ref.startswith("refs/heads/") and when.isdigit():
            found[ref[len("refs/heads/") :]] = (sha, int(when))
    return found


def _until(location: Location, head: str, tip: str, tip_time: int) -> int | None:
    """The committer time of the newest commit of `tip`'s first-parent chain that `head` holds."""
    out = _git(location, "rev-list", "--first-parent", tip, f"^{head}")
    if out is None:
        return None
    outside = len(out.split())
    if outside == 0:
        return tip_time
    when = _git(location, "log", "-1", "--format=%ct", f"{tip}~{outside}")
    return int(when.strip()) if when is not None and when.strip().isdigit() else None


def refresh(
    memory: Path, location: Location, *, extra: Iterable[tuple[str, str | None]] = (), write: bool = True
) -> Facts:
    """Add the facts of every worktree's HEAD (and `extra` (commit, branch) readers) against every
    branch's tip, those not known yet; the cache written back unless `write` is False. Never raises on
    git's account: a command that fails adds nothing."""
    facts = load_facts(memory)
    repo = facts.repos.setdefault(location.common, RepoFacts())
    branches = _branches(location)
    for name, seen in branches.items():
        repo.tips[name] = seen
    known = sorted(repo.tips.items(), key=lambda item: -item[1][1])[:BRANCHES]
    repo.tips = dict(known)
    for head, reader in dict.fromkeys([*_heads(location), *extra]):
        for name, (tip, when) in repo.tips.items():
            key = f"{head} {tip}"
            if key not in repo.facts:
                repo.facts[key] = _until(location, head, tip, when)
            repo.facts[key] = repo.facts.pop(key)  # the newest last: the oldest go first when over
            if reader is not None:
                repo.latest[f"{reader}\t{name}"] = repo.facts[key]
    while len(repo.facts) > _FACTS:
        del repo.facts[next(iter(repo.facts))]
    if write:
        _save(memory, facts)
    return facts


def reader_at(
    memory: Path, directory: str, *, run_git: bool = False, write: bool = False
) -> GitReader | None:
    """The git reader at the checkout `directory` lies in (None outside a worktree), with its
    repository's facts from the cache; with `run_git`, the facts of this reader's HEAD are computed first
    when any is missing (`refresh`; the cache written back with `write`). A hook never runs git: it reads
    the cache and asks the worker for a refresh."""
    from ._label import GitReader
    from ._read import read_checkout

    found = read_checkout(directory)
    if found is None:
        return None
    facts = load_facts(memory)
    if run_git and found.commit is not None and not _complete(facts.repo(found.repo), found):
        facts = refresh(memory, found.location, extra=[(found.commit, found.branch)], write=write)
    return GitReader(found, facts.repo(found.repo))


def _complete(facts: RepoFacts, checkout: Checkout) -> bool:
    """Whether every branch the cache knows has its fact for this HEAD at its tip as it is now."""
    for name in facts.tips:
        tip = branch_tip(checkout.location, name) or facts.tips[name][0]
        if f"{checkout.commit} {tip}" not in facts.facts:
            return False
    return bool(facts.tips)
