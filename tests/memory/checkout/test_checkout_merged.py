"""What has been merged where (`memory.checkout.refresh`, `GitReader`): a turn said on a branch counts as
the reader's once the reader's HEAD holds a commit of that branch's line made at or after it; until then
it is labelled with its branch. The facts are computed by git off the reader's path and cached; a reader
whose HEAD moved since falls back on the newest fact of the two branch names and says it is stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmem.memory.checkout import GitLabel, GitReader, load_facts, read_checkout, refresh
from dagmem.memory.format import GitContext
from dagmem.tests._git_repo import T0, Repo


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    found = tmp_path / "home" / "memory"
    (found / ".dagmem").mkdir(parents=True)
    return found


def _reader(memory: Path, where: Path) -> GitReader:
    checkout = read_checkout(str(where))
    assert checkout is not None
    return GitReader(checkout, load_facts(memory).repo(checkout.repo))


def test_a_feature_branch_turn_is_labelled_until_its_work_merges(tmp_path: Path, memory: Path) -> None:
    repo = Repo(tmp_path / "app")
    repo.commit(repo.root, {"a.py": "x = 1\n"}, "first", T0)
    feature = repo.worktree(tmp_path / "feature", "feature/x", at=T0)
    common = str((repo.root / ".git").resolve())
    decided = [(GitContext(common, "feature/x"), float(T0 + 100))]
    location = read_checkout(str(repo.root))
    assert location is not None

    refresh(memory, location.location)
    assert _reader(memory, repo.root).label(decided) == GitLabel("feature/x", False, True, "main")
    assert _reader(memory, feature).label(decided) == GitLabel("feature/x", True, True, "feature/x")

    repo.commit(feature, {"queue.py": "OBAN = True\n"}, "use Oban", T0 + 200)
    refresh(memory, location.location)
    assert _reader(memory, repo.root).label(decided) == GitLabel("feature/x", False, True, "main")

    repo.merge(repo.root, "feature/x", T0 + 300)
    refresh(memory, location.location)
    reader = _reader(memory, repo.root)
    assert reader.label(decided) == GitLabel("feature/x", True, True, "main")
    assert not reader.stale
    later = [(GitContext(common, "feature/x"), float(T0 + 250))]  # said after the work that merged
    assert reader.label(later) == GitLabel("feature/x", False, True, "main")


def test_a_reader_whose_head_moved_since_the_refresh_is_answered_approximately(
    tmp_path: Path, memory: Path
) -> None:
    repo = Repo(tmp_path / "app")
    repo.commit(repo.root, {"a.py": "x = 1\n"}, "first", T0)
    feature = repo.worktree(tmp_path / "feature", "feature/x", at=T0)
    repo.commit(feature, {"b.py": "y = 1\n"}, "work", T0 + 200)
    repo.merge(repo.root, "feature/x", T0 + 300)
    location = read_checkout(str(repo.root))
    assert location is not None
    refresh(memory, location.location)
    repo.commit(repo.root, {"c.py": "z = 1\n"}, "more", T0 + 400)  # not refreshed
    reader = _reader(memory, repo.root)
    common = str((repo.root / ".git").resolve())
    assert reader.label([(GitContext(common, "feature/x"), float(T0 + 100))]) == GitLabel(
        "feature/x", True, True, "main"
    )
    assert reader.stale  # the hook asks the worker for a refresh


def test_another_repository_is_labelled_and_one_this_machine_lacks_has_no_place(
    tmp_path: Path, memory: Path
) -> None:
    repo, other = Repo(tmp_path / "app"), Repo(tmp_path / "lib")
    repo.commit(repo.root, {"a.py": "x = 1\n"}, "first", T0)
    reader = _reader(memory, repo.root)
    there = str((other.root / ".git").resolve())
    assert reader.label([(GitContext(there, "main"), float(T0))]) == GitLabel("main", False, False, "main")
    assert reader.label([(GitContext("cwd:/elsewhere/app", "main"), float(T0))]) is None
    assert reader.label([(None, float(T0))]) is None
    own = str((repo.root / ".git").resolve())
    mixed = [(GitContext(there, "main"), float(T0)), (GitContext(own, "main"), float(T0))]
    assert reader.label(mixed) == GitLabel(
        "main", True, True, "main"
    )  # one record of its own makes it its own
