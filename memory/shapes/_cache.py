"""The shape cache: one row per session (head, where it was spawned from, how many nodes, the size of its
evidence archive when written) and one row per node (predecessor, role, side-branch mark), in the order
the writer's DAG view added them.

It is a cache: the session files are the truth. An install appends the nodes its session's DAG gained
since the last install (the same view object: O(new nodes)) or rewrites the session's rows (a view it
has not fed before: an actor restarted, another process wrote). A reader trusts a session's rows while
its evidence archive (`sources/<sid>.md`, which every install appends to first) has the size the rows
recorded; otherwise, or when the rows are missing, it rebuilds the shape from the session's files
(and writes it back when the cache is writable). A head moved with no install since is not seen until
that session's next install: the cache is as current as the memory it describes. A reader *in* a session
needs more, its own head as of now: its rows serve it only while the session's `meta.json` names the head
they recorded (and they hold the reader's tip); otherwise it reads the session's files (`current`).

The database keeps a rollback journal, not a write-ahead log: a reader of a WAL database creates its
`-shm` file even when it opens it read-only, and a reader creates nothing. A reader opens the cache only
when its header says rollback journal (trying again on its next read while it does not), and reads the
files otherwise; a writer turns a WAL cache of an older version into a rollback one when it opens it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..currency import DagLike, SessionShape, ShapeSource, parse_spawned_from
from ..durable import read_regular
from ..errors import DagmemError
from ..format import HomePaths, WorkspacePaths, is_valid_id

if TYPE_CHECKING:
    from ..store import SessionStore

__all__ = ["ShapeCache", "shapes_for"]

log = logging.getLogger("dagmem.shapes")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (session TEXT PRIMARY KEY, head TEXT, spawned_from TEXT,
    count INTEGER NOT NULL, archive_size INTEGER NOT NULL, version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (session TEXT NOT NULL, pos INTEGER NOT NULL, node TEXT NOT NULL,
    predecessor TEXT, role TEXT NOT NULL, spawned INTEGER NOT NULL, PRIMARY KEY (session, pos));
"""

_Header = tuple[str | None, str | None, int, int, int]  # head, spawned_from, count, archive_size, version


