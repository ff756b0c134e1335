"""Forget on random homes (forks, several sessions, git on, exchanges cited together, core facts): after
forgetting a random node, session or match, no copy is left anywhere, the oracle is clean, every other turn
is still consumed exactly once, recall never returns the text, and forgetting again changes nothing."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dagmem import FileSessionStore
from dagmem.memory.audit import check_home
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.forget import forget, plan_forget, verify_forgotten
from dagmem.memory.format import HomePaths
from dagmem.memory.recall import RecallIndex, RecallQuery, search
from dagmem.tests._forget_homes import build_home


def _consumed(home: Path) -> list[str]:
    import json

    lines = (home / "memory/.dagmem/txlog.jsonl").read_text().splitlines()
    return [source for line in lines for source in json.loads(line)["consumed"]]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), mode=st.sampled_from(["node", "session", "match"]), pick=st.randoms())
def test_forget_leaves_no_copy_and_keeps_every_other_turn(seed: int, mode: str, pick: object) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        texts = build_home(home, seed)
        source = pick.choice(sorted(texts))  # type: ignore[attr-defined]
        sid = source.partition("/")[0]
        if mode == "node":
            args = {"node": source}
        elif mode == "session":
            args = {"session": sid}
        else:
            words = texts[source].split()
            args = {"match": words[3] if "Robin" in texts[source] else words[2]}  # a token only it says
        plan = plan_forget(home, **args)
        gone = set(plan.targets)
        assert source in gone
        consumed_before = _consumed(home)

        report = forget(home, plan, fsync=False)

        assert report.clean, report.copies
        assert verify_forgotten(home) == []
        oracle = check_home(
            FileSessionStore(home, read_only=True),
            HomePaths(home).memory,
            read_workspace_id(HomePaths(home).workspace.workspace_id),
            drained=True,
        )
        assert oracle.ok, oracle.violations
        # Every other turn is still consumed exactly once (the forget consumed nothing, undid nothing).
        assert _consumed(home) == consumed_before
        assert all(consumed_before.count(s) == 1 for s in texts if s not in gone)
        for target in gone:
            text = texts[target]
            for hit in search(RecallIndex.open(HomePaths(home).memory), RecallQuery(text, k=20)):
                assert text not in hit.text
                assert all(text not in e.text for e in hit.evidence)
        for repo in (home / "sessions").glob("*/.git"):
            fsck = subprocess.run(
                ["git", "-C", str(repo.parent), "fsck", "--strict"], capture_output=True, check=False
            )
            assert fsck.returncode == 0, fsck.stderr
        # Forgetting again is a no-op.
        again = plan_forget(home, **args)
        assert again.targets == ()
        assert forget(home, again, fsync=False).targets == []
        # A second forget (its history rewrite now meets the first one's pack) is as clean.
        left = sorted(s for s in texts if s not in gone)
        if left:
            second = forget(home, plan_forget(home, node=pick.choice(left)), fsync=False)  # type: ignore[attr-defined]
            assert second.clean, second.copies
            for repo in (home / "sessions").glob("*/.git"):
                fsck = subprocess.run(
                    ["git", "-C", str(repo.parent), "fsck", "--strict"], capture_output=True, check=False
                )
                assert fsck.returncode == 0, fsck.stderr
