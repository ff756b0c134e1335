"""The runtime on the git axis: `append(checkout=...)` keeps where in git a turn was said (read from the
checkout's files), a caller's metadata may not claim it, and `recall(checkout=...)` labels each hit by
the branch it was said on (computing the merge facts it lacks), on asyncio and trio."""

from __future__ import annotations

from pathlib import Path

import pytest

import dagmem
from dagmem.memory.format import git_context_of
from dagmem.tests._git_repo import T0, Repo

pytestmark = pytest.mark.anyio


async def test_a_turn_appended_in_a_checkout_carries_its_branch_and_recall_labels_it(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "app")
    head = repo.commit(repo.root, {"a.py": "x = 1\n"}, "first", T0)
    feature = repo.worktree(tmp_path / "feature", "feature/x", at=T0)
    async with dagmem.Runtime.open(tmp_path / "home") as rt:
        await rt.append("s1", "user", "Which job queue do we use for background jobs?", checkout=feature)
        said = await rt.append(
            "s1", "assistant", "We use the Oban job queue for background jobs.", checkout=feature
        )
        await rt.append("s2", "user", "Where do we deploy?", checkout=repo.root / "a-missing-dir")
        await rt.end_session("s1")
        await rt.end_session("s2")
        await rt.flush(force=True)
        node = dagmem.FileSessionStore(tmp_path / "home").read_nodes("s1", [said])[0]
        git = git_context_of(node.metadata["git"])
        assert git is not None
        assert (git.repo, git.branch, git.commit) == (str((repo.root / ".git").resolve()), "feature/x", head)
        hits = await rt.recall("which job queue for background jobs", checkout=repo.root)
        assert hits[0].git is not None
        assert (hits[0].git.branch, hits[0].git.merged, hits[0].git.into) == ("feature/x", False, "main")
        assert all(e.git is not None and e.git["branch"] == "feature/x" for e in hits[0].evidence)
        assert (await rt.recall("which job queue for background jobs", checkout=feature))[0].git.merged  # type: ignore[union-attr]
        assert (await rt.recall("which job queue for background jobs"))[0].git is None


async def test_a_callers_metadata_may_not_claim_a_git_context(tmp_path: Path) -> None:
    async with dagmem.Runtime.open(tmp_path / "home") as rt:
        with pytest.raises(dagmem.InvalidInput, match="'git' is dagmem's own"):
            await rt.append("s1", "user", "hi", metadata={"git": {"repo": "/r", "branch": "main"}})
        with pytest.raises(dagmem.InvalidInput, match="checkout or git"):
            await rt.append("s1", "user", "hi", checkout=tmp_path, git=dagmem.GitContext("/r"))
