"""A SQLite cache of what the workspace files say: archived source ids (per session archive), consumed
source ids (from the txlog), and each topic's summary for the topic index. It keeps every write O(batch)
instead of O(workspace).

It is only a cache: the files are the truth. The txlog part remembers how many bytes of the txlog it has
read and the hash of the last line it read; a longer txlog is read from there (O(new lines)), anything
else (shorter, different, or an unreadable database) rebuilds it from the files. The summaries follow
the txlog too: each line read marks the topics it touched as due to be summarised again from their files
(an install writes its own topics' summaries with its line), and a rebuild summarises every topic again.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from ..durable import TxLog
from ..format import TOPIC_INDEX, TopicSummary, TxRecord

__all__ = ["ArchivedIds", "Index"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS consumed (source_id TEXT PRIMARY KEY, tx TEXT NOT NULL, migrated INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS txlog_state (id INTEGER PRIMARY KEY CHECK (id = 1), size INTEGER NOT NULL,
    last_start INTEGER NOT NULL, last_sha TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS archive_files (session TEXT PRIMARY KEY, valid_end INTEGER NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, last_id TEXT, last_offset INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS archived (source_id TEXT PRIMARY KEY, session TEXT NOT NULL, anchor TEXT NOT NULL,
    offset INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS archived_by_anchor ON archived (session, anchor);
CREATE TABLE IF NOT EXISTS topic_summaries (path TEXT PRIMARY KEY, title TEXT NOT NULL,
    description TEXT NOT NULL, blocks INTEGER NOT NULL, last TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS topic_summaries_newest ON topic_summaries (last DESC, path);
CREATE TABLE IF NOT EXISTS topic_due (path TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS topic_state (id INTEGER PRIMARY KEY CHECK (id = 1), built INTEGER NOT NULL);
"""
_TOPIC_TABLES = ("topic_summaries", "topic_due", "topic_state")
_VERSION = 2  # 2: an archive's length is recorded only with the ids it covers, and its last frame


