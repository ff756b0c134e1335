"""The shape of a home's memory, as a person reading its topic files meets it.

- how many topic files, and how many blocks each holds (median, p90; files with one block): memory split
  into hundreds of one-block files is a list of quotes, not pages;
- files named after a filler word ("awesome", "photo", "yeah"): a title must say what the page is about;
- blocks whose evidence crosses a conversation's session boundary (a session's first turn glued to the
  previous session's farewell);
- turns whose indexed text is cut: a word of the turn that no indexed block citing it holds, so recall
  can never find the turn by it.

Measured from the files and the recall index, so it holds for any distiller.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..memory.format import WorkspacePaths, anchor_of, is_topic_path, parse_topic, scan_archive
from ..memory.recall import RecallIndex, analyse
from ..memory.write import FILLER_WORDS, RESERVED_TOPIC_SLUGS
from . import _kit as kit

__all__ = ["SessionOf", "combine", "shape"]

# (dagmem session, node id) -> the conversation session it belongs to (a LoCoMo import keeps several
# conversation sessions in one dagmem session).
SessionOf = Callable[[str, str], str]
_PART = re.compile(r"--\d+$")


def _same(session: str, _node: str) -> str:
    return session


def shape(memory: Path, session_of: SessionOf = _same) -> dict[str, Any]:
    paths = WorkspacePaths(memory)
    sizes: list[int] = []
    filler = 0
    crossing = 0
    for entry in sorted(os.scandir(paths.topics), key=lambda e: e.name):
        relpath = f"topics/{entry.name}"
        if not entry.is_file() or not is_topic_path(relpath):
            continue
        slug = _PART.sub("", entry.name[: -len(".md")])
        if slug in RESERVED_TOPIC_SLUGS:
            continue  # the core master and the hold queue are not topic pages
        topic = parse_topic((paths.topics / entry.name).read_text(encoding="utf-8"), relpath)
        sizes.append(len(topic.blocks))
        if slug in FILLER_WORDS or slug.replace("-", "") in FILLER_WORDS:
            filler += 1
        for block in topic.blocks:
            nodes = _nodes(block.citations, memory)
            if len({session_of(s, n) for s, n in nodes}) > 1:
                crossing += 1
    return _figures(sizes, filler, crossing, _cut_turns(memory))


def _figures(sizes: list[int], filler: int, crossing: int, cut: int) -> dict[str, Any]:
    ordered = sorted(sizes)
    return {
        "topic_files": len(sizes),
        "blocks": sum(sizes),
        "blocks_per_file_median": kit.quantile(ordered, 0.5) if ordered else 0,
        "blocks_per_file_p90": kit.quantile(ordered, 0.9) if ordered else 0,
        "files_with_one_block": sum(1 for n in sizes if n == 1),
        "filler_named_files": filler,
        "blocks_across_sessions": crossing,
        "turns_cut_in_index": cut,
        "sizes": sizes,
    }


def combine(shapes: list[dict[str, Any]]) -> dict[str, Any]:
    """The shape of several homes taken together (medians over all their files)."""
    total = _figures(
        [n for s in shapes for n in s["sizes"]],
        sum(s["filler_named_files"] for s in shapes),
        sum(s["blocks_across_sessions"] for s in shapes),
        sum(s["turns_cut_in_index"] for s in shapes),
    )
    del total["sizes"]
    return total


_anchors: dict[Path, dict[tuple[str, str], str]] = {}


def _nodes(citations: Any, memory: Path) -> list[tuple[str, str]]:
    table = _anchors.get(memory)
    if table is None:
        table = _anchors[memory] = {}
        for archive in sorted(WorkspacePaths(memory).sources.glob("*.md")):
            session = archive.name[: -len(".md")]
            for frame in scan_archive(archive.read_bytes(), session).frames:
                table[(session, anchor_of(frame.source_id))] = frame.node_id
    out = []
    for citation in citations:
        for source in citation.sources:
            node = table.get((source.session_id, source.anchor))
            if node is not None:
                out.append((source.session_id, node))
    return out


def _cut_turns(memory: Path) -> int:
    """Archived turns with a word that no live index entry citing them holds."""
    index = RecallIndex.open(memory)
    words: dict[tuple[str, str], set[str]] = {}
    for _row, entry in index.entries():
        held = set(entry.words) if entry.words is not None else set(analyse(entry.index_text()))
        for source in entry.sources:
            words.setdefault((source.session, source.anchor), set()).update(held)
    cut = 0
    for archive in sorted(WorkspacePaths(memory).sources.glob("*.md")):
        session = archive.name[: -len(".md")]
        for frame in scan_archive(archive.read_bytes(), session).frames:
            held_words = words.get((session, anchor_of(frame.source_id)))
            if held_words is not None and not set(analyse(frame.content)) <= held_words:
                cut += 1
    return cut
