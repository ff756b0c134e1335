"""What a forget does to the topics: every block that cites only forgotten evidence goes; a block that
cites forgotten and other evidence loses those citations and is re-distilled, by the extractive rule,
from the evidence it keeps (its claim quoting only the turns that remain). Re-distilling rather than
offering the remaining evidence again: a record is consumed once (the txlog cannot un-consume it), and
a claim an LLM wrote may paraphrase the forgotten turn, so no old claim text is kept. Ids stay (links to
the block still resolve). A block whose new claim another block already makes, citing the same sources,
goes too (the same claim twice would be recalled twice).

A topic is named after its most salient word, which may be the forgotten text itself: a file whose name
or title holds one (found by the hashes, as the scan finds it) has its blocks moved to a new file,
`topics/renamed-<n>.md` titled "Renamed", and is deleted (a block link to the old file's name no longer
resolves: extractive claims hold none)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from ..durable import read_regular
from ..format import (
    TOPIC_INDEX,
    ArchiveRecord,
    Block,
    Citation,
    Frame,
    Topic,
    WorkspacePaths,
    anchor_of,
    held_file_of,
    is_held_topic,
    parse_topic,
    render_topic,
    scan_archive,
)
from ..write import exchange_claim
from ._scan import Needles

__all__ = ["TopicChanges", "rewrite_topics"]


@dataclass
class TopicChanges:
    files: dict[str, bytes | None] = field(default_factory=dict)  # workspace relpath -> new bytes
    removed: list[str] = field(default_factory=list)  # "<relpath>#<block id>"
    redistilled: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)  # old relpath -> new relpath


class _Frames:
    """Archived frames by (session, anchor), each session's archive scanned once."""

    def __init__(self, paths: WorkspacePaths) -> None:
        self.paths = paths
        self.sessions: dict[str, dict[str, Frame]] = {}

    def get(self, session: str, anchor: str) -> Frame | None:
        frames = self.sessions.get(session)
        if frames is None:
            data = read_regular(self.paths.source(session)) or b""
            frames = {anchor_of(f.source_id): f for f in scan_archive(data, session).frames}
            self.sessions[session] = frames
        return frames.get(anchor)


def _signature(block: Block) -> tuple[str, frozenset[tuple[str, str]]]:
    return block.claim, frozenset((s.session_id, s.anchor) for c in block.citations for s in c.sources)


def _renamed(paths: WorkspacePaths, taken: Collection[str]) -> str:
    n = 1
    while f"topics/renamed-{n}.md" in taken or (paths.root / f"topics/renamed-{n}.md").exists():
        n += 1
    return f"topics/renamed-{n}.md"


def rewrite_topics(paths: WorkspacePaths, forgotten: Collection[str], needles: Needles) -> TopicChanges:
    """The new bytes of every topic file that cites a forgotten source or is named after a forgotten
    text (`None`: nothing of it is left there)."""
    keys = {(s.partition("/")[0], anchor_of(s)) for s in forgotten}
    changes = TopicChanges()
    if not keys:
        return changes
    frames = _Frames(paths)
    topics: dict[str, Topic] = {}
    for path in sorted(paths.topics.rglob("*.md")):
        relpath = path.relative_to(paths.root).as_posix()
        if relpath == TOPIC_INDEX:
            continue  # derived: the forget's install writes it again from the topics it leaves
        data = read_regular(path)
        if data is not None:
            topics[relpath] = parse_topic(data.decode("utf-8"), relpath)
    claims = {
        _signature(block)
        for topic in topics.values()
        for block in topic.blocks
        if not any((s.session_id, s.anchor) in keys for c in block.citations for s in c.sources)
    }
    for relpath, topic in topics.items():
        kept: list[Block] = []
        touched = False
        for block in topic.blocks:
            if not any((s.session_id, s.anchor) in keys for c in block.citations for s in c.sources):
                kept.append(block)
                continue
            touched = True
            where = f"{relpath}#{block.id}"
            citations = []
            for citation in block.citations:
                sources = tuple(s for s in citation.sources if (s.session_id, s.anchor) not in keys)
                if sources:
                    citations.append(Citation(citation.id, citation.date, sources))
            records = []
            for citation in citations:
                for source in citation.sources:
                    frame = frames.get(source.session_id, source.anchor)
                    if frame is not None and not frame.forgotten:
                        f = frame
                        records.append(
                            ArchiveRecord(
                                source.session_id, f.node_id, f.role, f.seq, f.created_at, f.content
                            )
                        )
            if not citations or not records:
                changes.removed.append(where)
                continue
            new = Block(block.id, exchange_claim(records), tuple(citations))
            if _signature(new) in claims:
                changes.removed.append(where)
                continue
            claims.add(_signature(new))
            kept.append(new)
            changes.redistilled.append(where)
        named = needles.find(relpath.encode()) is not None or needles.find(topic.title.encode()) is not None
        if named and kept and relpath != "topics/core.md":
            new_path = _renamed(paths, changes.files)
            if is_held_topic(relpath):  # a page's held blocks stay held, under the new name
                new_path = held_file_of(new_path)
            changes.renamed[relpath] = new_path
            changes.files[new_path] = render_topic(Topic("Renamed", tuple(kept))).encode()
            changes.files[relpath] = None
        elif touched:
            changes.files[relpath] = render_topic(Topic(topic.title, tuple(kept))).encode() if kept else None
    return changes
