"""Git growth, measured with real git on a sample of the simulated sessions (outside virtual time).

The simulator records, byte for byte, every write and commit the store made for the sampled sessions;
here they are replayed into real repositories with `SessionGit`, exactly as `FileSessionStore(git=True)`
commits them (one commit per append, head move and batch of markers). After each commit the loose
objects it wrote (`SessionGit.new_objects`, each measured on disk) are summed, and attributed to the turn (append) they follow. At a few
session lengths the repository is packed (`git gc --prune=now`) and the pack size noted: the growth per
turn after gc, between those points. The goal is growth per turn that stays flat as the session grows.

For every session (not only the sample) the store's counts give the node files written per turn: one
file per append, plus the files a marker batch or a rewind rewrote. Those must be O(batch), never
O(session): the runner checks each marker rewrite against its batch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from ..memory.format import SHARD_SIZE
from ..memory.store import SessionGit
from ..memory.store import git_env as _env
from ._recording import FileCounts, GitOp

__all__ = ["SessionGrowth", "commits", "file_rewrites", "measure"]

GOAL_RATIO = 2.0  # last / first shard's loose bytes per turn, as in `dagmem bench store`


@dataclass
class SessionGrowth:
    session: str
    turns: int = 0
    commits: int = 0
    loose_bytes: int = 0  # loose bytes added by all commits
    per_turn: list[int] = field(default_factory=list)  # loose bytes after turn i (its commits and the next)
    packed: list[tuple[int, int]] = field(default_factory=list)  # (turns, pack bytes after gc)
    seconds: float = 0.0

    def cycles(self) -> list[float]:
        """Mean loose bytes per turn over each complete shard (256 turns). A shard's tree object is
        rewritten whole by every commit that touches it, so within a shard the cost is a sawtooth: compare
        whole shards, first with last."""
        full = len(self.per_turn) // SHARD_SIZE
        return [fmean(self.per_turn[k * SHARD_SIZE : (k + 1) * SHARD_SIZE]) for k in range(full)]

    def summary(self) -> dict[str, Any]:
        cycles = self.cycles()
        ratio = round(cycles[-1] / cycles[0], 2) if len(cycles) > 1 and cycles[0] else None
        marginal = [
            (b - a) / (tb - ta)
            for (ta, a), (tb, b) in zip(self.packed, self.packed[1:], strict=False)
            if tb > ta
        ]
        return {
            "session": self.session,
            "turns": self.turns,
            "commits": self.commits,
            "loose_bytes": self.loose_bytes,
            "loose_bytes_per_turn": round(self.loose_bytes / max(1, self.turns), 1),
            "loose_bytes_per_turn_by_shard": [round(c, 1) for c in cycles],
            "last_shard_over_first": ratio,
            "packed_bytes": self.packed[-1][1] if self.packed else None,
            "packed_bytes_per_turn": round(self.packed[-1][1] / max(1, self.turns), 1)
            if self.packed
            else None,
            "packed_points": [list(p) for p in self.packed],
            "packed_marginal_bytes_per_turn": [round(m, 1) for m in marginal],
            "seconds": round(self.seconds, 1),
        }


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], capture_output=True, env=_env(), check=True)


class _Loose:
    """The loose objects each commit added: the files `SessionGit` names, measured on disk (O(commit);
    rescanning `objects/` after every commit made a 1,400-turn replay quadratic)."""

    def __init__(self, repo: Path, git: SessionGit) -> None:
        self.objects = repo / ".git" / "objects"
        self.git = git

    def added(self) -> int:
        """Bytes of the loose objects the last commit wrote."""
        return sum(os.stat(path).st_size for path in self.git.new_objects)

    def pack_bytes(self) -> int:
        pack = self.objects / "pack"
        return sum(p.stat().st_size for p in pack.glob("*.pack")) if pack.is_dir() else 0


def _checkpoints(turns: int) -> set[int]:
    points = {turns}
    n = 25
    while n < turns:
        points.add(n)
        n *= 2
    return points


def commits(ops: Mapping[str, list[GitOp]]) -> int:
    """The commits `measure` replays: the total of its progress."""
    return sum(
        1 for session_ops in ops.values() for kind, _items, _message in session_ops if kind == "commit"
    )


def replay(
    session: str, ops: list[GitOp], root: Path, on_commit: Callable[[int], None] | None = None
) -> SessionGrowth:
    """Replay one session's writes and commits into a real repository under `root`; `on_commit(1)` after
    each commit (from this thread)."""
    started = time.perf_counter()
    repo = root / session
    repo.mkdir(parents=True)
    git = SessionGit(repo)
    loose = _Loose(repo, git)
    growth = SessionGrowth(session)
    total_turns = sum(1 for kind, _items, message in ops if kind == "commit" and message.startswith("turn "))
    points = _checkpoints(total_turns)
    for kind, items, message in ops:
        if kind == "write":
            for relpath, data in items:
                path = repo / relpath
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            continue
        git.commit([relpath for relpath, _data in items], message)
        growth.commits += 1
        if on_commit is not None:
            on_commit(1)
        added = loose.added()
        growth.loose_bytes += added
        if message.startswith("turn "):
            growth.turns += 1
            growth.per_turn.append(added)
            if growth.turns in points:
                _git(repo, "gc", "--quiet", "--prune=now")
                growth.packed.append((growth.turns, loose.pack_bytes()))
        elif growth.per_turn:
            growth.per_turn[-1] += added
    growth.seconds = time.perf_counter() - started
    return growth


def measure(
    ops: Mapping[str, list[GitOp]],
    *,
    scratch: Path | None = None,
    workers: int = 2,
    progress: Callable[[int], None] | None = None,
) -> list[SessionGrowth]:
    """Replay the sampled sessions (in parallel: git runs in subprocesses); longest first. `progress(n)`
    is told of every n commits replayed (from the worker threads), out of `commits(ops)`."""
    if not ops:
        return []
    root = Path(tempfile.mkdtemp(prefix="dagmem-sim-git-", dir=scratch))
    try:
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(ops)))) as pool:
            futures = {
                sid: pool.submit(replay, sid, list(session_ops), root, progress)
                for sid, session_ops in ops.items()
            }
            results = [future.result() for future in futures.values()]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results.sort(key=lambda g: (-g.turns, g.session))
    return results


def file_rewrites(counts: Mapping[str, FileCounts], batch_sizes: list[int]) -> dict[str, Any]:
    """Node files written per turn, for every session, by session length (powers of two)."""
    buckets: dict[int, list[float]] = {}
    points: list[tuple[int, float]] = []
    appended = rewritten = most = 0
    for session in sorted(counts):
        c = counts[session]
        appended += c.appended
        rewritten += c.rewritten
        most = max(most, c.most)
        if c.appended:
            per_turn = (c.appended + c.rewritten) / c.appended
            points.append((c.appended, per_turn))
            buckets.setdefault(1 << (c.appended.bit_length() - 1), []).append(per_turn)
    return {
        "node_files_written": appended,
        "node_files_rewritten": rewritten,
        "per_turn": round((appended + rewritten) / max(1, appended), 3),
        "most_in_one_rewrite": most,
        "largest_batch": max(batch_sizes, default=0),
        "by_session_length": {
            f"{low}-{2 * low - 1}": {"sessions": len(v), "node_files_per_turn": round(fmean(v), 3)}
            for low, v in sorted(buckets.items())
        },
        "points": points,
    }
