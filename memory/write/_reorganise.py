"""Consolidation (`dagmem reorganise`, the runtime's `reorganise_at`): merge duplicate blocks in one
transaction, carrying every citation to the block that absorbs them, and mark the blocks a newer block
of their file supersedes (the write's rules, `_supersede`; and a judging model's, checked the same way).

Identical claims merge deterministically, within a file and across files (the first in file order keeps
its id; across files the core master's copy, else the first file's; DESIGN §8 lets an identical claim hold
evidence of sibling branches). With a distiller that can judge (`DuplicateJudge`,
the LLM distiller), blocks the model calls duplicates merge under the claim it writes, unless their
evidence in some session lies on two sibling branches (§8 keeps those apart). A block another claim links
to is never folded away (its link would dangle). The pass reads outside the lock, installs under it through
the same Installer and txlog as a write (a line that consumes no records), re-renders `core.md` when its
master changed, and reports the files it changed; a pass that changes nothing commits nothing.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from ..durable import sha256_hex
from ..errors import DagmemError
from ..format import (
    CORE_FILE,
    Block,
    Citation,
    Supersession,
    Topic,
    TopicFormatError,
    TopicLookup,
    ancestors,
    anchor_of,
    block_links,
    citation_id,
    inert,
    is_topic_path,
    parse_topic,
    render_topic,
    validate_topic,
)
from ..outcomes import ReasonCode, WriteFailure, classify
from ..store import SessionStore
from ..text import user_text
from ..workspace import Workspace
from ._core import CORE_MASTER
from ._current import core_after
from ._regroup import regroup
from ._supersede import Reason, choose, newest_date, statement

__all__ = [
    "DuplicateJudge",
    "OnePath",
    "Reorganised",
    "SupersessionJudge",
    "identical_claims",
    "one_path_in",
    "reorganise",
    "supersede_in_file",
]

log = logging.getLogger("dagmem.reorganise")

# (session_id, anchors) -> do these records of one session lie on one root-to-tip path?
OnePath = Callable[[str, set[str]], bool]


@runtime_checkable
class DuplicateJudge(Protocol):
    def duplicates(self, path: str, blocks: Sequence[tuple[str, str]]) -> list[tuple[list[str], str]]:
        """Groups of block ids (two or more, of `blocks`: (id, plain claim)) that say the same thing,
        each with the one claim (plain text) that says it."""
        ...


@runtime_checkable
class SupersessionJudge(Protocol):
    def supersessions(self, path: str, blocks: Sequence[tuple[str, str, str, str]]) -> list[tuple[str, str]]:
        """(older id, newer id) pairs of `blocks` (id, plain claim, date, status: one topic file's) where
        the newer block states a newer value of the older one's fact (an update or a retraction)."""
        ...


@dataclass(frozen=True)
class Reorganised:
    tx: str | None  # None: nothing changed, nothing committed
    changed: tuple[str, ...]  # workspace-relative paths, sorted
    merged: int  # blocks folded into another
    superseded: int = 0  # blocks newly marked superseded by a newer block of their file
    regrouped: int = 0  # blocks moved to the page of their subject


def reorganise(
    workspace: Workspace,
    *,
    judge: object = None,
    one_path: OnePath | None = None,
    attempts: int = 3,
) -> Reorganised:
    """One consolidation pass. Raises `WriteFailure` (nothing installed) on failure."""
    for attempt in range(1, attempts + 1):
        try:
            return _pass(workspace, judge, one_path)
        except WriteFailure as failure:
            if failure.code is not ReasonCode.CONCURRENT_UPDATE or attempt == attempts:
                raise
            log.info("reorganise: a write changed the topics meanwhile; again (%d)", attempt)
        except Exception as exc:
            raise classify(exc) from exc
    raise AssertionError("unreachable")


def _pass(workspace: Workspace, judge: object, one_path: OnePath | None) -> Reorganised:
    merger = judge if isinstance(judge, DuplicateJudge) else None
    texts: dict[str, bytes] = {}
    for entry in sorted(os.scandir(workspace.topics), key=lambda e: e.name):
        relpath = f"topics/{entry.name}"
        if entry.is_file() and is_topic_path(relpath):
            data = workspace.read_bytes(relpath)
            if data is not None:
                texts[relpath] = data
    try:
        topics = {path: parse_topic(data.decode("utf-8"), path) for path, data in texts.items()}
    except (TopicFormatError, UnicodeDecodeError) as exc:
        raise WriteFailure(ReasonCode.INVALID_TOPIC_FORMAT, str(exc)) from exc
    linked = {
        (os.path.normpath(os.path.join("topics", f"{link['slug']}.md")), link["bid"])
        for topic in topics.values()
        for block in topic.blocks
        for link in block_links(block.claim)
    } | {  # a successor is linked to by its block's status lines: never folded away either
        (mark.topic, mark.by)
        for topic in topics.values()
        for block in topic.blocks
        for mark in (block.superseded, block.partly)
        if mark is not None
    }
    changed: dict[str, bytes | None] = {}
    merged = 0
    merged_blocks: dict[str, list[Block]] = {}
    for path, topic in topics.items():
        blocks, folded = _merge_identical(path, topic.blocks, linked)
        if merger is not None and len(blocks) > 1:
            blocks, more = _merge_judged(path, blocks, linked, merger, one_path)
            folded += more
        merged_blocks[path] = blocks
        merged += folded
    merged += _merge_across(merged_blocks, linked)
    superseded = 0
    for path in topics:  # after the merges, so that every mark names a block that stays
        merged_blocks[path], marked = supersede_in_file(
            path, merged_blocks[path], one_path, judge if isinstance(judge, SupersessionJudge) else None
        )
        superseded += marked
    titles = {path: topic.title for path, topic in topics.items()}
    pages, titles, regrouped = regroup(workspace.root, merged_blocks, titles, linked)
    for path, blocks in pages.items():
        old_topic = topics.get(path)
        if not blocks:
            if old_topic is not None:
                changed[path] = None  # every block moved to its subject's page
            continue
        new = Topic(titles[path], tuple(blocks))
        if new != old_topic:
            changed[path] = render_topic(new).encode("utf-8")
    if not changed:
        return Reorganised(None, (), 0, 0)
    with workspace.lock():
        workspace.recover()
        for path in changed:
            current = workspace.read_bytes(path)
            if path not in texts:  # a page the regrouping opens: nobody may have made it meanwhile
                if current is not None:
                    raise WriteFailure(
                        ReasonCode.CONCURRENT_UPDATE, f"{path} appeared during the reorganisation"
                    )
                continue
            if current is None or sha256_hex(current) != sha256_hex(texts[path]):
                raise WriteFailure(ReasonCode.CONCURRENT_UPDATE, f"{path} changed during the reorganisation")
        _validate(workspace, changed, topics)
        if CORE_MASTER in changed:
            master = changed[CORE_MASTER]
            assert master is not None
            changed[CORE_FILE] = core_after(workspace, changed, master)
        current_core = workspace.read_bytes(CORE_FILE) if CORE_FILE in changed else None
        if CORE_FILE in changed and changed[CORE_FILE] == current_core:
            del changed[CORE_FILE]
        record = workspace.install("", [], changed)
    log.info(
        "reorganise: tx %s merged %d blocks, superseded %d, moved %d to their subject's page, in %d files",
        record.tx,
        merged,
        superseded,
        regrouped,
        len(changed),
    )
    return Reorganised(record.tx, tuple(sorted(changed)), merged, superseded, regrouped)


def _sources(block: Block) -> set[tuple[str, str]]:
    return {(s.session_id, s.anchor) for c in block.citations for s in c.sources}


def _absorb(keep: Block, other: Block, claim: str | None = None, *, taken: set[str] | None = None) -> Block:
    """`keep` with every source of `other` it did not cite yet (in `other`'s citations, ids kept unless
    `taken`, the citation ids of `keep`'s file when `other` comes from another file, holds one)."""
    cited = _sources(keep)
    citations = list(keep.citations)
    for citation in other.citations:
        fresh = tuple(s for s in citation.sources if (s.session_id, s.anchor) not in cited)
        if fresh:
            cited.update((s.session_id, s.anchor) for s in fresh)
            cid = citation.id
            if taken is not None:
                if cid in taken:
                    cid = citation_id(keep.id, [f"{s.session_id}#{s.anchor}" for s in fresh], taken)
                taken.add(cid)
            citations.append(Citation(cid, citation.date, fresh))
    return replace(keep, claim=keep.claim if claim is None else claim, citations=tuple(citations))


def _merge_identical(
    path: str, blocks: Sequence[Block], linked: set[tuple[str, str]]
) -> tuple[list[Block], int]:
    out: list[Block] = []
    first: dict[str, int] = {}
    folded = 0
    for block in blocks:
        at = first.get(block.claim)
        if at is None or (path, block.id) in linked:
            first.setdefault(block.claim, len(out))
            out.append(block)
            continue
        out[at] = _absorb(out[at], block)
        folded += 1
    return out, folded


def identical_claims(topics: Mapping[str, Topic]) -> list[list[tuple[str, str]]]:
    """Each claim held by more than one block (in one file or across files), as its (path, block id)s:
    the core master first (it is always injected, so it keeps the fact), then in path order."""
    holders: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(topics, key=lambda p: (p != CORE_MASTER, p)):
        for block in topics[path].blocks:
            holders.setdefault(block.claim, []).append((path, block.id))
    return [found for found in holders.values() if len(found) > 1]


def _merge_across(files: dict[str, list[Block]], linked: set[tuple[str, str]]) -> int:
    """The same claim filed in two topic files is one block: the first holder (`identical_claims`' order)
    absorbs every citation of the others, which leave their files (unless another claim links to them).
    Identical claims may hold evidence of sibling branches (DESIGN §8), so no path check is needed."""
    folded = 0
    for holders in identical_claims({path: Topic("", tuple(blocks)) for path, blocks in files.items()}):
        (keep_path, keep_id), rest = holders[0], holders[1:]
        for path, block_id in rest:
            if path == keep_path or (path, block_id) in linked:
                continue
            at = next(i for i, b in enumerate(files[path]) if b.id == block_id)
            other = files[path].pop(at)
            keep_at = next(i for i, b in enumerate(files[keep_path]) if b.id == keep_id)
            taken = {c.id for b in files[keep_path] for c in b.citations}
            files[keep_path][keep_at] = _absorb(files[keep_path][keep_at], other, taken=taken)
            folded += 1
    return folded


def _merge_judged(
    path: str,
    blocks: list[Block],
    linked: set[tuple[str, str]],
    judge: DuplicateJudge,
    one_path: OnePath | None,
) -> tuple[list[Block], int]:
    from ._llm_wire import plain

    by_id = {block.id: block for block in blocks}
    groups = judge.duplicates(path, [(block.id, plain(block.claim)) for block in blocks])
    gone: set[str] = set()
    replaced: dict[str, Block] = {}
    for ids, claim in groups:
        members = [by_id[i] for i in dict.fromkeys(ids) if i in by_id and i not in gone and i not in replaced]
        if len(members) < 2 or not claim.strip():
            continue
        keep, rest = members[0], [m for m in members[1:] if (path, m.id) not in linked]
        if not rest or not _one_path_each(keep, rest, one_path):
            continue
        block = keep
        for other in rest:
            block = _absorb(block, other)
        replaced[keep.id] = replace(block, claim=inert(" ".join(claim.split())))
        gone.update(other.id for other in rest)
    out = [replaced.get(b.id, b) for b in blocks if b.id not in gone]
    return out, len(gone)


def _one_path_each(keep: Block, rest: Sequence[Block], one_path: OnePath | None) -> bool:
    """§8: a merged block may hold evidence of two blocks in one session only if it all lies on one path
    (without `one_path` to look at the sessions, never)."""
    members: dict[str, set[int]] = {}
    anchors: dict[str, set[str]] = {}
    for n, block in enumerate([keep, *rest]):
        for session_id, anchor in _sources(block):
            members.setdefault(session_id, set()).add(n)
            anchors.setdefault(session_id, set()).add(anchor)
    return all(
        len(members[session_id]) == 1 or (one_path is not None and one_path(session_id, anchors[session_id]))
        for session_id in members
    )


def supersede_in_file(
    path: str, blocks: Sequence[Block], one_path: OnePath | None, judge: SupersessionJudge | None = None
) -> tuple[list[Block], int]:
    """The file's blocks with the supersessions the rules find between them (`_supersede`: the newer
    block's user words with a cue, and the same slot, or in a topic file the same subject), then those the
    model judges (`judge`), each checked: both blocks of this file, the older one current and not newer,
    no cycle, and never two blocks whose evidence in one session lies on two branches (alternatives).
    Returns the blocks and how many were newly marked."""
    out = list(blocks)
    same_topic = path != CORE_MASTER
    marked = 0

    def index(block_id: str) -> int | None:
        return next((i for i, b in enumerate(out) if b.id == block_id), None)

    def mark(old: int, new: int, reason: Reason) -> None:
        nonlocal marked
        date = newest_date(out[new])
        out[old] = replace(out[old], superseded=Supersession(out[new].id, path, date, reason))
        marked += 1

    def allowed(old: Block, new: Block) -> bool:
        if old.superseded is not None or old.id == new.id or newest_date(old) > newest_date(new):
            return False
        chain, seen = new, set()
        while chain.superseded is not None and chain.id not in seen:  # marking old must close no cycle
            seen.add(chain.id)
            at = index(chain.superseded.by) if chain.superseded.topic == path else None
            if at is None:
                break
            chain = out[at]
            if chain.id == old.id:
                return False
        return _one_path_each(old, [new], one_path)

    for n, new in enumerate(list(out)):
        words = user_text(new.claim)
        if not words:
            continue
        candidates = [(b, same_topic) for b in out[:n] if allowed(b, out[n])]
        picked = choose(words, candidates)
        if picked is not None:
            at = index(picked[0].id)
            assert at is not None
            mark(at, n, picked[1])
    if judge is None or len(out) < 2:
        return out, marked
    from ._llm_wire import plain

    shown = [
        (b.id, plain(b.claim), newest_date(b), "current" if b.superseded is None else "superseded")
        for b in out
    ]
    for old_id, new_id in judge.supersessions(path, shown):
        old_at, new_at = index(old_id), index(new_id)
        if old_at is None or new_at is None or not allowed(out[old_at], out[new_at]):
            log.info(
                "reorganise: %s: the model's %s -> %s breaks the rules; not marked", path, old_id, new_id
            )
            continue
        cue = statement(user_text(out[new_at].claim)).cue
        mark(old_at, new_at, "retraction" if cue == "retraction" else "update")
    return out, marked


def _validate(workspace: Workspace, changed: dict[str, bytes | None], topics: dict[str, Topic]) -> None:
    """The same checks as a write's, with the merged evidence allowed to move within each file, and
    nothing dropped: every source a file cited before, it cites after."""
    lookup = TopicLookup(
        lambda relpath: changed[relpath] if relpath in changed else workspace.read_bytes(relpath)
    )

    # Evidence may move between the files a pass changes (one claim filed in two), never out of them.
    before = {
        key for path in changed if path in topics for block in topics[path].blocks for key in _sources(block)
    }
    after = {
        key
        for path in topics
        if path not in changed
        for block in topics[path].blocks
        for key in _sources(block)
    }
    try:
        for path, data in changed.items():
            if data is None:
                continue  # a file the regrouping emptied: its blocks are on other pages of this pass
            old = topics.get(path)
            new = parse_topic(data.decode("utf-8"), path)
            validate_topic(
                path,
                new,
                old,
                batch_sources=(),
                is_archived=workspace.is_archived,
                block_exists=lookup.block_exists,
                superseded_by=lookup.superseded_by,
                moved=before,
            )
            after.update(key for block in new.blocks for key in _sources(block))
        if before - after:
            raise TopicFormatError(sorted(changed)[0], None, "a reorganisation dropped evidence")
    except (TopicFormatError, UnicodeDecodeError) as exc:
        raise WriteFailure(ReasonCode.INVALID_TOPIC_FORMAT, str(exc)) from exc


def one_path_in(store: SessionStore) -> OnePath:
    """`OnePath` over a session store: the records (by anchor) all lie on one root-to-tip path."""

    def check(session_id: str, anchors: set[str]) -> bool:
        try:
            nodes = store.load(session_id).nodes
        except DagmemError:
            return False
        by_anchor = {anchor_of(f"{session_id}/{node_id}"): node_id for node_id in nodes}
        chosen = [by_anchor.get(anchor) for anchor in anchors]
        if any(node_id is None for node_id in chosen):
            return False

        predecessors = {node_id: node.predecessor for node_id, node in nodes.items()}
        paths = {node_id: set(ancestors(predecessors, node_id)) for node_id in chosen if node_id is not None}
        deepest = max(paths, key=lambda node_id: len(paths[node_id]))
        return all(node_id in paths[deepest] for node_id in paths)

    return check
