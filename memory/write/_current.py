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

from collections.abc import Callable
from dataclasses import dataclass, field

from ..currency import Reader, ShapeSource, resolve
from ..format import CORE_MASTER, Block, Topic, TopicFormatError, parse_topic, render_core

__all__ = ["InstallCurrency", "TopicBlocks", "current_core", "supersession_of"]


def supersession_of(block: Block) -> tuple[str, str] | None:
    """(successor block id, its topic path) when the block is marked superseded, else None."""
    marked = getattr(block, "superseded", None)
    if marked is None:
        return None
    return str(marked.by), str(marked.topic)


class TopicBlocks:
    """Blocks by id over topics read on demand: `read(relpath)` gives a topic's text (or None), and
    `source_of(session, anchor)` the `<session>/<node>` an archived anchor names."""

    def __init__(
        self, read: Callable[[str], str | None], source_of: Callable[[str, str], str | None]
    ) -> None:
        self._read = read
        self._source_of = source_of
        self._topics: dict[str, Topic | None] = {}
        self._blocks: dict[str, Block] = {}
        self._where: dict[str, str] = {}  # block id -> the topic a supersession says holds it

    def add(self, topic: Topic) -> None:
        self._topics[topic.path] = topic
        for block in topic.blocks:
            self._blocks.setdefault(block.id, block)

    def _load(self, relpath: str) -> None:
        if relpath in self._topics:
            return
        text = self._read(relpath)
        topic: Topic | None = None
        if text is not None:
            try:
                topic = parse_topic(text, relpath)
            except TopicFormatError:
                topic = None  # a damaged topic cites nothing: its blocks read as unknown
        self._topics[relpath] = topic
        if topic is not None:
            self.add(topic)

    def block(self, block_id: str) -> Block | None:
        if block_id not in self._blocks and block_id in self._where:
            self._load(self._where[block_id])
        return self._blocks.get(block_id)

    def superseded_by(self, block_id: str) -> str | None:
        block = self.block(block_id)
        marked = None if block is None else supersession_of(block)
        if marked is None:
            return None
        later, topic = marked
        self._where.setdefault(later, topic)
        return later

    def evidence_of(self, block_id: str) -> list[tuple[str, str | None]]:
        block = self.block(block_id)
        if block is None:
            return []
        out: list[tuple[str, str | None]] = []
        for citation in block.citations:
            for source in citation.sources:
                source_id = self._source_of(source.session_id, source.anchor)
                node = None if source_id is None else source_id.partition("/")[2]
                out.append((source.session_id, node))
        return out

    def is_current(self, block: Block, reader: Reader) -> bool:
        self._blocks.setdefault(block.id, block)
        return resolve(block.id, self.superseded_by, self.evidence_of, reader)[0] == "current"


def current_core(master_text: str, blocks: TopicBlocks, shapes: ShapeSource) -> str:
    """`memory/core.md` for the master text: its current blocks only, within the budget."""
    reader = Reader(shapes)  # nobody in particular: every conversation gets this block
    blocks.add(parse_topic(master_text, CORE_MASTER))
    return render_core(master_text, keep=lambda block: blocks.is_current(block, reader))


@dataclass(frozen=True)
class InstallCurrency:
    """What one install brings for currency: `shapes` (its own session fresh, every other cached),
    whether its session's head moved since the last install (`head_moved`: the core is re-rendered),
    and `record`, run after the commit, which brings the shape cache up to date with the batch's DAG."""

    shapes: ShapeSource
    head_moved: bool = False
    record: Callable[[], None] = field(default=lambda: None)
