"""The slot index: fact key -> the current blocks stating it, in any topic file (a derived cache).

`memory/.dagmem/slots.sqlite3` holds one row per (key, topic path, block id) for every current block
whose user words state that key (`_fact_keys`; and `text.said_keys`: the words and attributes of the
person's own facts, which `lookup_any` reads), and the txlog byte offset it reflects. Before a lookup it
catches up from the txlog: each transaction past that offset names the files it changed, and only those
are read again, so a write costs O(its own transactions), never O(workspace). A missing, damaged or
foreign file (or a txlog shorter than the offset: a rewritten log) is rebuilt from the topic files.
Deleting it is always safe. Rows are hints: the writer reads each block it names again, in the file as
this write leaves it, before it supersedes anything.

A forget deletes the file (it names the subjects of the blocks it lists) while a writer, in this process or
another, may hold it open: each batch first checks that the file it has open is still the one at its path,
and opens the one there (or rebuilds it) if not, so no write goes on in a deleted file.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from ..format import (
    Block,
    TopicFormatError,
    TxlogCorrupt,
    TxRecord,
    WorkspacePaths,
    is_brief_path,
    parse_topic,
)
from ..text import said_keys, user_text
from ._fact_keys import keys_of

__all__ = ["SlotIndex"]

_VERSION: Final = 4  # 3: the brief's parts are not indexed; 4: the person's facts by their words
# The newest blocks of a key a write reads again, at most: a key stated in many current blocks (a job
# mentioned in passing for years) costs a bounded number of reads per write, not O(workspace).
LOOKUP_LIMIT: Final = 24
_KEYS_MAX: Final = 200  # keys of one lookup (SQLite's bound on host parameters is far above it)
log = logging.getLogger(__name__)


class SlotIndex:
    """Opened lazily; every failure of the cache reads as "no rows" (a cache never fails a write)."""

    def __init__(self, memory: Path) -> None:
        self.paths = WorkspacePaths.of(memory)
        self.file = self.paths.slots
        self._db: sqlite3.Connection | None = None
        self._opened: tuple[int, int] | None = None  # (device, inode) of the file `_db` has open
        self._caught_up = False

    def next_batch(self) -> None:
        """Kept open for another batch (a writer's): catch up with the txlog again before its first use."""
        self._caught_up = False

    def close(self) -> None:
        """Let go of the file (the next use opens it again, as it is then)."""
        if self._db is not None:
            self._db.close()
            self._db = None
            self._opened = None

    def lookup(self, key: str) -> list[tuple[str, str]]:
        """(topic path, block id) of the newest current blocks stating `key` (at most `LOOKUP_LIMIT`), as of
        the txlog (caught up first)."""
        try:
            db = self._ready()
            rows = db.execute(
                "SELECT path, block FROM slots WHERE key = ? ORDER BY rowid DESC LIMIT ?", (key, LOOKUP_LIMIT)
            )
            return [(str(p), str(b)) for p, b in rows]
        except (sqlite3.Error, OSError, TxlogCorrupt, ValueError) as exc:
            log.warning("the slot index is unusable (%s); looked up as empty", exc)
            self.close()
            return []

    def lookup_any(self, keys: Iterable[str], limit: int = LOOKUP_LIMIT) -> list[tuple[str, str]]:
        """(topic path, block id) of the current blocks filed under any of `keys`, those under the most of
        them first, then the newest (at most `limit`)."""
        wanted = sorted(set(keys))[:_KEYS_MAX]
        if not wanted:
            return []
        try:
            db = self._ready()
            rows = db.execute(
                f"SELECT path, block FROM slots WHERE key IN ({','.join('?' * len(wanted))})"
                " GROUP BY path, block ORDER BY COUNT(*) DESC, MAX(rowid) DESC LIMIT ?",
                (*wanted, limit),
            )
            return [(str(p), str(b)) for p, b in rows]
        except (sqlite3.Error, OSError, TxlogCorrupt, ValueError) as exc:
            log.warning("the slot index is unusable (%s); looked up as empty", exc)
            self.close()
            return []

    def counts(self, keys: Iterable[str]) -> dict[str, int]:
        """How many current blocks are filed under each of `keys` (a key under none is left out)."""
        wanted = sorted(set(keys))[:_KEYS_MAX]
        if not wanted:
            return {}
        try:
            db = self._ready()
            rows = db.execute(
                f"SELECT key, COUNT(*) FROM slots WHERE key IN ({','.join('?' * len(wanted))}) GROUP BY key",
                wanted,
            )
            return {str(k): int(n) for k, n in rows}
        except (sqlite3.Error, OSError, TxlogCorrupt, ValueError) as exc:
            log.warning("the slot index is unusable (%s); counted as empty", exc)
            self.close()
            return {}

    def note_said(self, rows: Iterable[tuple[str, str, float]]) -> None:
        """Remember when each (session, anchor) was said (a batch's records, before its blocks are
        written: a row for a block never installed is harmless, it is said at that time all the same)."""
        try:
            db = self._ready()
            # One transaction for the batch: in autocommit mode each row would commit (and sync) alone,
            # 20 ms a row on a loaded disk, most of a write of imported history.
            db.execute("BEGIN")
            try:
                db.executemany(
                    "INSERT OR REPLACE INTO said (session, anchor, at) VALUES (?, ?, ?)", list(rows)
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        except (sqlite3.Error, OSError, TxlogCorrupt, ValueError) as exc:
            log.warning("the slot index is unusable (%s); said times not kept", exc)
            self.close()

    def said_at(self, block: Block) -> float | None:
        """When the newest turn `block` cites was said, if the index knows every turn it cites."""
        sources = [(s.session_id, s.anchor) for c in block.citations for s in c.sources]
        try:
            db = self._ready()
            times = [db.execute("SELECT at FROM said WHERE session = ? AND anchor = ?", source).fetchone()
                     for source in sources]  # fmt: skip
        except (sqlite3.Error, OSError, TxlogCorrupt, ValueError):
            self.close()
            return None
        if not times or any(t is None for t in times):
            return None
        return max(float(t[0]) for t in times if t is not None)

    def _ready(self) -> sqlite3.Connection:
        if self._db is not None and not self._caught_up:
            now = _identity(self.file)
            if now is None or now != self._opened:
                # Deleted or replaced since it was opened (a forget, in this process or another): the
                # connection would go on in the old file, which no other opener sees and whose writes SQLite
                # refuses ("attempt to write a readonly database").
                log.info("the slot index was deleted or replaced since it was opened: opening the file there")
                self.close()
        if self._db is None:
            self._db = self._open()
            self._opened = _identity(self.file)
        if not self._caught_up:
            self._catch_up(self._db)
            self._caught_up = True
        return self._db

    def _open(self) -> sqlite3.Connection:
        # Any thread: a writer kept open across batches (the batch writer's) is called from the runtime's
        # worker threads, one call at a time.
        self.file.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = sqlite3.connect(self.file, check_same_thread=False, isolation_level=None, timeout=30)
            version = db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError:
            self.file.unlink(missing_ok=True)  # not a database: a cache, so start it again
            db = sqlite3.connect(self.file, check_same_thread=False, isolation_level=None, timeout=30)
            version = 0
        # A cache: no fsync per commit (two a batch: the catch-up, the said times). A process crash cannot
        # damage it with the rollback journal; after a power cut a lost update costs a rebuild or an
        # unknown said time (then write order decides), never a fact.
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute("PRAGMA synchronous=OFF")
        if version != _VERSION:
            db.executescript(
                "DROP TABLE IF EXISTS slots; DROP TABLE IF EXISTS meta;"
                "CREATE TABLE slots (key TEXT NOT NULL, path TEXT NOT NULL, block TEXT NOT NULL);"
                "CREATE INDEX slots_key ON slots (key); CREATE INDEX slots_path ON slots (path);"
                "CREATE TABLE meta (offset INTEGER NOT NULL);"
                "CREATE TABLE IF NOT EXISTS said (session TEXT NOT NULL, anchor TEXT NOT NULL, at REAL NOT NULL,"
                " PRIMARY KEY (session, anchor));"
                f"PRAGMA user_version = {_VERSION};"
            )
        return db

    def _catch_up(self, db: sqlite3.Connection) -> None:
        row = db.execute("SELECT offset FROM meta").fetchone()
        offset = -1 if row is None else int(row[0])
        txlog = self.paths.txlog
        size = txlog.stat().st_size if txlog.is_file() else 0
        if offset == size:
            return
        if offset < 0 or offset > size:
            self._rebuild(db, size)
            return
        with txlog.open("rb") as fh:
            fh.seek(offset)
            tail = fh.read(size - offset)
        end = tail.rfind(b"\n") + 1  # a line still being appended is read next time
        changed: set[str] = set()
        for line in tail[:end].splitlines():
            if line.strip():
                changed.update(TxRecord.from_line(line).files)
        db.execute("BEGIN")
        try:
            for relpath in sorted(changed):
                if relpath.startswith("topics/") and relpath.endswith(".md"):
                    self._index(db, relpath)
            self._set_offset(db, offset + end)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _rebuild(self, db: sqlite3.Connection, size: int) -> None:
        db.execute("BEGIN")
        try:
            db.execute("DELETE FROM slots")
            topics = self.paths.topics
            for path in sorted(topics.glob("*.md")) if topics.is_dir() else []:
                self._index(db, f"topics/{path.name}")
            self._set_offset(db, size)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    @staticmethod
    def _set_offset(db: sqlite3.Connection, offset: int) -> None:
        db.execute("DELETE FROM meta")
        db.execute("INSERT INTO meta (offset) VALUES (?)", (offset,))

    def _index(self, db: sqlite3.Connection, relpath: str) -> None:
        db.execute("DELETE FROM slots WHERE path = ?", (relpath,))
        if is_brief_path(relpath):
            return  # the brief states no person's fact of a slot: its entries replace each other by subject
        try:
            text = (self.paths.root / relpath).read_text("utf-8")
            topic = parse_topic(text, relpath)
        except (OSError, UnicodeDecodeError, TopicFormatError):
            return  # removed, or damaged (`verify` reports it): no rows
        rows = [
            (key, relpath, block.id)
            for block in topic.blocks
            if block.superseded is None
            for words in (user_text(block.claim),)
            for key in sorted({fact.key for fact in keys_of(words)} | said_keys(words))
        ]
        db.executemany("INSERT INTO slots (key, path, block) VALUES (?, ?, ?)", rows)


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at `path`, None when there is none. While a connection holds its file
    open, that inode cannot be reused: another file there has another identity."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