class ShapeCache:
    """`ShapeSource` over a home's sessions: `cache(session_id)` -> its shape, or None for a session the
    store does not hold (or one whose files are invalid)."""

    def __init__(
        self, workspace: Path, store: SessionStore | Callable[[], SessionStore], *, writable: bool = False
    ) -> None:
        """`store`: the session store, or what makes it on first need (a reader whose rows are current
        never needs one, nor the imports behind it: the node models, pydantic)."""
        self.paths = WorkspacePaths(Path(workspace))
        self._store = store
        self.writable = writable
        self._lock = threading.RLock()
        self._db = self._connect()
        self._memo: dict[str, tuple[tuple[int, int], SessionShape]] = {}
        # session -> (the DAG view last fed, how many of its nodes the rows hold)
        self._fed: dict[str, tuple[weakref.ref[DagLike], int]] = {}

    def _connect(self) -> sqlite3.Connection | None:
        path = self.paths.shapes
        try:
            if self.writable:
                db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30.0)
                # Out of WAL (a cache of an older version) while no other connection holds it; a cache
                # still in WAL is read from the files by readers, never wrongly.
                db.execute("PRAGMA journal_mode=DELETE")
                db.execute("PRAGMA synchronous=OFF")  # a cache: a lost update is rebuilt from the files
                db.executescript(_SCHEMA)
                return db
            if not _readable_in_place(path):
                return None  # a reader never creates state: shapes are read from the files instead
            return sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None, timeout=1.0
            )
        except sqlite3.Error as exc:
            if self.writable:
                # An unreadable cache is rebuilt from the files.
                log.warning("shape cache %s unreadable (%s): starting it again", path, exc)
                for suffix in ("", "-wal", "-shm", "-journal"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
                with contextlib.suppress(sqlite3.Error):
                    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30.0)
                    db.executescript(_SCHEMA)
                    return db
            return None

    @property
    def store(self) -> SessionStore:
        if callable(self._store):
            self._store = self._store()
        return self._store

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> ShapeCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------------------

    def __call__(self, session_id: str) -> SessionShape | None:
        """The session's shape as of its last install; rebuilt from its files when the rows are missing
        or stale (O(1) queries when the memo holds it; O(its nodes) after an install or a rebuild)."""
        if not is_valid_id(session_id):
            return None
        archive_size = self._archive_size(session_id)
        header = self._header(session_id)
        if header is not None and header[3] == archive_size:
            key = (header[4], archive_size)
            memo = self._memo.get(session_id)
            if memo is not None and memo[0] == key:
                return memo[1]
            shape = self._read_rows(session_id, header)
            if shape is not None:
                self._memo[session_id] = (key, shape)
                return shape
        memo = self._memo.get(session_id)
        if memo is not None and memo[0] == (-1, archive_size):
            return memo[1]  # rebuilt from the files already, and nothing installed since
        shape = self.fresh(session_id)
        if shape is not None:
            self._memo[session_id] = ((-1, archive_size), shape)
            if self.writable:
                self._write_all(session_id, shape, archive_size)
        return shape

    def fresh(self, session_id: str) -> SessionShape | None:
        """The session's shape read from its files now (O(its nodes)); None when it is not there or its
        files are invalid."""
        if isinstance(self._store, _FileStore) and not self._store.holds(session_id):
            return None  # no session to read: the store is not made for that
        if not self.store.has_session(session_id):
            return None
        try:
            snapshot = self.store.load(session_id)
        except (DagmemError, OSError):
            return None
        if not snapshot.valid:
            return None
        return SessionShape.from_snapshot(snapshot)

    def current(self, session_id: str, tip: str | None = None) -> SessionShape | None:
        """The session's shape as a reader in it needs it: its cached rows while the session's head
        (in its `meta.json`, one small read) is the one they recorded and they hold `tip`; else its
        files, read fresh (a head moved since the last install, or a tip appended since)."""
        shape = self(session_id)
        if shape is None:
            return None
        if (tip is None or tip in shape.predecessors) and self._head_is(session_id, shape):
            return shape
        return self.fresh(session_id)

    def reading_from(self, session_id: str | None, live: ShapeSource | None = None) -> ShapeSource:
        """The source for an install in `session_id`: its own session fresh (`live` first, e.g. the
        session actor's view, then its files: every node it has now), every other from this cache."""

        def source(sid: str) -> SessionShape | None:
            if sid == session_id:
                shape = live(sid) if live is not None else None
                return shape if shape is not None else self.fresh(sid)
            return self(sid)

        return source

    def for_reader(
        self, session_id: str | None, tip: str | None = None, live: ShapeSource | None = None
    ) -> ShapeSource:
        """The source for a recall reader in `session_id` at `tip`: its own session as of now (`live`
        first, e.g. the session actor's view, then `current`: the cache while it is current for this
        reader), every other from this cache."""

        def source(sid: str) -> SessionShape | None:
            if sid == session_id:
                shape = live(sid) if live is not None else None
                return shape if shape is not None else self.current(sid, tip)
            return self(sid)

        return source

    def _head_is(self, session_id: str, shape: SessionShape) -> bool:
        """Whether the session's head and origin are still those of `shape` (False when unsure)."""
        meta_file = self._meta_file(session_id)
        if meta_file is None:
            return self.store.head(session_id) == shape.head  # held in memory: no file to read
        try:
            data = read_regular(meta_file)
            meta = json.loads(data) if data is not None else None
        except (OSError, ValueError, DagmemError):
            return False
        if not isinstance(meta, dict):
            return False
        spawned_from = meta.get("spawned_from")
        return (
            meta.get("head") == shape.head
            and (parse_spawned_from(spawned_from) if isinstance(spawned_from, str) else None)
            == shape.spawned_from
        )

    def _meta_file(self, session_id: str) -> Path | None:
        """The session's `meta.json`, or None for a store that keeps sessions in memory."""
        if isinstance(self._store, _FileStore):
            return self._store.meta_file(session_id)  # the store is not made for a path
        from ..store import FileSessionStore

        store = self.store
        return store.path(session_id, "meta.json") if isinstance(store, FileSessionStore) else None

    def _archive_size(self, session_id: str) -> int:
        try:
            return self.paths.source(session_id).stat().st_size
        except OSError:
            return -1

    def _header(self, session_id: str) -> _Header | None:
        with self._lock:
            if self._db is None and not self.writable:
                self._db = self._connect()  # a cache written since, or turned out of WAL since
            if self._db is None:
                return None
            try:
                row = self._db.execute(
                    "SELECT head, spawned_from, count, archive_size, version FROM sessions WHERE session = ?",
                    (session_id,),
                ).fetchone()
            except sqlite3.Error:
                return None
        if row is None:
            return None
        return (row[0], row[1], int(row[2]), int(row[3]), int(row[4]))

    def _read_rows(self, session_id: str, header: _Header) -> SessionShape | None:
        with self._lock:
            if self._db is None:
                return None
            try:
                rows = self._db.execute(
                    "SELECT node, predecessor, role, spawned FROM nodes WHERE session = ? ORDER BY pos",
                    (session_id,),
                ).fetchall()
            except sqlite3.Error:
                return None
        if len(rows) != header[2]:
            return None  # torn: rebuilt from the files
        return SessionShape(
            session_id,
            {str(r[0]): r[1] for r in rows},
            {str(r[0]): str(r[2]) for r in rows},
            frozenset(str(r[0]) for r in rows if r[3]),
            header[0],
            parse_spawned_from(header[1]),
        )

    # -- writing (the install) -------------------------------------------------------------------------

    def update(
        self,
        session_id: str,
        dag: DagLike,
        *,
        head: str | None,
        known: int,
        spawned_from: str | None,
    ) -> None:
        """Record the session's DAG as the install saw it: its first `known` nodes and `head`. Appends
        only the nodes added since the last update from the same view (O(new nodes)); rewrites the
        session's rows otherwise. Never raises for the cache's own trouble (a reader rebuilds)."""
        if self._db is None or not self.writable:
            return
        archive_size = self._archive_size(session_id)
        try:
            with self._transaction() as db:
                row = db.execute(
                    "SELECT count, version FROM sessions WHERE session = ?", (session_id,)
                ).fetchone()
                fed = self._fed.get(session_id)
                start = 0
                if row is not None and fed is not None and fed[0]() is dag and fed[1] == int(row[0]):
                    start = int(row[0])
                else:
                    db.execute("DELETE FROM nodes WHERE session = ?", (session_id,))
                known = max(known, start)
                db.executemany(
                    "INSERT INTO nodes (session, pos, node, predecessor, role, spawned) VALUES (?, ?, ?, ?, ?, ?)",
                    _rows(session_id, dag, start, known),
                )
                version = 0 if row is None else int(row[1]) + 1
                db.execute(
                    "INSERT OR REPLACE INTO sessions (session, head, spawned_from, count, archive_size, version) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (session_id, head, spawned_from, known, archive_size, version),
                )
            self._fed[session_id] = (weakref.ref(dag), known)
        except sqlite3.Error as exc:
            self._fed.pop(session_id, None)
            log.warning("shape cache: could not record session %s (%s); readers rebuild it", session_id, exc)

    def cached_head(self, session_id: str) -> tuple[bool, str | None]:
        """(whether the cache holds the session, the head it recorded): what the install compares with
        its own head to tell that the head moved since."""
        header = self._header(session_id)
        return (False, None) if header is None else (True, header[0])

    def _write_all(self, session_id: str, shape: SessionShape, archive_size: int) -> None:
        """Write back a shape rebuilt from the files (a reader's rebuild, when the cache is writable)."""
        try:
            with self._transaction() as db:
                row = db.execute("SELECT version FROM sessions WHERE session = ?", (session_id,)).fetchone()
                db.execute("DELETE FROM nodes WHERE session = ?", (session_id,))
                db.executemany(
                    "INSERT INTO nodes (session, pos, node, predecessor, role, spawned) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (
                            session_id,
                            i,
                            node,
                            shape.predecessors[node],
                            shape.roles[node],
                            node in shape.spawned,
                        )
                        for i, node in enumerate(shape.predecessors)
                    ],
                )
                spawned_from = None if shape.spawned_from is None else "/".join(shape.spawned_from)
                db.execute(
                    "INSERT OR REPLACE INTO sessions (session, head, spawned_from, count, archive_size, version) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        session_id,
                        shape.head,
                        spawned_from,
                        len(shape.predecessors),
                        archive_size,
                        0 if row is None else int(row[0]) + 1,
                    ),
                )
            self._fed.pop(session_id, None)
        except sqlite3.Error as exc:
            log.warning("shape cache: could not record session %s (%s)", session_id, exc)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = self._db
            assert db is not None
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                raise


