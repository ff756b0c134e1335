"""The small measurements `dagmem bench` makes itself (the larger ones are `_store`, `_write`, `_runtime`
and `dagmem sim`): the per-turn "anything owed?" walk beside a full-branch scan, token counting beside
tiktoken alone, the machine's durable-replace rate, and staging a copy of a workspace (the peer's way to
make a write all-or-nothing). Each returns plain numbers; `_report` turns them into results."""

from __future__ import annotations

import functools
import os
import random
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..memory.durable import atomic_write
from ..memory.format import HomePaths, count_tokens, walk_branch
from ..memory.format import token_encoding as encoding
from ..memory.policy import DagView
from . import _kit as kit

__all__ = ["durable_replace", "token_counting", "unwritten_walk", "workspace_copy"]


def _best_of(repeats: int, fn: Callable[[], Any], inner: int) -> float:
    """Seconds per call: the fastest of `repeats` runs of `inner` calls (the least disturbed by others)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - started) / inner)
    return best


def _branch(turns: int) -> tuple[DagView, dict[str, str | None], dict[str, int], str]:
    """A DagView of one branch of `turns` records, the first half marked (a written prefix)."""
    view = DagView("bench")
    predecessors: dict[str, str | None] = {}
    tokens: dict[str, int] = {}
    previous: str | None = None
    for i in range(turns):
        node = f"n{i}"
        view.add(node, previous, tokens=40, marked=i < turns // 2)
        predecessors[node] = previous
        tokens[node] = 40
        previous = node
    assert previous is not None
    return view, predecessors, tokens, previous


def unwritten_walk(small: int, large: int) -> dict[str, float]:
    """µs per "what is owed on this branch?" check: the running sums at `small` and `large` turns, and a
    scan of the whole `large`-turn branch (walk to the root, add up unmarked records), as the peer does."""
    out: dict[str, float] = {}
    for turns in (small, large):
        view, _preds, _tokens, tip = _branch(turns)
        out[f"walk_us_{turns}"] = _best_of(5, functools.partial(view.unwritten, tip), 2_000) * 1e6
    view, predecessors, tokens, tip = _branch(large)
    marked = {f"n{i}" for i in range(large // 2)}

    def scan() -> int:
        return sum(tokens[n] for n in walk_branch("bench", predecessors, tip) if n not in marked)

    out[f"scan_us_{large}"] = _best_of(3, scan, 20) * 1e6
    return out


def token_counting(texts: int, seed: int = 20_240_701) -> dict[str, float]:
    """Tokens per second of `count_tokens` on texts it has not seen (no cache hit), beside tiktoken's own
    `encode_ordinary` on other texts of the same kind."""
    rng = random.Random(seed)
    ours = [kit.topic_text(rng, "memory", 1, numbers=True) + f" {i}" for i in range(texts)]
    theirs = [kit.topic_text(rng, "memory", 1, numbers=True) + f" {i}" for i in range(texts)]
    enc = encoding()
    count_tokens("warm up")
    started = time.perf_counter()
    total = sum(count_tokens(text) for text in ours)
    ours_s = time.perf_counter() - started
    started = time.perf_counter()
    base = sum(len(enc.encode_ordinary(text)) for text in theirs)
    theirs_s = time.perf_counter() - started
    return {"tokens_per_s": total / ours_s, "tiktoken_tokens_per_s": base / theirs_s}


def durable_replace(directory: Path, count: int) -> dict[str, float]:
    """The machine's limit for one durable rewrite: 2 KB, fsync, rename, directory fsync, `count` times."""
    directory.mkdir(parents=True, exist_ok=True)
    data = os.urandom(1_024).hex().encode()
    times: list[float] = []
    for i in range(count):
        started = time.perf_counter()
        atomic_write(directory / f"f{i % 64}.json", data)
        times.append(time.perf_counter() - started)
    median = statistics.median(times)
    return {"ms": median * 1e3, "per_s": 1.0 / median}


def workspace_copy(root: Path, topics: int, reps: int) -> dict[str, float]:
    """ms to stage a copy of a workspace of `topics` topic files (~2 KB each), as the peer's writer does
    before every write; the median of `reps` copies."""
    source = HomePaths(root).workspace.topics
    source.mkdir(parents=True)
    rng = random.Random(topics)
    for i in range(topics):
        (source / f"topic-{i:05d}.md").write_text(
            f"# Topic {i}\n\n" + kit.topic_text(rng, f"t{i}", 2, numbers=False) * 6 + "\n"
        )
    times: list[float] = []
    for rep in range(reps):
        stage = root / f"stage-{rep}"
        started = time.perf_counter()
        shutil.copytree(source, stage / "topics")
        times.append(time.perf_counter() - started)
        shutil.rmtree(stage)
    return {"ms": statistics.median(times) * 1e3}
