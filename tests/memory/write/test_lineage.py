"""The path a distiller may ask for (`lineage`): from the DAG the session's actor holds, no node file read."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.memory.format import anchor_of, count_tokens
from dagmem.memory.policy import DagView, SessionPlanner
from dagmem.memory.write._lineage import lineage


def forked_store(tmp_path: Path) -> FileSessionStore:
    store = FileSessionStore(tmp_path / "home", fsync=False)
    for i in range(30):
        store.append("s", "user" if i % 2 == 0 else "assistant", f"turn {i}")
    store.append("s", "user", "a fork", predecessor="n10")
    return store


def test_lineage_from_the_actors_dag_reads_no_node_file_and_equals_the_store_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = forked_store(tmp_path)
    snapshot = store.load("s")
    view = DagView.from_nodes("s", snapshot.nodes.values(), "w-0000000000000000", count_tokens)
    batch_nodes = store.read_nodes("s", ["n25", "n26", "n27"])
    from_files = lineage(store, "s", batch_nodes)
    assert from_files == frozenset(anchor_of(f"s/n{i}") for i in range(1, 28))

    def no_reads(*_: object) -> object:
        raise AssertionError("a node file was read")

    monkeypatch.setattr(store, "read_nodes", no_reads)
    assert lineage(store, "s", batch_nodes, view) == from_files


def test_a_planned_batch_carries_the_dag_it_was_planned_from(tmp_path: Path) -> None:
    store = forked_store(tmp_path)
    snapshot = store.load("s")
    view = DagView.from_nodes("s", snapshot.nodes.values(), "w-0000000000000000", count_tokens)
    planner = SessionPlanner(view, snapshot.meta.head, threshold=1)
    planner.check_all_tips()
    batch = planner.next_batch(now=0.0)
    assert batch is not None
    assert batch.dag is view
