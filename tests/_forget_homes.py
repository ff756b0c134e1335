"""Homes for the forget tests: sessions with forks, git, multi-turn exchanges and core facts, written."""

from __future__ import annotations

import os
import random
from pathlib import Path

from dagmem import FileSessionStore
from dagmem.memory.writing import write_home

__all__ = ["build_home", "open_deleted"]

_WORDS = ["harbour", "lantern", "orchard", "quarry", "meadow", "glacier", "canyon", "violet"]


def build_home(home: Path, seed: int, *, sessions: int = 2, turns: int = 6) -> dict[str, str]:
    """A written home (git on); returns each node's source id -> its text (every text unique)."""
    rng = random.Random(seed)
    store = FileSessionStore(home, git=True, fsync=False)
    texts: dict[str, str] = {}
    for s in range(sessions):
        sid = f"s{s}"
        ids: list[str] = []
        for t in range(turns):
            role = "user" if t % 2 == 0 else "assistant"
            word = rng.choice(_WORDS)
            token = f"tok{seed}x{s}x{t}q{rng.randrange(10**6)}"
            if role == "user" and rng.random() < 0.3:
                text = f"My name is Robin{token} and I like the {word}."  # a core fact
            else:
                text = f"The {word} {token} is what we discussed, {word} again."
            # Forks: now and then a turn continues an older node instead of the newest.
            predecessor = ids[-1] if ids else None
            if len(ids) >= 2 and rng.random() < 0.25:
                predecessor = rng.choice(ids[:-1])
            node = store.append(sid, role, text, predecessor=predecessor)
            ids.append(node.id)
            texts[f"{sid}/{node.id}"] = text
    write_home(home, force=True)
    return texts


def open_deleted(name: str) -> list[str]:
    """The files named `name` this process holds open although they were deleted (Linux: /proc/self/fd)."""
    found: list[str] = []
    fds = Path("/proc/self/fd")
    for fd in list(fds.iterdir()) if fds.is_dir() else []:
        try:
            target = os.readlink(fd)
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
        if target.endswith(" (deleted)") and Path(target.removesuffix(" (deleted)")).name == name:
            found.append(target)
    return found
