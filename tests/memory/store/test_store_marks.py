"""Marking a batch (DESIGN §4, step 3) as one batched durable rewrite: every node file is rewritten through
a temp file that is fsynced before its rename, and each shard directory is fsynced once for the batch.

The home: session `s` has 200 turns written and marked by an earlier pass, then 100 more (seqs 201-300),
so the batch a second pass writes and marks crosses from shard `0000` into shard `0001` (256 a shard).
The crash test kills a real write pass with SIGKILL (the process sends it to itself at a named fault site:
the kernel ends it there, with no Python cleanup) and checks every node file is its old bytes or its new,
then that a redo marks the batch without distilling it again.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dagmem.memory.durable import is_temp_name
from dagmem.memory.format import SHARD_SIZE, shard_of
from dagmem.memory.store import FileSessionStore
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import BatchInput, ExtractiveDistiller, TopicReader, mark_nodes
from dagmem.memory.writing import write_home
from dagmem.sim import check_home

THRESHOLD = 100_000  # tokens: the whole owed run of the session is one batch
EARLIER, LATER = 200, 100
SUBJECTS = ("lisbon", "garden", "violin", "tram")


def turns(store: FileSessionStore, start: int, count: int) -> None:
    for k in range(start, start + count):
        role = "user" if k % 2 else "assistant"
        subject = SUBJECTS[k % len(SUBJECTS)]
        store.append("s", role, f"Turn {k} is about the {subject}, the {subject} again.", node_id=f"n{k}")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Turns 1-200 written and marked; turns 201-300 owed."""
    home = tmp_path_factory.mktemp("marks") / "home"
    store = FileSessionStore(home, fsync=False)
    turns(store, 1, EARLIER)
    write_home(home, force=True, threshold=THRESHOLD)
    turns(store, EARLIER + 1, LATER)
    assert shard_of(EARLIER + 1) != shard_of(EARLIER + LATER) == f"{(EARLIER + LATER) // SHARD_SIZE:04d}"
    return home


def node_files(home: Path) -> dict[str, bytes]:
    history = home / "sessions" / "s" / "history"
    return {
        p.relative_to(history).as_posix(): p.read_bytes()
        for p in sorted(history.rglob("*.json"))
        if not is_temp_name(p.name)
    }


def temps(home: Path) -> list[Path]:
    return [p for p in (home / "sessions").rglob("*") if is_temp_name(p.name)]


def txlog_lines(home: Path) -> int:
    return len((home / "memory" / ".dagmem" / "txlog.jsonl").read_bytes().splitlines())


@pytest.fixture(scope="module")
def reference(template: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The node files after a clean second pass."""
    home = tmp_path_factory.mktemp("reference") / "home"
    shutil.copytree(template, home)
    write_home(home, force=True, threshold=THRESHOLD)
    return node_files(home)


@pytest.fixture
def directory_fsyncs(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every fsync of a directory, by path (files are counted under "<files>")."""
    seen: Counter[str] = Counter()
    real = os.fsync

    def fsync(fd: Any) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            seen[os.readlink(f"/proc/self/fd/{fd}")] += 1
        else:
            seen["<files>"] += 1
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return seen


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names an fd's directory through /proc")
def test_a_batch_of_marks_across_two_shards_fsyncs_each_shard_directory_once(
    template: Path, tmp_path: Path, directory_fsyncs: Counter[str]
) -> None:
    home = tmp_path / "home"
    shutil.copytree(template, home)
    store = FileSessionStore(home)
    history = (home / "sessions" / "s" / "history").resolve()
    ids = [f"n{k}" for k in range(EARLIER + 1, EARLIER + LATER + 1)]
    changed = mark_nodes(store, "s", ids, "w-other")
    assert changed == ids
    assert directory_fsyncs == Counter({"<files>": LATER, str(history / "0000"): 1, str(history / "0001"): 1})


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names an fd's directory through /proc")
def test_the_write_pass_marks_its_batch_with_one_fsync_per_shard_directory(
    template: Path, tmp_path: Path, directory_fsyncs: Counter[str], reference: dict[str, bytes]
) -> None:
    home = tmp_path / "home"
    shutil.copytree(template, home)
    write_home(home, force=True, threshold=THRESHOLD)
    sessions = str((home / "sessions").resolve())
    in_sessions = {path: n for path, n in directory_fsyncs.items() if path.startswith(sessions)}
    history = f"{sessions}/s/history"
    assert in_sessions == {f"{history}/0000": 1, f"{history}/0001": 1}
    assert node_files(home) == reference


CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from dagmem.memory import faults
    from dagmem.memory.writing import write_home

    home, site, occurrence, threshold = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    seen = 0

    def hook(hit):
        global seen
        if hit == site:
            seen += 1
            if seen == occurrence:
                os.kill(os.getpid(), signal.SIGKILL)

    with faults.armed(hook):
        write_home(home, force=True, threshold=threshold)
    """
)


class Counting(ExtractiveDistiller):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def distill(self, batch: BatchInput, reader: TopicReader) -> Mapping[str, str | None]:
        self.calls += 1
        return super().distill(batch, reader)


# The second pass marks its 100 nodes in one store call: 100 temp files written, 100 fsynced, renamed one by
# one (55 into shard 0000, then 45 into 0001), then both shard directories fsynced.
KILLS = [
    ("mark:write", 1),  # the first temp file made, nothing in it yet
    ("mark:write", 60),  # 59 temp files whole, the 60th empty
    ("mark:fsync", 100),  # every temp file written, 99 fsyncs passed
    ("mark:rename", 1),  # every temp file durable, none renamed
    ("mark:rename", 56),  # shard 0000 renamed, shard 0001 not
    ("mark:rename", 100),  # all but the last renamed
    ("mark:dirsync", 2),  # all renamed, one shard directory fsynced
]


@pytest.mark.parametrize(("site", "occurrence"), KILLS, ids=[f"{site}#{k}" for site, k in KILLS])
def test_sigkill_mid_mark_leaves_each_node_file_old_or_new_and_the_redo_only_marks(
    site: str, occurrence: int, template: Path, reference: dict[str, bytes], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(template, home)
    before = node_files(home)
    lines = txlog_lines(home)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(home), site, str(occurrence), str(THRESHOLD)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert txlog_lines(home) == lines + 1  # the batch was committed before its marks

    after = node_files(home)
    assert sorted(after) == sorted(before) == sorted(reference)
    new = [name for name in after if after[name] == reference[name] != before[name]]
    old = [name for name in after if after[name] == before[name]]
    assert len(old) + len(new) == len(after), "a node file that is neither its old bytes nor its new"
    renamed = 0 if site != "mark:rename" else occurrence - 1
    if site == "mark:dirsync":
        renamed = LATER
    assert len(new) == renamed
    # The temp files of the nodes not renamed yet (made so far) stay behind for the sweep.
    expected_temps = {"mark:write": occurrence, "mark:fsync": LATER}.get(site, LATER - renamed)
    assert len(temps(home)) == expected_temps

    distiller = Counting()
    results = write_home(home, force=True, threshold=THRESHOLD, distiller=distiller)
    assert [r.outcome for r in results] == ["nothing-due" if renamed == LATER else "written"]
    assert distiller.calls == 0  # the records were consumed: the redo only marks
    assert txlog_lines(home) == lines + 1
    assert node_files(home) == reference
    assert temps(home) == []
    with Workspace(home / "memory") as workspace:
        workspace_id = workspace.workspace_id
    report = check_home(FileSessionStore(home), home / "memory", workspace_id, drained=True)
    assert report.violations == []
    assert report.owed == []