def _readable_in_place(path: Path) -> bool:
    """Whether a read-only connection to the cache at `path` creates no file: a database with a
    rollback journal (its header's read and write versions are 1, not WAL's 2) and no WAL files beside
    it. (A journal left by a writer that died makes reads fail, never write: the files are read.)"""
    try:
        with path.open("rb") as f:
            header = f.read(20)
    except OSError:
        return False
    if len(header) < 20 or not header.startswith(b"SQLite format 3\x00") or header[18:20] != b"\x01\x01":
        return False
    return not any(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-shm"))


def _rows(session_id: str, dag: DagLike, start: int, end: int) -> Iterator[tuple[object, ...]]:
    spawned = dag.spawned_nodes()
    for i in range(start, end):
        node = dag.node_at(i)
        yield (session_id, i, node, dag.predecessor(node), dag.role(node), node in spawned)


class _FileStore:
    """A home's read-only file store, made on first call (`ShapeCache`'s `store`)."""

    def __init__(self, home: Path) -> None:
        self.paths = HomePaths(home)

    def __call__(self) -> SessionStore:
        from ..store import FileSessionStore

        return FileSessionStore(self.paths.home, read_only=True)

    def holds(self, session_id: str) -> bool:
        """Whether the store would hold the session (`FileSessionStore.has_session`'s test of its
        directory), before the store is made."""
        path = self.paths.session(session_id)
        return path.is_dir() or path.is_symlink()

    def meta_file(self, session_id: str) -> Path:
        return self.paths.session(session_id) / "meta.json"  # `FileSessionStore.path`'s layout


def shapes_for(home: Path | str, *, store: SessionStore | None = None, writable: bool = False) -> ShapeCache:
    """The shape source of a home: its cache, read-only unless `writable` (a reader never creates it);
    without `store`, the home's file store, made only if a session has to be read from its files."""
    source = store if store is not None else _FileStore(Path(home))
    return ShapeCache(HomePaths(Path(home)).memory, source, writable=writable)
