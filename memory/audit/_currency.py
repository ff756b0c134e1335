"""The oracle's currency checks (DESIGN §12), from the files alone and currency's pure rules:

- `supersession_between_alternatives`: a block marked superseded by a block said on another alternative
  of one fork (an edited prompt or a retry makes the other one left, never superseded);
- `core-not-current`: `memory/core.md` shows a block that is superseded, or left, for nobody in
  particular.

The core is as current as each session's last install (a head moved with no install since is seen at the
next one), so a core block is judged with every session's head as its files say and as its last install
saw it (the shape cache records that head); it is a violation only when it is not current under either.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from ..currency import Reader, SessionShape, between_alternatives, resolve
from ..durable import read_regular
from ..errors import UnsafePath
from ..format import CORE_MASTER, TOPIC_INDEX, Block, TopicFormatError, WorkspacePaths, anchor_of, parse_topic

__all__ = ["check_currency"]

_BLOCK_ID_AT_END = re.compile(r"(?:^|\s)\^(b-[0-9a-f]{8})$")


@dataclasses.dataclass(frozen=True)
class CurrencyViolation:
    kind: str
    subject: str
    detail: str


def check_currency(
    memory: Path, shapes: Mapping[str, SessionShape], nodes_of: Mapping[str, set[str]]
) -> list[CurrencyViolation]:
    """`shapes`: each valid session's shape from its files; `nodes_of`: each session's archived node ids
    (an anchor names one of them)."""
    paths = WorkspacePaths(memory)
    topics = _topics(paths)
    anchors = {
        (session, anchor_of(f"{session}/{node}")): node
        for session, nodes in nodes_of.items()
        for node in nodes
    }

    def evidence(block: Block) -> list[tuple[str, str | None]]:
        return [
            (s.session_id, anchors.get((s.session_id, s.anchor))) for c in block.citations for s in c.sources
        ]

    def find(relpath: str, block_id: str) -> Block | None:
        return topics.get(relpath, {}).get(block_id)

    out: list[CurrencyViolation] = []
    for relpath, blocks in sorted(topics.items()):
        for block in blocks.values():
            marked = block.superseded
            later = None if marked is None else find(marked.topic, marked.by)
            if later is not None and between_alternatives(shapes.get, evidence(block), evidence(later)):
                out.append(
                    CurrencyViolation(
                        "supersession_between_alternatives",
                        f"{relpath}#{block.id}",
                        f"superseded by {marked.topic}#{later.id}, said on another alternative of one fork"
                        if marked is not None
                        else "",
                    )
                )
    where: dict[str, str] = {}

    def superseded_by(block_id: str) -> str | None:
        block = find(where.get(block_id, ""), block_id)
        if block is None or block.superseded is None:
            return None
        where.setdefault(block.superseded.by, block.superseded.topic)
        return block.superseded.by

    def evidence_of(block_id: str) -> list[tuple[str, str | None]]:
        block = find(where.get(block_id, ""), block_id)
        return [] if block is None else evidence(block)

    installed = _installed_heads(paths, shapes)
    readers = [Reader(shapes.get), Reader(installed.get)]
    for block_id in _core_block_ids(paths):
        if block_id not in topics.get(CORE_MASTER, {}):
            continue
        where[block_id] = CORE_MASTER
        statuses = [resolve(block_id, superseded_by, evidence_of, reader)[0] for reader in readers]
        if "current" not in statuses:
            out.append(
                CurrencyViolation("core-not-current", f"core.md#{block_id}", f"{statuses[0]} in the master")
            )
    return out


def _topics(paths: WorkspacePaths) -> dict[str, dict[str, Block]]:
    out: dict[str, dict[str, Block]] = {}
    if not paths.topics.is_dir() or paths.topics.is_symlink():
        return out
    for path in sorted(paths.topics.glob("*.md")):
        relpath = path.relative_to(paths.root).as_posix()
        if relpath == TOPIC_INDEX:
            continue  # the map of the topics, no topic
        try:
            data = read_regular(path)
            if data is not None:
                out[relpath] = {b.id: b for b in parse_topic(data.decode("utf-8"), relpath).blocks}
        except (OSError, UnsafePath, TopicFormatError, UnicodeDecodeError):
            continue  # reported by the workspace check
    return out


def _core_block_ids(paths: WorkspacePaths) -> list[str]:
    try:
        data = read_regular(paths.core)
    except (OSError, UnsafePath):
        return []
    if data is None:
        return []
    ids = []
    for line in data.decode("utf-8", "replace").split("\n"):
        match = _BLOCK_ID_AT_END.search(line)
        if match is not None:
            ids.append(match.group(1))
    return ids


def _installed_heads(paths: WorkspacePaths, shapes: Mapping[str, SessionShape]) -> dict[str, SessionShape]:
    """The shapes with each session's head as its last install saw it (as the shape cache recorded it;
    the head its files say when the cache does not know the session)."""
    heads: dict[str, str | None] = {}
    if paths.shapes.is_file():
        with contextlib.suppress(sqlite3.Error):
            db = sqlite3.connect(f"file:{paths.shapes}?mode=ro", uri=True)
            try:
                heads = {str(s): h for s, h in db.execute("SELECT session, head FROM sessions")}
            finally:
                db.close()
    return {
        sid: dataclasses.replace(shape, head=heads[sid])
        if sid in heads and heads[sid] in shape.predecessors
        else shape
        for sid, shape in shapes.items()
    }
