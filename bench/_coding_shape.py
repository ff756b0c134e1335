"""`dagmem bench coding`: the shape of a project's memory after the replay, read from its files.

- topic files (pages: not the core, the hold queues or the index) and their blocks;
- narration-only blocks: a block every cited record of which is an assistant turn of under 300
  characters that opens with narration ("Let me…", "Now I…", "Perfect", "Done", …): the agent saying
  what it is about to do, which a later session never needs;
- `topics/brief.md` (when it exists): its entries (blocks) and how many of them cite evidence.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..memory.format import (
    TopicFormatError,
    WorkspacePaths,
    anchor_of,
    is_topic_path,
    parse_topic,
    scan_archive,
)
from ..memory.write import RESERVED_TOPIC_SLUGS

__all__ = ["NARRATION", "is_narration", "shape"]

# The openings that make a short assistant turn narration, the one list.
NARRATION = (
    "Let me",
    "Now let me",
    "Now I",
    "I'll",
    "I’ll",
    "I will",
    "Perfect",
    "Great",
    "Excellent",
    "Good",
    "Done",
    "OK",
)
NARRATION_CHARS = 300  # a turn this long or longer says more than what comes next
_OPENS = re.compile(r"(?:" + "|".join(re.escape(o) for o in NARRATION) + r")(?!\w)", re.IGNORECASE)
_PART = re.compile(r"--\d+$")
BRIEF = "brief.md"


def is_narration(role: str, text: str) -> bool:
    stripped = text.strip()
    return role == "assistant" and len(stripped) < NARRATION_CHARS and _OPENS.match(stripped) is not None


def _records(memory: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(session, anchor) -> (role, text) of every archived record."""
    out = {}
    for archive in sorted(WorkspacePaths(memory).sources.glob("*.md")):
        session = archive.name[: -len(".md")]
        for frame in scan_archive(archive.read_bytes(), session).frames:
            out[(session, anchor_of(frame.source_id))] = (frame.role, frame.content)
    return out


def shape(memory: Path) -> dict[str, Any]:
    topics = WorkspacePaths(memory).topics
    out: dict[str, Any] = {
        "topic_files": 0,
        "blocks": 0,
        "narration_only_blocks": 0,
        "narration_examples": [],
    }
    out |= {"brief_entries": None, "brief_entries_citing": None, "unreadable_files": []}
    if not topics.is_dir():
        return out
    records = _records(memory)
    for entry in sorted(os.scandir(topics), key=lambda e: e.name):
        relpath = f"topics/{entry.name}"
        if not entry.is_file() or not is_topic_path(relpath):
            continue
        try:
            topic = parse_topic(Path(entry.path).read_text(encoding="utf-8"), relpath)
        except TopicFormatError as exc:  # counted and named, not a reason to lose the run's figures
            out["unreadable_files"].append(f"{relpath}: {exc}")
            continue
        if entry.name == BRIEF:  # a page of its own, whether or not it is one of the reserved names
            out["brief_entries"] = len(topic.blocks)
            out["brief_entries_citing"] = sum(1 for b in topic.blocks if any(c.sources for c in b.citations))
        if _PART.sub("", entry.name[: -len(".md")]) in RESERVED_TOPIC_SLUGS:
            continue
        out["topic_files"] += 1
        out["blocks"] += len(topic.blocks)
        for block in topic.blocks:
            cited = [
                records.get((source.session_id, source.anchor))
                for citation in block.citations
                for source in citation.sources
            ]
            if cited and all(r is not None and is_narration(*r) for r in cited):
                out["narration_only_blocks"] += 1
                if len(out["narration_examples"]) < 5:
                    out["narration_examples"].append(f"{relpath} {block.id}: {block.claim[:120]}")
    return out
