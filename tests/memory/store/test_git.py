"""The session git written in process (memory/store/_git.py): plain git reads what it writes."""

from __future__ import annotations

import signal
import subprocess
import sys
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


_KILLED_CHILD = """
import os, signal, sys
from pathlib import Path
from dagmem.memory import faults
from dagmem.memory.store import SessionGit

repo, site, turns = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
git = SessionGit(repo)
seen = 0

def die(hit: str) -> None:
    global seen
    if hit == site:
        seen += 1
        if seen == turns:
            os.kill(os.getpid(), signal.SIGKILL)  # a real death: no except block, no cleanup

with faults.armed(die):
    for turn in range(1, turns + 1):
        node = repo / f"history/0000/{turn:06d}-u-n{turn}.json"
        node.parent.mkdir(parents=True, exist_ok=True)
        node.write_text(f"turn {turn}\\n")
        (repo / "meta.json").write_text(f"head n{turn}\\n")
        git.commit([f"history/0000/{turn:06d}-u-n{turn}.json", "meta.json"], f"turn {turn}")
"""


@pytest.mark.parametrize("site", ["git:commit", "git:ref", "git:link"])
def test_a_process_killed_mid_commit_leaves_a_whole_history_and_no_lock(tmp_path: Path, site: str) -> None:
    # SIGKILL in the 5th commit: before its objects are written (git:commit), after they are all in
    # place (git:ref), or once the branch's new value is fsynced under the process's own name (git:link).
    repo = tmp_path / "repo"
    repo.mkdir()
    child = subprocess.run([sys.executable, "-c", _KILLED_CHILD, str(repo), site, "5"], check=False)
    assert child.returncode == -signal.SIGKILL
    assert git(repo, "log", "--format=%s").splitlines() == ["turn 4", "turn 3", "turn 2", "turn 1"]
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    # The branch names a complete commit: every object it reaches is there.
    reachable = [line.split()[0] for line in git(repo, "rev-list", "--objects", "HEAD").splitlines()]
    checked = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-check"],
        input="\n".join(reachable) + "\n", capture_output=True, text=True, check=True, env=_env(),
    ).stdout  # fmt: skip
    assert "missing" not in checked
    blob = git(repo, "hash-object", "history/0000/000005-u-n5.json").strip()
    present = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", blob], check=False, env=_env())
    assert (present.returncode == 0) == (site != "git:commit")  # the killed commit's objects, or none
    heads = repo / ".git" / "refs" / "heads"
    assert not (heads / "master.lock").exists()  # nothing held
    assert not (heads / "main.lock").exists()
    assert len(list(heads.glob("*.*-*.lock"))) == (site == "git:link")  # the dead process's new value
    again = SessionGit(repo)  # the restarted process commits at once (no stale lock to wait on)
    again.commit(["history/0000/000005-u-n5.json", "meta.json"], "turn 5")
    assert git(repo, "log", "--format=%s").splitlines()[:2] == ["turn 5", "turn 4"]
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    assert list(heads.glob("*.lock")) == []  # the dead process's leftover is swept


def test_every_object_is_fsynced_before_any_rename_and_the_branch_moves_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import threading

    repo = tmp_path / "repo"
    (repo / "history" / "0000").mkdir(parents=True)
    (repo / "history" / "0000" / "000001-u-n1.json").write_text("one\n")
    (repo / "meta.json").write_text("head n1\n")
    SessionGit(repo).ensure()
    events: list[tuple[str, str, int]] = []  # (call, path, thread)
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"), threading.get_ident()))
        real_fsync(fd)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        events.append(("replace", os.fspath(src), threading.get_ident()))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    SessionGit(repo).commit(["history/0000/000001-u-n1.json", "meta.json"], "turn 1")
    synced = [i for i, (call, path, _) in enumerate(events) if call == "fsync" and "/tmp_obj_" in path]
    renamed = [i for i, (call, path, _) in enumerate(events) if call == "replace" and "/tmp_obj_" in path]
    assert len(synced) == len(renamed) == 6  # 2 blobs, the shard's, history/'s and the root's trees, commit
    assert max(synced) < min(renamed)  # no object is named before every one of them is durable
    assert len({events[i][2] for i in synced}) > 1  # fsynced from several threads at once
    # The new fan-out directories' entries in objects/ are made durable in the same wait, before any rename.
    objects_dir = [
        i for i, (call, path, _) in enumerate(events) if call == "fsync" and path.endswith("/objects")
    ]
    assert len(objects_dir) == 1
    assert objects_dir[0] < min(renamed)
    value = [i for i, (call, path, _) in enumerate(events) if call == "fsync" and path.endswith(".lock")]
    assert len(value) == 1
    assert value[0] > max(renamed)  # the branch's new value, after the objects
    assert events[-1][0] == "replace"
    assert events[-1][1].endswith(".lock")  # the branch moves last
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""


