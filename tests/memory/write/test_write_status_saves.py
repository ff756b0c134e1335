"""`status.json` as the batch writer saves it: in a pass, a success right after a success (within
`STATUS_EVERY` of the last save, on the workspace's clock) only moves `last_success_at`, so it is saved
with the next save or when the writer closes, not on its own; any other outcome is saved at once. A
runtime's writer (not a pass's) saves every outcome: it may sit idle for hours before it closes."""

from __future__ import annotations

from pathlib import Path

from dagmem import FileSessionStore
from dagmem.memory.durable import load_status
from dagmem.memory.policy import Batch
from dagmem.memory.store import FakeClock
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import ExtractiveDistiller
from dagmem.memory.write._batch_writer import STATUS_EVERY, BatchWriter


def batch_of(store: FileSessionStore, session: str, k: int) -> Batch:
    ids = tuple(
        store.append(session, role, f"turn {k}-{n}: the trams of Lisbon climb the hills, line {k}{n}").id
        for n, role in enumerate(("user", "assistant"))
    )
    return Batch(session, ids, tokens=40, target=ids[-1], forced=True)


def test_successes_in_a_row_are_saved_at_most_once_a_second_and_the_last_on_close(tmp_path: Path) -> None:
    clock = FakeClock(step=0)
    store = FileSessionStore(tmp_path)
    with Workspace(tmp_path / "memory", clock=clock) as workspace:
        status = workspace.status_path
        with BatchWriter(workspace, store, ExtractiveDistiller(), one_pass=True) as writer:
            assert writer.apply(batch_of(store, "a", 1)).failure is None
            first = clock.now
            assert load_status(status).last_success_at == first  # the first success: saved at once
            clock.now += STATUS_EVERY / 4
            assert writer.apply(batch_of(store, "b", 2)).failure is None
            assert writer.status.last_success_at == clock.now  # in memory at once
            assert load_status(status).last_success_at == first  # on disk with the next save
            clock.now += STATUS_EVERY
            assert writer.apply(batch_of(store, "c", 3)).failure is None
            assert load_status(status).last_success_at == clock.now  # a second after: saved
            clock.now += STATUS_EVERY / 4
            assert writer.apply(batch_of(store, "d", 4)).failure is None
            assert load_status(status).last_success_at == clock.now - STATUS_EVERY / 4
        assert load_status(status).last_success_at == clock.now  # saved on close
        assert load_status(status).last_outcome == "success"


def test_a_runtimes_writer_saves_every_success(tmp_path: Path) -> None:
    clock = FakeClock(step=0)
    store = FileSessionStore(tmp_path)
    with Workspace(tmp_path / "memory", clock=clock) as workspace:
        with BatchWriter(workspace, store, ExtractiveDistiller()) as writer:
            for k in range(3):
                clock.now += STATUS_EVERY / 4
                assert writer.apply(batch_of(store, f"s{k}", k)).failure is None
                assert load_status(workspace.status_path).last_success_at == clock.now
