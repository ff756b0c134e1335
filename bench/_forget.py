"""`dagmem bench forget`: what a forget costs beside one ordinary write, in the same run.

A home with git on holds one session of `turns` turns (written), and a small second session. Measured,
wall clock: one ordinary write (two new turns of the small session: archive, distil, install, mark, git
commits); forgetting one turn of the long session (tombstones, archive rewrite, topics, the git history
rewrite, the recall rebuild, the vacuum, the final scan of every byte); forgetting the whole long session.
The forget is O(home) by design (the history rewrite and the scan read everything): it is rare, and its
proof is that nothing is left."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from ..memory.forget import forget, plan_forget
from ..memory.store import FileSessionStore
from ..memory.writing import write_home

__all__ = ["QUICK_TURNS", "TURNS", "run"]

TURNS = 10_000
QUICK_TURNS = 400


def run(turns: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="dagmem-bench-forget-") as tmp:
        home = Path(tmp) / "home"
        store = FileSessionStore(home, git=True)
        with store.bulk():
            for t in range(turns):
                role = "user" if t % 2 == 0 else "assistant"
                store.append("long", role, f"turn {t} about the harbour plan, item {t * 7919 % 10007}")
        store.append("small", "user", "a first note about the orchard")
        write_home(home, force=True)
        store = FileSessionStore(home, git=True)
        store.append("small", "user", "the orchard needs pruning in march")
        store.append("small", "assistant", "noted: prune the orchard in march")
        started = time.perf_counter()
        write_home(home, force=True, sessions=["small"])
        write_s = time.perf_counter() - started
        one = plan_forget(home, node=f"long/{sorted(store.load('long').nodes)[turns // 2]}")
        started = time.perf_counter()
        report = forget(home, one)
        one_s = time.perf_counter() - started
        started = time.perf_counter()
        whole = forget(home, plan_forget(home, session="long"))
        whole_s = time.perf_counter() - started
        return {
            "turns": turns,
            "write_s": write_s,
            "forget_turn_s": one_s,
            "forget_session_s": whole_s,
            "clean": report.clean and whole.clean,
        }
