"""Regrouping (part of `dagmem reorganise`): move the extractive distiller's blocks to the page of their
subject, as a write today would file them, so a home written under an older layout (one file per salient
word: `photo.md`, `awesome.md`, ...) reads as pages about people, pets, places and things.

Only files the older layout made are regrouped: one named after a filler word or a contraction, or holding
a single block; other pages stay. Only blocks that quote their turns (`User: “…”`, the extractive claim)
move: a model's own claims stay on the page the model chose. A block keeps its id, claim, citations and supersession mark; a mark naming a
block that moved names its new file. A block another claim links to stays where the link points; a block
whose id or a citation id is already taken on the target page stays too. Subjects are chosen from each
block's cited turns, the blocks taken oldest first, with the same rules as a write (`_subjects`), across
the whole workspace at once (an explicit pass, so reading every topic file and archive is its job).
A file left with no blocks is removed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ..format import (
    ArchiveRecord,
    Block,
    Supersession,
    Topic,
    WorkspacePaths,
    anchor_of,
    inert,
    render_block,
    render_topic,
    scan_archive,
)
from ._distill import RESERVED_TOPIC_SLUGS, TOPIC_FILE_LIMIT, _slug
from ._subjects import SubjectPicker, is_filler, may_name

__all__ = ["regroup"]

_QUOTED = re.compile(r"(?:User|Assistant): “")
_PART = re.compile(r"--\d+$")


def _base(path: str) -> str:
    return _PART.sub("", path.removeprefix("topics/").removesuffix(".md"))


def _misfiled(path: str, blocks: Sequence[Block], title: str | None = None) -> bool:
    """A file the older layout made: named after a filler word or a contraction ("it-s"), or holding a
    single block (a page of one quote), unless it is a speaker's page (`_speakers`: every block quotes
    a turn of the speaker its title names, "Assistant: “Melanie: …"). Other pages stay as they are."""
    base = _base(path)
    if title and all(b.claim.startswith((f"User: “{title}: ", f"Assistant: “{title}: ")) for b in blocks):
        return False
    return len(blocks) == 1 or is_filler(base) or not may_name(base.replace("-", ""))


def _records(paths: WorkspacePaths, sessions: set[str]) -> dict[tuple[str, str], ArchiveRecord]:
    found: dict[tuple[str, str], ArchiveRecord] = {}
    for session in sorted(sessions):
        try:
            data = paths.source(session).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            continue
        for frame in scan_archive(data, session).frames:
            found[(session, anchor_of(frame.source_id))] = ArchiveRecord(
                session, frame.node_id, frame.role, frame.seq, frame.created_at, frame.content
            )
    return found


_ROUNDS = 4  # a round's one-block pages are regrouped again, so one pass leaves what a second would keep


def regroup(
    memory: Path,
    files: Mapping[str, list[Block]],
    titles: Mapping[str, str],
    linked: set[tuple[str, str]],
) -> tuple[dict[str, list[Block]], dict[str, str], int]:
    """The pages after regrouping `files` (path -> blocks, every topic file of the workspace), their
    titles (the new pages' and the old ones'), and how many blocks moved (a block moved twice counts
    once). Paths whose list is empty are files left without blocks."""
    pages, names = dict(files), dict(titles)
    moved: set[str] = set()
    for _round in range(_ROUNDS):
        pages, names, ids = _round_of(memory, pages, names, linked)
        if not ids:
            break
        moved |= ids
    return {path: list(blocks) for path, blocks in pages.items()}, names, len(moved)


def _round_of(
    memory: Path,
    files: Mapping[str, list[Block]],
    titles: Mapping[str, str],
    linked: set[tuple[str, str]],
) -> tuple[dict[str, list[Block]], dict[str, str], set[str]]:
    paths = WorkspacePaths(memory)
    movable: list[tuple[str, Block]] = [
        (path, block)
        for path, blocks in sorted(files.items())
        if blocks and _base(path) not in RESERVED_TOPIC_SLUGS and _misfiled(path, blocks, titles.get(path))
        for block in blocks
        if _QUOTED.match(block.claim) is not None and (path, block.id) not in linked
    ]
    leaving = {(path, block.id) for path, block in movable}
    pages = {  # pages that stay pages: a block filed elsewhere may join them
        _base(path) for path, blocks in files.items() if any((path, b.id) not in leaving for b in blocks)
    }
    sessions = {s.session_id for _, b in movable for c in b.citations for s in c.sources}
    records = _records(paths, sessions)
    exchanges: list[tuple[str, Block, list[ArchiveRecord]]] = []
    for path, block in movable:
        cited = [
            records[(s.session_id, s.anchor)]
            for c in block.citations
            for s in c.sources
            if (s.session_id, s.anchor) in records
        ]
        if cited:
            cited.sort(key=lambda r: (r.created_at, r.session_id, r.seq))
            exchanges.append((path, block, cited))
    exchanges.sort(key=lambda e: (e[2][0].created_at, e[2][0].session_id, e[2][0].seq, e[0], e[1].id))
    picker = SubjectPicker([e[2] for e in exchanges], pages.__contains__, _slug, RESERVED_TOPIC_SLUGS)
    out = {path: list(blocks) for path, blocks in files.items()}
    out_titles = dict(titles)
    moves: dict[tuple[str, str], str] = {}
    sizes: dict[
        str, int
    ] = {}  # bytes of each page written to so far (kept as blocks arrive, not re-rendered)
    for (path, block, _cited), subject in zip(exchanges, picker.subjects(), strict=True):
        slug = _slug(subject)
        if slug == _base(path):
            continue
        target = _open_page(slug, out, sizes)
        taken = {b.id for b in out.get(target, [])} | {c.id for b in out.get(target, []) for c in b.citations}
        if block.id in taken or any(c.id in taken for c in block.citations):
            continue
        out[path] = [b for b in out[path] if b.id != block.id]
        out.setdefault(target, []).append(block)
        sizes[target] = sizes.get(target, 0) + len(render_block(block).encode("utf-8", "surrogatepass")) + 1
        out_titles.setdefault(target, inert(subject[:1].upper() + subject[1:]))
        moves[(path, block.id)] = target
    if moves:  # a mark naming a block that moved names its new page
        for path, blocks in out.items():
            out[path] = [_remarked(b, moves) for b in blocks]
    return out, out_titles, {block_id for _path, block_id in moves}


def _remarked(block: Block, moves: Mapping[tuple[str, str], str]) -> Block:
    """`block` with each status line naming a block that moved naming its new page."""
    superseded, partly = _moved(block.superseded, moves), _moved(block.partly, moves)
    if (superseded, partly) == (block.superseded, block.partly):
        return block
    return replace(block, superseded=superseded, partly=partly)


def _moved(mark: Supersession | None, moves: Mapping[tuple[str, str], str]) -> Supersession | None:
    if mark is None or (mark.topic, mark.by) not in moves:
        return mark
    return replace(mark, topic=moves[(mark.topic, mark.by)])


def _open_page(slug: str, files: Mapping[str, Sequence[Block]], sizes: dict[str, int]) -> str:
    """The part of `slug`'s page with room (as a write rolls over: a page stops at the size limit)."""
    part = 1
    while True:
        path = f"topics/{slug}.md" if part == 1 else f"topics/{slug}--{part}.md"
        blocks = files.get(path)
        if not blocks:
            return path
        if path not in sizes:
            sizes[path] = _size(blocks)
        if sizes[path] < TOPIC_FILE_LIMIT:
            return path
        part += 1


def _size(blocks: Sequence[Block]) -> int:
    return len(render_topic(Topic("", tuple(blocks))).encode("utf-8", "surrogatepass"))
