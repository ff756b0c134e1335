"""What the writer needs of currency: a block's status across topics, and the core holding current
blocks only (DESIGN §12).

`TopicBlocks` finds blocks by id, reading a topic only when a successor chain leads there (a block's
supersession names the successor's topic), and gives each block's evidence as (session, node) pairs (a
citation's anchor is looked up in the workspace's index). `current_core` renders `memory/core.md` from
the master, skipping every block that is not current for nobody in particular (superseded, or left in
the session that holds it). `InstallCurrency` is what one install brings: the shapes (its own session
fresh from the batch's DAG) and whether its session's head moved since its last install, which may have
left a branch the core cites: the core is re-rendered then, and at every change of the master.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..currency import DagLike, Reader, SessionShape, ShapeSource, Status, resolve
from ..durable import read_below
from ..errors import UnsafePath
from ..format import (
    BRIEF_SLUG,
    BRIEF_TOPIC,
    CORE_MASTER,
    Block,
    TopicFormatError,
    TopicIndex,
    TopicLookup,
    TopicSummary,
    anchor_of,
    parse_topic,
    render_core,
    summarise_topic,
    uninert,
)
from ..shapes import ShapeCache

if TYPE_CHECKING:
    from ..workspace import Workspace

__all__ = [
    "BriefLine",
    "InstallCurrency",
    "ShapeUpdate",
    "TopicBlocks",
    "core_after",
    "current_brief",
    "current_core",
    "current_topics",
]


class TopicBlocks:
    """Blocks by id over the topics as a transaction leaves them (`lookup`); `source_of(session, anchor)`
    gives the `<session>/<node>` an archived anchor names. A block's topic is known from the master (for
    its own blocks) or from the supersession that leads to it."""

    def __init__(self, lookup: TopicLookup, source_of: Callable[[str, str], str | None]) -> None:
        self._lookup = lookup
        self._source_of = source_of
        self._where: dict[str, str] = {}  # block id -> its topic path

    def _block(self, block_id: str) -> Block | None:
        relpath = self._where.get(block_id)
        if relpath is None:
            return None
        try:
            return self._lookup.block(relpath, block_id)
        except (TopicFormatError, UnicodeDecodeError):
            return None  # a damaged topic: its blocks read as unknown (verify reports it)

    def superseded_by(self, block_id: str) -> str | None:
        block = self._block(block_id)
        if block is None or block.superseded is None:
            return None
        self._where.setdefault(block.superseded.by, block.superseded.topic)
        return block.superseded.by

    def evidence_of(self, block_id: str) -> list[tuple[str, str | None]]:
        block = self._block(block_id)
        if block is None:
            return []
        out: list[tuple[str, str | None]] = []
        for citation in block.citations:
            for source in citation.sources:
                source_id = self._source_of(source.session_id, source.anchor)
                out.append((source.session_id, None if source_id is None else source_id.partition("/")[2]))
        return out

    def status(self, relpath: str, block_id: str, reader: Reader) -> tuple[Status, str | None]:
        """(status, the successor that makes it superseded) of the block `block_id` of `relpath`."""
        self._where.setdefault(block_id, relpath)
        return resolve(block_id, self.superseded_by, self.evidence_of, reader)


def current_core(master_text: str, blocks: TopicBlocks, shapes: ShapeSource) -> str:
    """`memory/core.md` for the master text: its current blocks only, within the budget."""
    reader = Reader(shapes)  # nobody in particular: every conversation gets this block
    return render_core(
        master_text, keep=lambda block: blocks.status(CORE_MASTER, block.id, reader)[0] == "current"
    )


def current_topics(
    memory: Path, index: TopicIndex, shapes: ShapeSource
) -> list[tuple[TopicSummary, list[Block]]]:
    """The entries of `index` as nobody in particular should read them (read-only: no lock, no cache
    written), each with its current blocks in file order: a topic with no current block (every one
    superseded, or said only on branches the conversation left) is not listed, and each is described
    by its current blocks."""
    shape_of = functools.cache(shapes)  # each session's shape read once, for the reader and the anchors
    anchors: dict[str, dict[str, str]] = {}  # session -> anchor -> source id, from its shape's nodes

    def source_of(session: str, anchor: str) -> str | None:
        if session not in anchors:
            shape = shape_of(session)
            nodes = () if shape is None else shape.predecessors
            anchors[session] = {anchor_of(f"{session}/{node}"): f"{session}/{node}" for node in nodes}
        return anchors[session].get(anchor)

    blocks = TopicBlocks(TopicLookup(lambda relpath: read_below(memory, relpath)), source_of)
    reader = Reader(shape_of)  # nobody in particular, as the core
    out: list[tuple[TopicSummary, list[Block]]] = []
    for entry in index.entries:
        try:
            data = read_below(memory, entry.path)
            if data is None:
                continue
            topic = parse_topic(data.decode("utf-8"), entry.path)
        except (TopicFormatError, UnicodeDecodeError, OSError, UnsafePath):
            continue  # `verify` reports it
        kept = [b for b in topic.blocks if blocks.status(entry.path, b.id, reader)[0] == "current"]
        if kept:
            out.append((summarise_topic(entry.path, topic, kept.__contains__), kept))
    return out


@dataclass(frozen=True)
class BriefLine:
    """One current entry of the brief as a reader is given it: its section's label, its words (plain,
    after the label), its date, the sessions it cites and whether it quotes a tool's output."""

    section: str
    text: str
    date: str
    sessions: frozenset[str]
    quotes_tool: bool
    cites: tuple[tuple[str, str], ...] = ()  # (session, anchor) of each cited record, in citation order
    block: str = ""  # `<topic path>#<block id>`: where the entry and its citations are