class Index:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        for attempt in range(2):
            try:
                db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30.0)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=OFF")  # a cache: a lost update is caught up from the files
                if self._version(db) < _VERSION:
                    self._upgrade(db)
                db.executescript(_SCHEMA)
                return db
            except sqlite3.DatabaseError:
                if attempt:
                    raise
                # An unreadable cache is rebuilt from the files.
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        raise AssertionError("unreachable")

    @staticmethod
    def _version(db: sqlite3.Connection) -> int:
        return int(db.execute("PRAGMA user_version").fetchone()[0])

    @staticmethod
    def _upgrade(db: sqlite3.Connection) -> None:
        """An older cache's archive part may claim an archive's length without all of its frames (a
        failed write lost them): it is dropped, and rebuilt from the files as archives are used. In one
        transaction, checked again inside, so two processes opening it at once upgrade it once."""
        db.execute("BEGIN IMMEDIATE")
        try:
            if Index._version(db) < _VERSION:
                db.execute("DROP TABLE IF EXISTS archive_files")
                db.execute("DROP TABLE IF EXISTS archived")
                db.execute(f"PRAGMA user_version = {_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """All or nothing. A failed COMMIT (a full disk) can leave SQLite's transaction open: it is rolled
        back too, or the next reads would see, and a later COMMIT keep, half of it."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._db.execute("ROLLBACK")
                raise

    def contents(self) -> tuple[list[tuple[object, ...]], ...]:
        """Every row of the archive and consumed parts, in order (to tell whether a rebuild changed it)."""
        with self._lock:
            return tuple(
                list(self._db.execute(sql))
                for sql in (
                    "SELECT session, valid_end FROM archive_files ORDER BY session",
                    "SELECT source_id, session, offset FROM archived ORDER BY source_id",
                    "SELECT source_id, tx FROM consumed ORDER BY source_id",
                )
            )

    def clear(self) -> None:
        """Forget everything (`verify --repair`): the next use rebuilds each part from the files."""
        with self._transaction() as db:
            for table in ("consumed", "txlog_state", "archive_files", "archived", *_TOPIC_TABLES):
                db.execute(f"DELETE FROM {table}")

    def clear_topic_summaries(self) -> None:
        """Forget every topic summary (`dagmem forget`: none may keep a forgotten text); the next install
        summarises every topic again from its file."""
        with self._transaction() as db:
            for table in _TOPIC_TABLES:
                db.execute(f"DELETE FROM {table}")

    def vacuum(self) -> None:
        """Rewrite the database so that freed pages keep no old bytes (`dagmem forget`): the write-ahead
        log is checkpointed and truncated, then `VACUUM` rebuilds the file."""
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.execute("VACUUM")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # -- consumed (from the txlog) ---------------------------------------------------------------------

    def sync_txlog(self, txlog: TxLog) -> None:
        """Bring the consumed ids up to date with the txlog: read only lines added since last time. The
        new lines are all read before the cache changes, so a damaged one (`TxlogCorrupt`) leaves it as
        it was."""
        with self._lock:
            row = self._db.execute(
                "SELECT size, last_start, last_sha FROM txlog_state WHERE id = 1"
            ).fetchone()
            size = txlog.size()
            if row is not None and row[0] == size and self._line_sha(txlog, row[1], row[0]) == row[2]:
                return
            rebuild = row is None or row[0] > size or self._line_sha(txlog, row[1], row[0]) != row[2]
            start = 0 if rebuild else int(row[0])
            lines = list(txlog.read_from(start))
            if not lines and not rebuild:
                return
            with self._transaction() as db:
                if rebuild:
                    db.execute("DELETE FROM consumed")
                    db.execute("DELETE FROM txlog_state")
                    for table in _TOPIC_TABLES:  # a txlog rewritten: every topic is summarised again
                        db.execute(f"DELETE FROM {table}")
                for _end, record in lines:
                    self._consume(db, record)
                if lines:
                    last_start = lines[-2][0] if len(lines) > 1 else start
                    self._set_state(db, start=last_start, end=lines[-1][0], txlog=txlog)

    @staticmethod
    def _line_sha(txlog: TxLog, start: int, end: int) -> str:
        if end == 0:
            return ""
        try:
            with txlog.path.open("rb") as f:
                f.seek(start)
                return hashlib.sha256(f.read(end - start)).hexdigest()
        except FileNotFoundError:
            return "missing"

    def add_tx(
        self,
        record: TxRecord,
        *,
        start: int,
        end: int,
        txlog: TxLog,
        summaries: Mapping[str, TopicSummary | None] | None = None,
    ) -> None:
        """Record a committed line that spans bytes [start, end) of the txlog; `summaries`: the topics'
        summaries as it leaves them (None: no longer in the map), every topic's when the map was built."""
        with self._transaction() as db:
            self._consume(db, record)
            self._set_state(db, start=start, end=end, txlog=txlog)
            if summaries is not None:
                self._set_summaries(db, summaries)

    @staticmethod
    def _consume(db: sqlite3.Connection, record: TxRecord) -> None:
        db.executemany(
            "INSERT OR IGNORE INTO consumed (source_id, tx, migrated) VALUES (?, ?, ?)",
            [(source_id, record.tx, int(record.migrated)) for source_id in record.consumed],
        )
        db.executemany(
            "INSERT OR IGNORE INTO topic_due (path) VALUES (?)",
            [(path,) for path in record.files if path.startswith("topics/") and path != TOPIC_INDEX],
        )

    # -- topic summaries (for the topic index) ---------------------------------------------------------

    def topic_state(self) -> tuple[bool, list[str]]:
        """(whether every topic has been summarised, the topics a txlog line touched since)."""
        with self._lock:
            built = self._db.execute("SELECT built FROM topic_state WHERE id = 1").fetchone()
            due = [str(row[0]) for row in self._db.execute("SELECT path FROM topic_due ORDER BY path")]
        return built is not None and bool(built[0]), due

    def topic_summaries(self) -> dict[str, TopicSummary]:
        with self._lock:
            rows = list(
                self._db.execute("SELECT path, title, description, blocks, last FROM topic_summaries")
            )
        return {str(row[0]): _summary(row) for row in rows}

    def newest_topics(self, *, page: int = 64) -> Iterator[TopicSummary]:
        """Every summary in the index's order (newest first, then by path), read a page at a time: a
        reader that stops after the lines its budget holds reads only those (an index of SQLite's)."""
        after: tuple[str, str] | None = None
        while True:
            with self._lock:
                rows = list(
                    self._db.execute(
                        "SELECT path, title, description, blocks, last FROM topic_summaries "
                        + ("" if after is None else "WHERE last < ? OR (last = ? AND path > ?) ")
                        + "ORDER BY last DESC, path LIMIT ?",
                        (page,) if after is None else (after[0], after[0], after[1], page),
                    )
                )
            for row in rows:
                yield _summary(row)
            if len(rows) < page:
                return
            after = (str(rows[-1][4]), str(rows[-1][0]))

    def topic_count(self, paths: Iterable[str] = ()) -> tuple[int, int]:
        """(the summaries held, how many of `paths` are among them)."""
        wanted = list(paths)
        with self._lock:
            total = int(self._db.execute("SELECT COUNT(*) FROM topic_summaries").fetchone()[0])
            held = 0
            for i in range(0, len(wanted), 500):
                chunk = wanted[i : i + 500]
                marks = ",".join("?" * len(chunk))
                held += int(
                    self._db.execute(
                        f"SELECT COUNT(*) FROM topic_summaries WHERE path IN ({marks})", chunk
                    ).fetchone()[0]
                )
        return total, held

    def set_topic_summaries(self, summaries: Mapping[str, TopicSummary | None]) -> None:
        with self._transaction() as db:
            self._set_summaries(db, summaries)

    @staticmethod
    def _set_summaries(db: sqlite3.Connection, summaries: Mapping[str, TopicSummary | None]) -> None:
        """Write these topics' summaries (they are no longer due); the map counts as built from now on:
        whoever writes summaries has summarised every topic first."""
        for path, summary in summaries.items():
            db.execute("DELETE FROM topic_due WHERE path = ?", (path,))
            if summary is None:
                db.execute("DELETE FROM topic_summaries WHERE path = ?", (path,))
            else:
                db.execute(
                    "INSERT OR REPLACE INTO topic_summaries (path, title, description, blocks, last) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (path, summary.title, summary.description, summary.blocks, summary.last or ""),
                )
        db.execute("INSERT OR REPLACE INTO topic_state (id, built) VALUES (1, 1)")

    def _set_state(self, db: sqlite3.Connection, *, start: int, end: int, txlog: TxLog) -> None:
        db.execute(
            "INSERT OR REPLACE INTO txlog_state (id, size, last_start, last_sha) VALUES (1, ?, ?, ?)",
            (end, start, self._line_sha(txlog, start, end)),
        )

    def consumed_in(self, session: str) -> list[str]:
        """Every source id of `session` that a committed transaction consumed."""
        with self._lock:
            rows = self._db.execute(
                "SELECT source_id FROM consumed WHERE source_id >= ? AND source_id < ?",
                (f"{session}/", f"{session}0"),  # '0' is the character after '/'
            ).fetchall()
        return [str(row[0]) for row in rows]

    def consumed(self, source_ids: Iterable[str]) -> dict[str, str]:
        """source id -> the tx that consumed it, for those of `source_ids` already consumed."""
        ids = list(source_ids)
        found: dict[str, str] = {}
        with self._lock:
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                marks = ",".join("?" * len(chunk))
                for source_id, tx in self._db.execute(
                    f"SELECT source_id, tx FROM consumed WHERE source_id IN ({marks})", chunk
                ):
                    found[source_id] = tx
        return found

    # -- archived (from sources/<sid>.md) --------------------------------------------------------------

    def archive_state(self, session: str) -> tuple[int, int, int] | None:
        """(valid_end, size, mtime_ns) of a session archive as last indexed, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT valid_end, size, mtime_ns FROM archive_files WHERE session = ?", (session,)
            ).fetchone()
        return None if row is None else (int(row[0]), int(row[1]), int(row[2]))

    def last_archived(self, session: str) -> tuple[str, int] | None:
        """(source id, offset) of the last frame indexed for a session archive, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT last_id, last_offset FROM archive_files WHERE session = ?", (session,)
            ).fetchone()
        return None if row is None or row[0] is None else (str(row[0]), int(row[1]))

    def set_archive(
        self,
        session: str,
        *,
        valid_end: int,
        size: int,
        mtime_ns: int,
        added: Sequence[tuple[str, str, int]] = (),
        replace: bool = False,
    ) -> None:
        """Record an archive's state and the (source_id, anchor, offset) of frames added to it;
        `replace` drops what was known of that session first (after a full rescan). One transaction: the
        length is never recorded without the ids it covers."""
        with self._transaction() as db:
            last: tuple[str | None, int] = (None, 0)
            if replace:
                db.execute("DELETE FROM archived WHERE session = ?", (session,))
            else:
                row = db.execute(
                    "SELECT last_id, last_offset FROM archive_files WHERE session = ?", (session,)
                ).fetchone()
                if row is not None and row[0] is not None:
                    last = (str(row[0]), int(row[1]))
            db.executemany(
                "INSERT OR REPLACE INTO archived (source_id, session, anchor, offset) VALUES (?, ?, ?, ?)",
                [(source_id, session, anchor, offset) for source_id, anchor, offset in added],
            )
            for source_id, _anchor, offset in added:
                if last[0] is None or offset > last[1]:
                    last = (source_id, offset)
            db.execute(
                "INSERT OR REPLACE INTO archive_files (session, valid_end, size, mtime_ns, last_id, last_offset) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (session, valid_end, size, mtime_ns, *last),
            )

    def has_anchor(self, session: str, anchor: str) -> bool:
        with self._lock:
            row = self._db.execute(
                "SELECT 1 FROM archived WHERE session = ? AND anchor = ? LIMIT 1", (session, anchor)
            ).fetchone()
        return row is not None

    def source_of(self, session: str, anchor: str) -> str | None:
        """The source id (`<session>/<node>`) of an archived frame, by its anchor; None if not indexed."""
        with self._lock:
            row = self._db.execute(
                "SELECT source_id FROM archived WHERE session = ? AND anchor = ? LIMIT 1", (session, anchor)
            ).fetchone()
        return None if row is None else str(row[0])

    def archived_ids(self, session: str) -> ArchivedIds:
        return ArchivedIds(self, session)


