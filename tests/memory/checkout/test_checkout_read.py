"""A checkout's git state read from its files alone (`memory.checkout.read_checkout`): the repository is
the common directory every worktree shares, the branch and commit HEAD names, packed refs, a detached
HEAD, the commit at a time from the reflog; and no `git` process is run for any of it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from dagmem.memory.checkout import branch_tip, head_at, locate, read_checkout
from dagmem.tests._git_repo import T0, Repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    found = Repo(tmp_path / "app")
    found.commit(found.root, {"a.py": "x = 1\n"}, "first", T0)
    return found


def _no_git(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a git process was run")

    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)


def test_worktrees_of_one_repository_are_one_repository_each_on_its_branch(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    feature = repo.worktree(tmp_path / "feature", "feature/x")
    tip = repo.commit(feature, {"b.py": "y = 2\n"}, "on x", T0 + 10)
    main_head = repo.git(repo.root, "rev-parse", "HEAD").strip()
    (repo.root / "sub").mkdir()
    _no_git(monkeypatch)
    main, linked = read_checkout(str(repo.root / "sub")), read_checkout(str(feature))
    assert main is not None
    assert linked is not None
    assert main.repo == linked.repo == str((repo.root / ".git").resolve())
    assert (main.branch, main.commit, main.root) == ("main", main_head, str(repo.root.resolve()))
    assert (linked.branch, linked.commit, linked.root) == ("feature/x", tip, str(feature.resolve()))
    assert branch_tip(main.location, "feature/x") == tip


def test_a_packed_branch_and_a_detached_head_are_read(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    head = repo.git(repo.root, "rev-parse", "HEAD").strip()
    repo.git(repo.root, "branch", "old")
    repo.git(repo.root, "pack-refs", "--all")
    assert not (repo.root / ".git/refs/heads/old").exists()
    location = locate(str(repo.root))
    assert location is not None
    assert branch_tip(location, "old") == head
    repo.git(repo.root, "checkout", "-q", "--detach")
    _no_git(monkeypatch)
    found = read_checkout(str(repo.root))
    assert found is not None
    assert (found.branch, found.commit) == (None, head)


def test_outside_any_worktree_there_is_no_checkout(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert read_checkout(str(tmp_path / "plain")) is None
    assert read_checkout(str(tmp_path / "missing")) is None


def test_the_commit_at_a_time_comes_from_the_reflog(repo: Repo) -> None:
    first = repo.git(repo.root, "rev-parse", "HEAD").strip()
    second = repo.commit(repo.root, {"a.py": "x = 2\n"}, "second", T0 + 100)
    location = locate(str(repo.root))
    assert location is not None
    assert head_at(location, T0 + 50) == first
    assert head_at(location, T0 + 100) == second
    assert head_at(location, T0 - 1) is None  # before the reflog begins: not known
