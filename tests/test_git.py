"""The session git written in process (memory/store/_git.py): plain git reads what it writes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from dagmem.memory import faults
from dagmem.memory.store import FileSessionStore, SessionGit
from dagmem.memory.store._git import _env


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=_env()
    ).stdout


def _store(home: Path) -> FileSessionStore:
    return FileSessionStore(home, git=True)


def test_every_turn_is_a_commit_that_plain_git_reads_back_byte_for_byte(tmp_path: Path) -> None:
    store = _store(tmp_path)
    nodes = [store.append("s", "user" if i % 2 == 0 else "assistant", f"turn {i} ✓") for i in range(300)]
    repo = store.path("s")
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "300"
    assert git(repo, "log", "-1", "--format=%s%n%an <%ae>").splitlines() == [
        f"turn 300: assistant {nodes[-1].id}",
        "dagmem <dagmem@localhost>",
    ]
    # Across the shard boundary at seq 256 too: each commit holds the files as written.
    for node in (nodes[0], nodes[254], nodes[255], nodes[-1]):
        shown = subprocess.run(
            ["git", "-C", str(repo), "show", f"HEAD:{node.relpath}"], capture_output=True, check=True
        ).stdout
        assert shown == (repo / node.relpath).read_bytes()
    assert git(repo, "ls-tree", "--name-only", "HEAD:history").split() == ["0000", "0001"]
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    assert git(repo, "status", "--porcelain") == ""


def test_marks_and_head_moves_are_committed_and_the_index_stays_clean(tmp_path: Path) -> None:
    store = _store(tmp_path)
    first = store.append("s", "user", "question")
    second = store.append("s", "assistant", "answer")
    store.merge_node_metadata("s", {first.id: {"memory_written_dagmem": "w-0123456789abcdef"}})
    store.set_head("s", first.id)
    repo = store.path("s")
    assert git(repo, "log", "--format=%s").splitlines() == [
        f"head: {first.id}",
        "mark: 1 nodes",
        f"turn 2: assistant {second.id}",
        f"turn 1: user {first.id}",
    ]
    assert git(repo, "diff", "--name-only", "HEAD~2", "HEAD~1").split() == [first.relpath]
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""


def test_a_commit_made_by_another_process_is_kept_as_the_parent(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append("s", "user", "one")
    repo = store.path("s")
    (repo / "notes.txt").write_text("a person's own file\n")
    git(repo, "add", "notes.txt")
    git(repo, "-c", "user.name=person", "-c", "user.email=p@localhost", "commit", "-q", "-m", "by hand")
    store.append("s", "assistant", "two")
    assert git(repo, "log", "--format=%s").splitlines()[:2] == ["turn 2: assistant n2", "by hand"]
    assert git(repo, "show", "HEAD:notes.txt") == "a person's own file\n"  # the cached trees were re-read
    assert git(repo, "status", "--porcelain") == ""


def test_after_git_gc_packs_everything_commits_go_on(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for i in range(20):
        store.append("s", "user", f"turn {i}")
    repo = store.path("s")
    git(repo, "gc", "-q", "--prune=now")
    fresh = _store(tmp_path)  # a new process: nothing cached, every tree it needs is in a pack
    fresh.append("s", "assistant", "after gc")
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "21"
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD").count("\n") == 22  # 21 nodes + meta.json
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    assert git(repo, "status", "--porcelain") == ""


def test_a_history_begun_by_the_git_command_line_continues(tmp_path: Path) -> None:
    # Homes written before: `git add` + `git commit` with core.splitIndex.
    store = FileSessionStore(tmp_path, git=False)
    store.append("s", "user", "old turn")
    repo = store.path("s")
    git(repo, "init", "-q")
    git(repo, "config", "core.splitIndex", "true")
    git(repo, "add", "-A", "--", ".", ":!.lock")  # homes of then had no session lock file
    git(repo, "-c", "user.name=dagmem", "-c", "user.email=dagmem@localhost", "commit", "-q", "-m", "turn 1")
    _store(tmp_path).append("s", "assistant", "new turn")
    assert git(repo, "log", "--format=%s").splitlines() == ["turn 2: assistant n2", "turn 1"]
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize("site", ["git:add", "git:commit"])
def test_a_crash_before_the_ref_moves_leaves_the_last_commit_whole(tmp_path: Path, site: str) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("one\n")
    first = SessionGit(repo)
    first.commit(["a.txt"], "first")
    (repo / "a.txt").write_text("two\n")
    with faults.armed(faults.crash_once(site)), pytest.raises(faults.InjectedCrash):
        first.commit(["a.txt"], "second")
    assert git(repo, "log", "--format=%s").splitlines() == ["first"]
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    again = SessionGit(repo)  # the restarted process
    again.commit(["a.txt"], "second")
    assert git(repo, "log", "--format=%s").splitlines() == ["second", "first"]
    assert git(repo, "show", "HEAD:a.txt") == "two\n"


def test_objects_and_the_ref_are_fsynced_as_core_fsync_added_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("one\n")
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    SessionGit(repo).ensure()
    monkeypatch.setattr(os, "fsync", fsync)
    SessionGit(repo).commit(["a.txt"], "first")
    objects = [path for path in synced if "/objects/" in path and "/tmp_obj_" in path]
    assert len(objects) == 3  # the blob, the root tree, the commit: each before its rename
    assert synced[-1].endswith(".lock")  # the branch's new value, before its rename, last
    assert git(repo, "config", "core.fsync").strip() == "added"
