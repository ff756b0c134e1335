"""What a home's topic files say of each block: the turns it cites, and whether a newer block superseded it.

Read from the files themselves (every topic file, the core's master and the project brief included; the
topic index and the hold queues are no memory), so a label is counted whether or not a query would find
the block. A benchmark that knows which turns stated what asks:

- `superseded(blocks, turns)`: is some block citing one of `turns` marked `**Superseded**` or `**Partly
  superseded**` (a block may hold more than the one statement: the line that names the newer value of
  part of it is the label of that statement)?
- `superseded_by(blocks, turns, newer)`: ... by a block that cites one of `newer` (the supersession the
  benchmark expected, not some other one)?
- `filed(blocks, turns)`: does any block cite one of `turns` at all (a statement the distiller dropped
  can be neither current nor superseded)?
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..memory.format import WorkspacePaths, anchor_of, is_topic_path, parse_topic

__all__ = ["Filed", "Node", "filed", "read_blocks", "superseded", "superseded_by"]

Node = tuple[str, str]  # (session id, node id)
_NOT_MEMORY = frozenset({"index", "held", "rejected"})


@dataclass(frozen=True)
class Filed:
    """One block of a topic file: where it is, the known turns it cites, and its successor if superseded."""

    topic: str  # topics/<slug>.md
    block: str  # b-<8 hex>
    nodes: frozenset[Node]
    successor: tuple[str, str] | None  # (topic, block id) of the block that superseded it
    partly: tuple[str, str] | None = None  # ... that holds the newer value of part of it

    @property
    def replaced_by(self) -> tuple[str, str] | None:
        """The block that superseded this one, wholly or in part."""
        return self.successor or self.partly


def read_blocks(memory: Path, turns: Iterable[Node]) -> list[Filed]:
    """Every block of the workspace `memory` (a home's `memory/`), citing any of `turns` or not."""
    anchors = {anchor_of(f"{session}/{node}"): (session, node) for session, node in turns}
    topics = WorkspacePaths(memory).topics
    out: list[Filed] = []
    if not topics.is_dir():
        return out
    for entry in sorted(os.scandir(topics), key=lambda e: e.name):
        relpath = f"topics/{entry.name}"
        slug = entry.name.removesuffix(".md").split("--")[0]
        if not entry.is_file() or not is_topic_path(relpath) or slug in _NOT_MEMORY:
            continue
        topic = parse_topic((topics / entry.name).read_text(encoding="utf-8"), relpath)
        for block in topic.blocks:
            nodes = frozenset(
                anchors[source.anchor]
                for citation in block.citations
                for source in citation.sources
                if source.anchor in anchors
            )
            after = block.superseded
            successor = None if after is None else (after.topic, after.by)
            part = None if block.partly is None else (block.partly.topic, block.partly.by)
            out.append(Filed(relpath, block.id, nodes, successor, part))
    return out


def filed(blocks: Iterable[Filed], turns: Collection[Node]) -> bool:
    return any(block.nodes & set(turns) for block in blocks)


def superseded(blocks: Iterable[Filed], turns: Collection[Node]) -> bool:
    return any(block.replaced_by is not None and block.nodes & set(turns) for block in blocks)


def superseded_by(blocks: Collection[Filed], turns: Collection[Node], newer: Collection[Node]) -> bool:
    by_id = {(block.topic, block.block): block for block in blocks}
    for block in blocks:
        if block.replaced_by is None or not block.nodes & set(turns):
            continue
        successor = by_id.get(block.replaced_by)
        if successor is not None and successor.nodes & set(newer):
            return True
    return False
