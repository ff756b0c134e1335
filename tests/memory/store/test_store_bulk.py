"""`FileSessionStore.bulk`: meta.json written once per flush (not per node), each session's lock held from
its first write in a flush window to the flush, and what a crash before a flush leaves: valid sessions
whose meta.json is behind their nodes, which `catch_up` (an import's rerun) finishes."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.memory import faults
from dagmem.memory.store import FakeClock


def test_a_bulk_run_writes_meta_json_once_per_flush_with_the_head_and_time_of_its_last_append(
    tmp_path: Path,
) -> None:
    store = FileSessionStore(tmp_path, clock=FakeClock())
    meta_writes = 0

    def count(site: str) -> None:
        nonlocal meta_writes
        meta_writes += site == "meta:rename"

    with faults.armed(count), store.bulk(flush_every=10):
        ids = [store.append("s", "user", f"turn {i}").id for i in range(25)]
    assert meta_writes == 3  # the flushes after the 10th and 20th node, and the end
    meta = FileSessionStore(tmp_path).meta("s")
    last = FileSessionStore(tmp_path).read_nodes("s", [ids[-1]])[0]
    assert (meta.head, meta.updated_at) == (ids[-1], last.created_at)
    assert FileSessionStore(tmp_path).load("s").valid


def test_a_crash_before_the_flush_leaves_a_valid_session_that_catch_up_finishes(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path, clock=FakeClock())
    first = store.append("s", "user", "durable before the bulk run")

    def crash_at_the_end(site: str) -> None:
        if site == "meta:rename":
            raise faults.InjectedCrash(site)

    def bulk_run() -> None:
        with store.bulk():
            for i in range(5):
                store.append("s", "user", f"turn {i}")

    with faults.armed(crash_at_the_end), pytest.raises(faults.InjectedCrash):
        bulk_run()
    reader = FileSessionStore(tmp_path)
    snapshot = reader.load("s")
    assert snapshot.valid
    assert len(snapshot.nodes) == 6
    assert snapshot.meta.head == first.id  # meta.json is behind: it names the head it had, a node on disk
    last = max(snapshot.nodes.values(), key=lambda node: node.seq)
    assert snapshot.meta.updated_at != last.created_at
    assert reader.catch_up("s") is True
    assert FileSessionStore(tmp_path).meta("s").updated_at == last.created_at
    assert FileSessionStore(tmp_path).catch_up("s") is False  # in step: left alone


def test_a_session_with_nodes_and_no_meta_json_takes_its_times_from_its_first_and_last_nodes(
    tmp_path: Path,
) -> None:
    store = FileSessionStore(tmp_path, clock=FakeClock())
    nodes = [store.append("s", "user", f"turn {i}") for i in range(3)]
    (tmp_path / "sessions" / "s" / "meta.json").unlink()  # as a crash before the first flush leaves it
    meta = FileSessionStore(tmp_path, clock=lambda: 9e9).meta("s")
    assert (meta.created_at, meta.updated_at) == (nodes[0].created_at, nodes[-1].created_at)


def test_a_bulk_run_holds_each_session_lock_until_its_flush(tmp_path: Path) -> None:
    import fcntl
    import os

    store = FileSessionStore(tmp_path, clock=FakeClock())
    lock = tmp_path / "sessions" / "s" / ".lock"

    def free() -> bool:
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        finally:
            os.close(fd)
        return True

    with store.bulk(flush_every=3):
        store.append("s", "user", "one")
        assert not free()  # held across appends inside the window
        store.append("s", "user", "two")
        store.append("s", "user", "three")  # the flush is due: written, synced, let go
        assert free()
        store.append("s", "user", "four")
        assert not free()
    assert free()
    generation = int(lock.read_text())
    assert generation == 2  # bumped once per window, not once per append
