"""The oracle's recall checks (DESIGN §8, §12): with the default ranking, no sibling block outranks an
on-branch block for a query that matches both, every hit's branch class is the one its files say, and no
superseded block outranks its successor (when the successor is current for the reader).

Independent of the index: blocks and their evidence come from the topic files and the archives (the
strict parsers only), branch paths from the oracle's own walk over the session's nodes. Only the ranking
itself is asked of `recall` (the public search over the index); the check judges its answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ..memory.audit import Violation
from ..memory.format import (
    TOPIC_INDEX,
    TopicFormatError,
    WorkspacePaths,
    anchor_of,
    parse_topic,
    scan_archive,
)
from ..memory.recall import RecallIndex, RecallQuery, reader_for, search
from ..memory.shapes import ShapeCache
from ..memory.store import SessionStore

__all__ = ["check_recall", "check_successors"]

_WORD = re.compile(r"[^\W\d_]{4,}")
_CLASSES = ("on", "sibling", "other")


def _evidence(memory: Path) -> dict[tuple[str, str], tuple[set[tuple[str, str]], str]]:
    """(topic, block id) -> ({(session, node)}, claim), from the files."""
    nodes: dict[str, dict[str, str]] = {}  # session -> anchor -> node id

    def node_of(session: str, anchor: str) -> str | None:
        if session not in nodes:
            path = WorkspacePaths(memory).source(session)
            data = path.read_bytes() if path.exists() else b""
            nodes[session] = {anchor_of(f.source_id): f.node_id for f in scan_archive(data, session).frames}
        return nodes[session].get(anchor)

    blocks: dict[tuple[str, str], tuple[set[tuple[str, str]], str]] = {}
    topics = WorkspacePaths(memory).topics
    for path in sorted(topics.rglob("*.md")) if topics.is_dir() else []:
        relpath = path.relative_to(memory).as_posix()
        if relpath == TOPIC_INDEX:
            continue  # the map of the topics, no topic
        try:
            topic = parse_topic(path.read_text(encoding="utf-8"), relpath)
        except (TopicFormatError, UnicodeDecodeError):
            continue  # the main oracle reports it
        for block in topic.blocks:
            found: set[tuple[str, str]] = set()
            for citation in block.citations:
                for source in citation.sources:
                    node = node_of(source.session_id, source.anchor)
                    if node is not None:
                        found.add((source.session_id, node))
            blocks[(relpath, block.id)] = (found, block.claim)
    return blocks


def _path(predecessors: dict[str, str | None], tip: str) -> set[str]:
    path: set[str] = set()
    current: str | None = tip
    while current is not None and current not in path and current in predecessors:
        path.add(current)
        current = predecessors[current]
    return path


def check_recall(
    store: SessionStore, memory: Path, *, sessions: Iterable[str] | None = None, limit: int = 20
) -> list[Violation]:
    """Check up to `limit` forked sessions: from each tip, a word said both on its branch and on a sibling
    branch is recalled, and the answer must rank no sibling hit above an on-branch hit."""
    violations: list[Violation] = []
    blocks = _evidence(memory)
    index: RecallIndex | None = None
    shapes = ShapeCache(memory, store).fresh  # from the session files: the oracle writes nothing
    checked = 0
    for session_id in sessions if sessions is not None else store.session_ids():
        if checked >= limit:
            break
        snapshot = store.load(session_id)
        predecessors = {nid: node.predecessor for nid, node in snapshot.nodes.items()}
        parents = {p for p in predecessors.values() if p is not None}
        tips = sorted(nid for nid in predecessors if nid not in parents)
        if len(tips) < 2:
            continue
        mine = {
            key: (nodes, claim)
            for key, (nodes, claim) in blocks.items()
            if any(s == session_id for s, _ in nodes)
        }
        for tip in tips:
            path = _path(predecessors, tip)
            on = {k for k, (nodes, _) in mine.items() if any(n in path for s, n in nodes if s == session_id)}
            sibling = set(mine) - on
            query = _shared_word(on, sibling, mine)
            if query is None:
                continue
            checked += 1
            if index is None:
                index = RecallIndex.open(memory)
            hits = search(index, RecallQuery(query, k=50), reader=reader_for(shapes, session_id, tip))
            # Within one status: a current hit ranks above every superseded or left one whatever its
            # branch (that demotion wins), so the branch rule holds among hits of the same status.
            ranks = {
                cls: [i for i, h in enumerate(hits) if h.branch == cls and h.status == "current"]
                for cls in _CLASSES
            }
            if ranks["on"] and ranks["sibling"] and min(ranks["sibling"]) < max(ranks["on"]):
                violations.append(
                    Violation(
                        "recall-sibling-above-on",
                        f"{session_id}@{tip}",
                        f"query {query!r}: a sibling hit at rank {min(ranks['sibling']) + 1}, "
                        f"an on-branch hit at rank {max(ranks['on']) + 1}",
                    )
                )
            for hit in hits:
                key = (hit.topic or "", hit.block_id or "")
                expected = "on" if key in on else "sibling" if key in sibling else "other"
                if key not in blocks:
                    violations.append(Violation("recall-hit-not-installed", f"{key[0]}#{key[1]}", query))
                elif hit.branch != expected:
                    violations.append(
                        Violation(
                            "recall-wrong-branch-class",
                            f"{key[0]}#{key[1]}",
                            f"{session_id}@{tip}: recall says {hit.branch}, the files say {expected}",
                        )
                    )
    return violations


def _shared_word(
    on: set[tuple[str, str]],
    sibling: set[tuple[str, str]],
    mine: dict[tuple[str, str], tuple[set[tuple[str, str]], str]],
) -> str | None:
    """A word in the claims of both an on and a sibling block: the rarest in the session's blocks (ties:
    the first in sorted order), so the query is about something, not the "User:" every claim holds."""
    if not on or not sibling:
        return None

    def words(keys: Iterable[tuple[str, str]]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for key in keys:
            for word in {w.casefold() for w in _WORD.findall(mine[key][1])}:
                counts[word] = counts.get(word, 0) + 1
        return counts

    everywhere = words(mine)
    shared = set(words(on)) & set(words(sibling))
    return min(shared, key=lambda w: (everywhere[w], w)) if shared else None


def _supersessions(memory: Path) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Every block's claim by id, and each (superseded block id, successor id) the topic files record."""
    claims: dict[str, str] = {}
    links: list[tuple[str, str]] = []
    topics = WorkspacePaths(memory).topics
    for path in sorted(topics.rglob("*.md")) if topics.is_dir() else []:
        if path.relative_to(memory).as_posix() == TOPIC_INDEX:
            continue  # the map of the topics, no topic
        try:
            topic = parse_topic(path.read_text(encoding="utf-8"), path.relative_to(memory).as_posix())
        except (TopicFormatError, UnicodeDecodeError):
            continue  # the main oracle reports it
        for block in topic.blocks:
            claims[block.id] = block.claim
            if block.superseded is not None:  # files without one read as all current
                links.append((block.id, block.superseded.by))
    return claims, links


