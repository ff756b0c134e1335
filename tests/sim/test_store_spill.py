"""The simulator's in-memory store spills the sessions no actor holds to a scratch file: nothing of a
session is lost or changed by it, and a spilled session leaves memory."""

from __future__ import annotations

from pathlib import Path

from dagmem.memory.format import HEAD
from dagmem.sim._recording import SimStore


def _fill(store: SimStore, sid: str, forget_each: bool) -> None:
    """A trunk, a fork from its middle, a mark and a head move; `forget_each` spills after every call."""
    trunk = []
    for i in range(6):
        trunk.append(store.append(sid, "user" if i % 2 == 0 else "assistant", f"{sid} turn {i}").id)
        if forget_each:
            store.forget(sid)
    fork = store.append(sid, "user", f"{sid} asked again", predecessor=trunk[2])
    if forget_each:
        store.forget(sid)
    store.update_node_metadata(sid, trunk[:3], lambda _id, metadata: {**metadata, "seen": True})
    if forget_each:
        store.forget(sid)
    store.set_head(sid, fork.id)
    store.append(sid, "assistant", f"{sid} answered", predecessor=HEAD)


def _files(store: SimStore) -> dict[str, dict[str, bytes | None]]:
    out: dict[str, dict[str, bytes | None]] = {}
    for sid in store.recorder.sessions():
        paths = ["meta.json", *store.recorder.history(sid)]
        out[sid] = {path: store.recorder.read(sid, path) for path in paths}
    return out


def test_a_spilled_session_reads_back_byte_for_byte_and_takes_writes(tmp_path: Path) -> None:
    plain = SimStore(clock=lambda: 1_000.0)
    spilling = SimStore(clock=lambda: 1_000.0, spill_to=tmp_path / "spill")
    for store, forget_each in ((plain, False), (spilling, True)):
        for sid in ("s1", "s2", "s3"):
            _fill(store, sid, forget_each)
    spilling.forget("s2")
    assert spilling.memory is not None
    assert "s2" not in spilling.memory.files
    assert spilling.recorder.sessions() == ["s1", "s2", "s3"]  # in the order they were made
    assert spilling.recorder.exists("s2")
    assert not spilling.recorder.exists("s4")
    assert _files(spilling) == _files(plain)
    assert "s2" not in spilling.memory.files  # reading it back (the oracle does) does not hold it again
    assert sorted(spilling.load("s2").nodes) == sorted(plain.load("s2").nodes)
    assert spilling.load("s2").meta.head == plain.load("s2").meta.head
    spilling.append("s2", "user", "after the spill", predecessor=HEAD)
    plain.append("s2", "user", "after the spill", predecessor=HEAD)
    assert "s2" in spilling.memory.files
    spilling.forget("s2")
    assert _files(spilling) == _files(plain)
    spilling.close()


def test_without_a_scratch_file_forget_keeps_the_session_in_memory() -> None:
    store = SimStore(clock=lambda: 1_000.0)
    _fill(store, "s1", forget_each=True)
    assert store.memory is not None
    assert "s1" in store.memory.files
