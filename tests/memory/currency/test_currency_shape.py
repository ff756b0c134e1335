"""A session's shape from its files and from the session actor's DAG view agree, and the view's shape
stays what it was when the view grows."""

from __future__ import annotations

from pathlib import Path

from dagmem.memory.currency import SessionShape, left_nodes
from dagmem.memory.format import count_tokens
from dagmem.memory.policy import DagView
from dagmem.memory.store import FileSessionStore


def test_the_snapshot_and_the_dag_view_give_the_same_shape(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    u = store.append("s", "user", "Lisbon, please.")
    a = store.append("s", "assistant", "Lisbon in May.")
    store.append("s", "user", "Kyoto, please.", predecessor=u.predecessor)  # a new root: None -> side
    side = store.append("s", "tool", "sub-agent notes", predecessor=a.id, spawned=True)
    edited = store.append("s", "user", "Porto, please.", predecessor=a.id)
    snapshot = store.load("s")
    from_files = SessionShape.from_snapshot(snapshot)
    view = DagView.from_nodes("s", snapshot.nodes.values(), "w-0000000000000000", count_tokens)
    from_view = SessionShape.from_dag(view, snapshot.meta.head)
    assert from_files.head == edited.id == from_view.head
    assert dict(from_files.predecessors) == dict(from_view.predecessors)
    assert dict(from_files.roles) == dict(from_view.roles)
    assert from_files.spawned == from_view.spawned == {side.id}
    assert left_nodes(from_files) == left_nodes(from_view)
    # the order said, from either: what puts a side branch's statement before or after another
    order = [u.id, a.id, side.id, edited.id]
    assert [from_files.position(n) for n in order] == sorted(from_files.position(n) or 0 for n in order)
    assert [from_files.position(n) for n in snapshot.nodes] == [from_view.position(n) for n in snapshot.nodes]
    assert from_files.position("missing") is None is from_view.position("missing")


def test_a_view_shape_shows_the_nodes_it_knew() -> None:
    view = DagView("s")
    view.add("r", None, tokens=3, role="user")
    shape = SessionShape.from_dag(view, "r", known=len(view))
    view.add("a", "r", tokens=3, role="assistant")
    assert "a" not in shape.predecessors
    assert shape.position("r") == 0
    assert shape.position("a") is None  # added after the shape was taken
    assert list(shape.predecessors) == ["r"]
    assert len(shape.roles) == 1
    assert SessionShape.from_dag(view, "a").roles["a"] == "assistant"