def _summary(row: Sequence[object]) -> TopicSummary:
    path, title, description, blocks, last = row
    return TopicSummary(str(path), str(title), str(description), int(str(blocks)), str(last) or None)


class ArchivedIds(Mapping[str, int]):
    """A session's archived source ids -> frame offsets, looked up in the index one key at a time (so
    resuming an archive does not load every id of a long session)."""

    def __init__(self, index: Index, session: str) -> None:
        self._index = index
        self._session = session

    def _query(self, sql: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
        with self._index._lock:
            return list(self._index._db.execute(sql, args))

    def __getitem__(self, source_id: str) -> int:
        rows = self._query(
            "SELECT offset FROM archived WHERE source_id = ? AND session = ?", (source_id, self._session)
        )
        if not rows:
            raise KeyError(source_id)
        return int(str(rows[0][0]))

    def __contains__(self, source_id: object) -> bool:
        return isinstance(source_id, str) and bool(
            self._query(
                "SELECT 1 FROM archived WHERE source_id = ? AND session = ?", (source_id, self._session)
            )
        )

    def __iter__(self) -> Iterator[str]:
        rows = self._query(
            "SELECT source_id FROM archived WHERE session = ? ORDER BY offset", (self._session,)
        )
        return iter([str(row[0]) for row in rows])

    def __len__(self) -> int:
        rows = self._query("SELECT COUNT(*) FROM archived WHERE session = ?", (self._session,))
        return int(str(rows[0][0]))
