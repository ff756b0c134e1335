"""`dagmem import` writes its nodes without an fsync each, then makes them durable together (every N files
and once at the end), while the runtime's appends keep their fsync per turn.

fsyncs are counted where they happen (`os.fsync`, which the durable layer's fsync pool calls), each named by
the file or directory its fd is open on, so a test sees which names were made durable and when."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest

from dagmem import FileSessionStore
from dagmem.memory import faults
from dagmem.memory.adopt import Importer, SourceClock, import_into_store
from dagmem.memory.durable import _atomic as durable
from dagmem.memory.durable import is_temp_name

TURNS = 120


class Fsyncs:
    """Every `os.fsync` of the process while recording: the path its fd was open on, in order."""

    def __init__(self) -> None:
        self.paths: list[Path] = []
        self._guard = threading.Lock()

    def record(self, fd: int) -> None:
        path = Path(os.readlink(f"/proc/self/fd/{fd}"))
        with self._guard:
            self.paths.append(path)


@contextmanager
def counting_fsyncs() -> Iterator[Fsyncs]:
    seen = Fsyncs()
    real = os.fsync

    def fsync(fd: int) -> None:
        seen.record(fd)
        real(fd)

    with mock.patch.object(os, "fsync", fsync):
        yield seen


@contextmanager
def restarted() -> Iterator[None]:
    """As a new process after this one 'died': this pid's temp files count as a dead writer's."""
    real = durable.pid_alive
    me = os.getpid()
    with mock.patch.object(durable, "pid_alive", lambda pid: pid != me and real(pid)):
        yield


def transcript(path: Path, turns: int = TURNS) -> Path:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}: " + "word " * (i % 17)}
        for i in range(turns)
    ]
    path.write_text(json.dumps(messages))
    return path


def run_import(home: Path, path: Path) -> tuple[int, int]:
    """(turns added, turns already there)."""
    importer = Importer("openai", [path], session="chat")
    clock = SourceClock()
    report = import_into_store(importer, FileSessionStore(home, clock=clock), clock)
    assert report.problems == []
    return report.added, report.sessions["chat"].present


def home_files(home: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def test_import_fsyncs_every_file_and_directory_it_wrote_once_at_the_end_not_per_node(tmp_path: Path) -> None:
    path = transcript(tmp_path / "chat.json")
    home = tmp_path / "home"
    # File by file, as where there is no syncfs(2) (or a flush of fewer than SYNCFS_AT files).
    with counting_fsyncs() as fsyncs, mock.patch.object(durable, "SYNCFS_AT", TURNS * 10):
        assert run_import(home, path) == (TURNS, 0)
    session = home / "sessions" / "chat"
    nodes = sorted(p for p in (session / "history").rglob("*.json"))
    assert len(nodes) == TURNS
    synced = [p for p in fsyncs.paths if p.is_relative_to(home)]
    # Each node file and meta.json, by its own name, once: not each temp file before its rename.
    assert sorted(p for p in synced if p.suffix == ".json" and p.parent != session) == nodes
    assert synced.count(session / "meta.json") == 1
    assert not [p for p in synced if is_temp_name(p.name)]
    # Then each directory whose entries changed: the shards, history/, the session's, sessions/, home.
    directories = {p for p in synced if p.is_dir()}
    assert {p.parent for p in nodes} | {session / "history", session, home / "sessions", home} <= directories
    assert len(synced) == len(set(synced))  # each name once
    # The files before the directories: a name made durable only once its bytes are.
    first_dir = min(i for i, p in enumerate(synced) if p.is_dir())
    assert all(not p.is_dir() for p in synced[:first_dir])
    assert all(p.is_dir() for p in synced[first_dir:])


@pytest.mark.skipif(durable._syncfs() is None, reason="no syncfs(2) here")
def test_a_flush_of_many_files_syncs_the_filesystem_once_instead_of_an_fsync_each(tmp_path: Path) -> None:
    path = transcript(tmp_path / "chat.json")
    home = tmp_path / "home"
    sites: list[str] = []
    with counting_fsyncs() as fsyncs, faults.armed(sites.append):
        assert run_import(home, path) == (TURNS, 0)
    assert sites.count("flush:syncfs") == 1  # the one flush at the end: TURNS + 1 files, one filesystem
    assert "flush:fsync" not in sites
    assert "flush:dirsync" not in sites
    assert not [p for p in fsyncs.paths if p.is_relative_to(home)]


def test_a_bulk_block_flushes_every_n_files_and_at_its_end(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path / "home")
    unsynced_seen: list[int] = []
    with counting_fsyncs() as fsyncs, store.bulk(flush_every=10):
        for i in range(25):
            store.append("s", "user", f"turn {i}")
            on_disk = set((tmp_path / "home").rglob("*.json"))
            unsynced_seen.append(len(on_disk - set(fsyncs.paths)))
        inside = len(fsyncs.paths)
    assert max(unsynced_seen) <= 10  # never more than N files written and not durable
    assert inside > 0  # flushed inside the block, not only at its end
    written = set((tmp_path / "home").rglob("*.json"))
    assert written <= set(fsyncs.paths)  # and all of them at its end
    # Outside a bulk block an append is durable at once (temp file fsynced before its rename).
    with counting_fsyncs() as fsyncs:
        store.append("s", "user", "one more")
    assert len(fsyncs.paths) >= 2


def test_an_append_outside_a_bulk_block_is_durable_before_it_returns(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path / "home")
    store.append("s", "user", "first")
    with counting_fsyncs() as fsyncs:
        for i in range(5):
            store.append("s", "user", f"turn {i}")
            assert fsyncs.paths, "an append outside a bulk block returned before any fsync"
            fsyncs.paths.clear()


@pytest.mark.parametrize(
    "site", ["node:rename", "meta:rename", "flush:fsync", "flush:dirsync", "flush:syncfs"]
)
def test_a_crash_mid_import_then_a_rerun_gives_the_clean_home(tmp_path: Path, site: str) -> None:
    path = transcript(tmp_path / "chat.json")
    clean = tmp_path / "clean"
    run_import(clean, path)
    expected = home_files(clean)
    # Die at the k-th passage of the site: early, in the middle, near the end.
    hits = {
        "node:rename": TURNS,
        "meta:rename": 1,
        "flush:fsync": TURNS + 1,
        "flush:dirsync": 4,
        "flush:syncfs": 1,
    }[site]
    if site == "flush:syncfs" and durable._syncfs() is None:
        pytest.skip("no syncfs(2) here")
    # The flush's other way, file by file (where there is no syncfs), for its own sites.
    by_file = site in ("flush:fsync", "flush:dirsync")
    limit = mock.patch.object(durable, "SYNCFS_AT", TURNS * 10 if by_file else durable.SYNCFS_AT)
    for k in sorted({1, max(1, hits // 2), hits}):
        home = tmp_path / f"crash-{k}"
        seen = 0

        def hook(hit: str, k: int = k) -> None:
            nonlocal seen
            if hit == site:
                seen += 1
                if seen == k:
                    raise faults.InjectedCrash(hit)

        with faults.armed(hook), limit, pytest.raises(faults.InjectedCrash):
            run_import(home, path)
        with restarted():
            added, present = run_import(home, path)
        assert added + present == TURNS
        assert home_files(home) == expected, f"crash at {site} #{k}"
        assert FileSessionStore(home).load("chat").valid