_PARTS_READ = 16  # parts of the brief a session's start reads at most, newest first


def current_brief(memory: Path, shapes: ShapeSource, *, limit: int = 120) -> list[BriefLine]:
    """The brief's current entries, newest first (read-only: no lock, no cache written): its parts read
    from the newest back, each entry once per subject (a newer run of a command over an older one, in
    whichever part the older one is), none superseded or said only on a branch the conversation left."""
    from ._brief_keys import brief_subject, closes_only  # here: only a session's start reads the brief

    shape_of = functools.cache(shapes)
    blocks = TopicBlocks(TopicLookup(lambda relpath: read_below(memory, relpath)), _anchor_source(shape_of))
    reader = Reader(shape_of)
    out: list[BriefLine] = []
    subjects: set[str] = set()
    texts: set[str] = set()
    for relpath in reversed(_brief_parts(memory)):
        try:
            data = read_below(memory, relpath)
            topic = parse_topic(data.decode("utf-8"), relpath) if data is not None else None
        except (TopicFormatError, UnicodeDecodeError, OSError, UnsafePath):
            continue  # `verify` reports it
        for block in reversed(topic.blocks if topic is not None else ()):
            if block.superseded is not None or blocks.status(relpath, block.id, reader)[0] != "current":
                continue
            subject = brief_subject(block)
            plain = uninert(block.claim)
            label, _, text = plain.partition(": ")
            if (subject is not None and subject in subjects) or plain in texts:
                continue
            subjects.add(subject or "")
            texts.add(plain)
            if closes_only(label, text):
                continue  # the older open threads it closes stay hidden behind its subject
            sessions = frozenset(s.session_id for c in block.citations for s in c.sources)
            labels = [s.label for c in block.citations for s in c.sources]
            cites = tuple((s.session_id, s.anchor) for c in block.citations for s in c.sources)
            out.append(
                BriefLine(
                    label,
                    text,
                    max(c.date for c in block.citations),
                    sessions,
                    any(x.startswith("tool ") for x in labels),
                    cites,
                    f"{relpath}#{block.id}",
                )
            )
            if len(out) >= limit:
                return out
    return out


def _brief_parts(memory: Path) -> list[str]:
    """The brief's parts that exist, oldest first (`brief.md`, `brief--2.md`, ...: they fill in order),
    the newest `_PARTS_READ` of them."""
    parts: list[str] = []
    n = 1
    while True:
        relpath = BRIEF_TOPIC if n == 1 else f"topics/{BRIEF_SLUG}--{n}.md"
        if not (memory / relpath).is_file():
            return parts[-_PARTS_READ:]
        parts.append(relpath)
        n += 1


def _anchor_source(shape_of: ShapeSource) -> Callable[[str, str], str | None]:
    """`source_of(session, anchor)` from the sessions' shapes (their nodes), read once each."""
    anchors: dict[str, dict[str, str]] = {}

    def source_of(session: str, anchor: str) -> str | None:
        if session not in anchors:
            shape = shape_of(session)
            nodes = () if shape is None else shape.predecessors
            anchors[session] = {anchor_of(f"{session}/{node}"): f"{session}/{node}" for node in nodes}
        return anchors[session].get(anchor)

    return source_of


def core_after(workspace: Workspace, changed: Mapping[str, bytes | None], master: bytes) -> bytes:
    """`core.md` after a transaction that is no batch's (a reorganisation, a held item's decision, a
    forget): the master's current blocks only, each session's shape from the home's shape cache
    (read-only: the sessions beside the workspace). `changed`: the transaction's files, as staged."""
    lookup = TopicLookup(
        lambda relpath: changed[relpath] if relpath in changed else workspace.read_bytes(relpath)
    )
    from ..store import FileSessionStore  # here: a session's start reads the index without the store

    store = FileSessionStore(workspace.root.parent, read_only=True)
    with ShapeCache(workspace.root, store) as shapes:
        return current_core(master.decode(), TopicBlocks(lookup, workspace.source_of), shapes).encode()


@dataclass(frozen=True)
class ShapeUpdate:
    """The shape cache's update after an install: the session's DAG as its batch saw it (its first `known`
    nodes, and `head`)."""

    dag: DagLike
    head: str | None
    known: int
    spawned_from: str | None


@dataclass(frozen=True)
class InstallCurrency:
    """What one install brings for currency, as values its caller plans: the shape `cache`, the session's
    own shape fresh from the batch's DAG (`own`; None: read from its files), whether its head moved since
    its last install (`head_moved`: the core is re-rendered), and the cache's `update` once it committed."""

    session_id: str
    cache: ShapeCache
    own: SessionShape | None = None
    head_moved: bool = False
    update: ShapeUpdate | None = None

    def shapes(self, session_id: str) -> SessionShape | None:
        """A `ShapeSource`: the install's own session fresh, every other from the cache."""
        if session_id != self.session_id:
            return self.cache(session_id)
        return self.own if self.own is not None else self.cache.fresh(session_id)

    def record(self) -> None:
        """Bring the cache up to date with the batch's DAG (after the commit, under the lock)."""
        if self.update is not None:
            done = self.update
            self.cache.update(
                self.session_id, done.dag, head=done.head, known=done.known, spawned_from=done.spawned_from
            )
