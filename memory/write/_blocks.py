"""Editing one topic file the way every distiller does: add a claim (a claim already in the file gains
the new citation instead of a second copy), replace a block (it keeps its id, so links to it still
resolve, and carries over every citation it had: evidence is never dropped), mark a block superseded by
a newer one (it stays, marked), or partly superseded (one of its facts has a newer value in another block,
the others stand: it stays current, marked), render.

Identical claims may share a block across sibling branches (DESIGN §8: said on both, so true on both);
a different claim is always a block of its own unless a distiller replaces on the rules of §9.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..format import (
    Block,
    Citation,
    SourceRef,
    SupersedeReason,
    Supersession,
    Topic,
    anchor_of,
    block_chunk,
    citation_id,
    make_block,
    parse_topic,
    topic_head,
)

__all__ = ["Groups", "TopicEdit"]

# One citation per (date, [(label, source_id), ...]) group, as `make_block` takes them.
Groups = Sequence[tuple[str, Sequence[tuple[str, str]]]]


class TopicEdit:
    def __init__(self, path: str, current: str | None, title: str) -> None:
        """`current` is the file's text (None: a new file, titled `title`, which must already be inert)."""
        self.path = path
        self.original = parse_topic(current, path) if current is not None else Topic(title, ())
        self.title = self.original.title
        self.blocks: list[Block] = list(self.original.blocks)
        self.taken: set[str] = {b.id for b in self.blocks} | {c.id for b in self.blocks for c in b.citations}
        # Each block's text and its size in bytes, by the block object (blocks are immutable; a changed
        # block is a new object): a distiller asks the file's size per block added, and rendering the
        # whole file each time was most of a write's rendering.
        self._chunks: dict[int, tuple[Block, str, int]] = {}

    def block(self, block_id: str) -> Block | None:
        return next((b for b in self.blocks if b.id == block_id), None)

    def holds(self, claim: str) -> bool:
        """Does the file hold `claim` in a current block?"""
        return any(block.claim == claim and block.superseded is None for block in self.blocks)

    def add(self, claim: str, groups: Groups) -> Block:
        """A new block for `claim`, or, when the file already holds that exact claim in a current block,
        that block with the new sources cited. A superseded block never gains a citation: the claim said
        again is a newer statement of it, current until something supersedes it too."""
        for i, block in enumerate(self.blocks):
            if block.claim == claim and block.superseded is None:
                self.blocks[i] = self._cite(block, claim, groups)
                return self.blocks[i]
        block = make_block(self.path, claim, groups, self.taken)
        self.blocks.append(block)
        return block

    def replace(self, block_id: str, claim: str, groups: Groups) -> Block:
        """The block `block_id` with its claim rewritten: same id, its citations kept, the new ones added."""
        for i, block in enumerate(self.blocks):
            if block.id == block_id:
                self.blocks[i] = self._cite(block, claim, groups)
                return self.blocks[i]
        raise KeyError(block_id)

    def _cite(self, block: Block, claim: str, groups: Groups) -> Block:
        cited = {(s.session_id, s.anchor) for c in block.citations for s in c.sources}
        citations = list(block.citations)
        for date, sources in groups:
            fresh = []
            for label, source_id in sources:
                key = (source_id.partition("/")[0], anchor_of(source_id))
                if key not in cited:
                    cited.add(key)
                    fresh.append((label, source_id, key))
            if not fresh:
                continue
            cid = citation_id(block.id, [source_id for _, source_id, _ in fresh], self.taken)
            self.taken.add(cid)
            refs = tuple(SourceRef(label, key[0], key[1]) for label, _, key in fresh)
            citations.append(Citation(cid, date, refs))
        return replace(block, claim=claim, citations=tuple(citations))

    def supersede(self, block_id: str, by: Block, by_path: str, reason: SupersedeReason) -> Block:
        """Mark the block `block_id` superseded by `by` (filed in `by_path`), dated `by`'s newest citation.
        A partly superseded line it has stays: the file shows both lines, each naming its successor."""
        for i, block in enumerate(self.blocks):
            if block.id == block_id:
                self.blocks[i] = replace(block, superseded=_mark(by, by_path, reason))
                return self.blocks[i]
        raise KeyError(block_id)

    def partly(self, block_id: str, by: Block, by_path: str, reason: SupersedeReason) -> Block | None:
        """Mark the block `block_id` partly superseded by `by` (filed in `by_path`: it holds the newer value
        of one of the block's facts), dated `by`'s newest citation; the block stays current. A newer mark
        replaces an older one (the newest successor wins). None, and nothing changed, for a block that is
        superseded already (it is not current: what part of it stands is moot) or that is `by` itself."""
        for i, block in enumerate(self.blocks):
            if block.id == block_id:
                if block.superseded is not None or (block.id, self.path) == (by.id, by_path):
                    return None
                self.blocks[i] = replace(block, partly=_mark(by, by_path, reason))
                return self.blocks[i]
        raise KeyError(block_id)

    @property
    def changed(self) -> bool:
        return tuple(self.blocks) != self.original.blocks

    def render(self) -> str:
        """The file's text: `render_topic` of its title and blocks."""
        return topic_head(self.title) + "".join(self._chunk(block)[1] for block in self.blocks)

    def size(self) -> int:
        """The file's size in bytes as it would be written now (a distiller checks it per block)."""
        head = len(topic_head(self.title).encode("utf-8", "surrogatepass"))
        return head + sum(self._chunk(block)[2] for block in self.blocks)

    def _chunk(self, block: Block) -> tuple[Block, str, int]:
        held = self._chunks.get(id(block))
        if held is None or held[0] is not block:
            text = block_chunk(block)
            # Each chunk begins and ends with a newline, so no surrogate pair spans two of them: the
            # sizes add up to the size of the whole text.
            held = self._chunks[id(block)] = (block, text, len(text.encode("utf-8", "surrogatepass")))
        return held


def _mark(by: Block, by_path: str, reason: SupersedeReason) -> Supersession:
    """A status line naming `by` (filed in `by_path`), dated its newest citation."""
    return Supersession(by.id, by_path, max(c.date for c in by.citations), reason)