def test_trees_are_byte_for_byte_what_git_itself_writes(tmp_path: Path) -> None:
    # git orders a directory "a" as "a/": after "a.b" and "a-b", before "a0". Each commit patches the
    # cached trees; git's own `write-tree` over the same files must give the same tree.
    repo = tmp_path / "repo"
    repo.mkdir()
    paths = ["a0", "a/c", "a.b", "b/a/x", "a-b", "b/a.x", "a/b/c", "b/a-", "meta.json", "a", "b/a/y"]
    paths.remove("a")  # a file and a directory cannot share the name "a"
    session = SessionGit(repo)
    for round_ in range(2):
        for i, relpath in enumerate(paths):
            (repo / relpath).parent.mkdir(parents=True, exist_ok=True)
            (repo / relpath).write_text(f"{relpath} {round_} {i}\n")
            session.commit([relpath], f"{relpath} {round_}")
            git(repo, "add", "-A")  # the same files, staged by git
            assert git(repo, "rev-parse", "HEAD^{tree}") == git(repo, "write-tree"), relpath
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""


def test_a_commit_made_while_objects_are_written_is_kept_as_the_parent(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("one\n")
    session = SessionGit(repo)
    session.commit(["a.txt"], "first")
    (repo / "notes.txt").write_text("a person's own file\n")
    (repo / "a.txt").write_text("two\n")
    hand = ("-c", "user.name=person", "-c", "user.email=p@localhost", "commit", "-q", "-m", "by hand")

    def meanwhile(site: str) -> None:
        if site == "git:ref" and "by hand" not in git(repo, "log", "--format=%s"):
            git(repo, "add", "notes.txt")  # between our read of the branch and our lock on it
            git(repo, *hand)

    with faults.armed(meanwhile):
        session.commit(["a.txt"], "second")
    assert git(repo, "log", "--format=%s").splitlines() == ["second", "by hand", "first"]
    assert git(repo, "show", "HEAD:notes.txt") == "a person's own file\n"
    assert git(repo, "show", "HEAD:a.txt") == "two\n"
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""


def test_a_long_lived_session_commits_on_after_git_gc_packed_and_pruned_under_it(tmp_path: Path) -> None:
    # The same process goes on: its cached trees name packed objects, the loose fan-out directories and
    # the loose branch file are gone (`git gc` packs refs too).
    store = _store(tmp_path)
    for i in range(5):
        store.append("s", "user", f"turn {i}")
    repo = store.path("s")
    git(repo, "gc", "-q", "--prune=now")
    assert [p for p in (repo / ".git" / "objects").iterdir() if len(p.name) == 2] == []
    store.append("s", "assistant", "after gc")
    assert git(repo, "log", "-1", "--format=%s") == "turn 6: assistant n6\n"
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "6"
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    assert git(repo, "status", "--porcelain") == ""


def test_new_objects_names_exactly_the_loose_objects_each_commit_added(tmp_path: Path) -> None:
    # The simulator's growth measurement stats these files instead of rescanning objects/ per commit.
    repo = tmp_path / "repo"
    repo.mkdir()
    session = SessionGit(repo)

    def loose() -> set[str]:
        objects = repo / ".git" / "objects"
        return {str(p) for p in objects.glob("??/*") if p.is_file()}

    before = loose()
    for i in range(6):
        (repo / "history" / f"{i % 2:04d}").mkdir(parents=True, exist_ok=True)
        (repo / "history" / f"{i % 2:04d}" / f"{i}.json").write_text(f"turn {i}\n")
        (repo / "meta.json").write_text("same bytes every time\n")  # its blob exists after the first commit
        session.commit([f"history/{i % 2:04d}/{i}.json", "meta.json"], f"turn {i}")
        after = loose()
        assert set(session.new_objects) == after - before, i
        before = after
