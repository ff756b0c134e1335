"""The shape cache: kept current by installs from the DAG view (only the new nodes written), trusted while
the session's evidence archive is as it recorded, rebuilt from the session files otherwise."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dagmem.memory.currency import SessionShape
from dagmem.memory.format import HomePaths, count_tokens
from dagmem.memory.policy import DagView
from dagmem.memory.shapes import ShapeCache, shapes_for
from dagmem.memory.store import FileSessionStore


def home_with_session(home: Path) -> FileSessionStore:
    store = FileSessionStore(home)
    store.append("s", "user", "Hello.")
    store.append("s", "assistant", "Hi.")
    paths = HomePaths(home).workspace
    paths.state.mkdir(parents=True)
    paths.sources.mkdir()
    paths.source("s").write_text("archive\n", encoding="utf-8")
    return store


def rows(home: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(HomePaths(home).workspace.shapes)
    try:
        return list(db.execute("SELECT pos, node FROM nodes WHERE session = 's' ORDER BY pos"))
    finally:
        db.close()


def test_a_reader_without_a_cache_reads_the_files_and_creates_nothing(tmp_path: Path) -> None:
    store = home_with_session(tmp_path)
    with shapes_for(tmp_path) as shapes:
        assert shapes("s") == SessionShape.from_snapshot(store.load("s"))
        assert shapes("nobody") is None
    assert not HomePaths(tmp_path).workspace.shapes.exists()


def test_an_install_appends_only_the_new_nodes_of_the_same_view(tmp_path: Path) -> None:
    store = home_with_session(tmp_path)
    view = DagView.from_nodes("s", store.load("s").nodes.values(), "w-0000000000000000", count_tokens)
    with ShapeCache(HomePaths(tmp_path).memory, store, writable=True) as cache:
        cache.update("s", view, head=view.node_at(1), known=2, spawned_from=None)
        first = rows(tmp_path)
        reply = store.append("s", "user", "More.")
        view.add(reply.id, reply.predecessor, tokens=1, role="user")
        cache.update("s", view, head=reply.id, known=3, spawned_from=None)
        assert rows(tmp_path)[:2] == first
        assert len(rows(tmp_path)) == 3
        with shapes_for(tmp_path) as reader:
            assert reader("s") == SessionShape.from_snapshot(store.load("s"))
        fresh = DagView.from_nodes("s", store.load("s").nodes.values(), "w-0000000000000000", count_tokens)
        cache.update("s", fresh, head=reply.id, known=3, spawned_from=None)  # another view: rewritten
        assert len(rows(tmp_path)) == 3


def test_rows_behind_the_archive_are_rebuilt_from_the_files(tmp_path: Path) -> None:
    store = home_with_session(tmp_path)
    view = DagView.from_nodes("s", store.load("s").nodes.values(), "w-0000000000000000", count_tokens)
    with ShapeCache(HomePaths(tmp_path).memory, store, writable=True) as cache:
        cache.update("s", view, head=None, known=2, spawned_from=None)  # a head the files do not say
        with shapes_for(tmp_path) as reader:
            cached = reader("s")
            assert cached is not None
            assert cached.head is None  # trusted: the archive is as the rows recorded
        with HomePaths(tmp_path).workspace.source("s").open("a", encoding="utf-8") as f:
            f.write("an install the cache missed\n")
        with shapes_for(tmp_path) as reader:
            rebuilt = reader("s")
            assert rebuilt is not None
            assert rebuilt.head == store.head("s")
        assert cache("s") == SessionShape.from_snapshot(store.load("s"))  # and written back
        assert cache.cached_head("s") == (True, store.head("s"))


def test_a_damaged_cache_is_started_again(tmp_path: Path) -> None:
    store = home_with_session(tmp_path)
    HomePaths(tmp_path).workspace.shapes.write_bytes(b"not a database at all" * 100)
    with ShapeCache(HomePaths(tmp_path).memory, store, writable=True) as cache:
        assert cache("s") == SessionShape.from_snapshot(store.load("s"))
    with shapes_for(tmp_path) as reader:
        assert reader.cached_head("s")[0]


def _installed(home: Path) -> FileSessionStore:
    """A session whose shape an install recorded (the writer's cache, then closed)."""
    store = home_with_session(home)
    view = DagView.from_nodes("s", store.load("s").nodes.values(), "w-0000000000000000", count_tokens)
    with ShapeCache(HomePaths(home).memory, store, writable=True) as cache:
        cache.update("s", view, head=view.node_at(1), known=2, spawned_from=None)
    return store


def _beside(home: Path) -> set[str]:
    return {p.name for p in HomePaths(home).workspace.state.iterdir()}


def test_a_read_only_reader_of_the_cache_creates_no_file(tmp_path: Path) -> None:
    store = _installed(tmp_path)
    before = _beside(tmp_path)
    assert before == {"shapes.sqlite3"}  # a rollback journal leaves nothing beside the database
    with shapes_for(tmp_path) as shapes:
        assert shapes._db is not None  # read from the cache itself, not from the files
        assert shapes.current("s") == SessionShape.from_snapshot(store.load("s"))
    assert _beside(tmp_path) == before


def test_a_cache_left_in_wal_mode_is_not_opened_by_a_reader_and_a_writer_turns_it_back(
    tmp_path: Path,
) -> None:
    store = _installed(tmp_path)
    path = HomePaths(tmp_path).workspace.shapes
    db = sqlite3.connect(path)  # what an older version left: a WAL database
    assert db.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    db.close()
    before = _beside(tmp_path)
    with shapes_for(tmp_path) as shapes:
        assert shapes._db is None  # it would create `-shm`: the files are read instead
        assert shapes("s") == SessionShape.from_snapshot(store.load("s"))
    assert _beside(tmp_path) == before
    ShapeCache(HomePaths(tmp_path).memory, store, writable=True).close()
    with shapes_for(tmp_path) as shapes:
        assert shapes._db is not None


def test_a_reader_in_the_session_uses_the_cache_only_while_the_head_is_the_one_it_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _installed(tmp_path)
    with shapes_for(tmp_path) as shapes:
        cached = shapes.current("s")
        assert cached is not None
        assert shapes.current("s") is cached  # memoised rows: no file read
        read: list[str] = []
        fresh = shapes.fresh

        def counted(sid: str) -> SessionShape | None:
            read.append(sid)
            return fresh(sid)

        monkeypatch.setattr(shapes, "fresh", counted)
        assert shapes.current("s", tip=cached.head) is cached
        assert read == []
        # A turn appended since the install moves the head: the files are read, the new head included.
        turn = store.append("s", "user", "A new question.")
        moved = shapes.current("s")
        assert moved is not None
        assert moved.head == turn.id
        assert turn.id in moved.predecessors
        assert read == ["s"]
        source = shapes.for_reader("s", turn.id)
        assert source("s") == moved
        # A tip the cache does not hold, with the head where it was recorded: the files too.
        side = store.append("s", "assistant", "A side note.", predecessor=cached.head, spawned=True)
        assert store.head("s") == turn.id
        assert shapes.current("s", tip=side.id) == SessionShape.from_snapshot(store.load("s"))
        # An install's own session is always read fresh: every node it has now, the side note too.
        assert side.id in shapes.reading_from("s")("s").predecessors  # type: ignore[union-attr]