def check_successors(memory: Path, *, limit: int = 20) -> list[Violation]:
    """For up to `limit` supersessions A -> B: a query of a word both claims say (the rarest in the
    workspace), asked by nobody in particular with the default ranking, must not rank A above B when B is
    current. Off (no index opened) when no block is superseded."""
    claims, links = _supersessions(memory)
    if not links:
        return []
    counts: dict[str, int] = {}
    for claim in claims.values():
        for word in {w.casefold() for w in _WORD.findall(claim)}:
            counts[word] = counts.get(word, 0) + 1
    index = RecallIndex.open(memory)
    violations: list[Violation] = []
    for old, new in links[:limit]:
        if new not in claims:
            continue  # a missing successor: `verify` reports it
        shared = {w.casefold() for w in _WORD.findall(claims[old])} & {
            w.casefold() for w in _WORD.findall(claims[new])
        }
        if not shared:
            continue
        query = min(shared, key=lambda w: (counts.get(w, 0), w))
        hits = search(index, RecallQuery(query, k=50))
        ranks = {h.block_id: i for i, h in reversed(list(enumerate(hits)))}  # each block's best rank
        if old not in ranks or new not in ranks:
            continue
        if getattr(hits[ranks[new]], "status", "current") == "current" and ranks[old] < ranks[new]:
            violations.append(
                Violation(
                    "recall-superseded-above-successor",
                    old,
                    f"query {query!r}: superseded {old} at rank {ranks[old] + 1}, "
                    f"its successor {new} at rank {ranks[new] + 1}",
                )
            )
    return violations
