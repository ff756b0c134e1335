"""The hold queue: candidate core facts whose evidence the person did not type wait in `topics/held.md`
instead of reaching `topics/core.md` (and so the always-injected `core.md`); a block for any other topic
page that carries an instruction from text the person did not type (a tool's output, an imported
transcript: `trust.page_hold_reason`) waits in `topics/held--<slug>.md` instead of its page, since pages
are recalled and injected too.

`hold_untrusted` is the gate, applied by the write core to every distiller's edits (one rule for the
extractive and the LLM distiller): each block a batch adds to the core master is judged by
`trust.hold_reason` on its claim and the origins of the records it cites; a held block moves, ids and
citations unchanged, to `topics/held.md`, so every record stays cited. When the gate holds anything, no
existing core fact is dropped by the same edit (a poisoned batch cannot make a model "replace" the
person's preference with its own).

`approve` moves a held block to the core master (a page's, to its page), `reject` to `topics/rejected.md` (cited evidence stays
cited; recall never returns it): one transaction each, crash-safe as every install, and idempotent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ..durable import read_regular
from ..format import (
    CORE_FILE,
    CORE_MASTER,
    HELD_TOPIC,
    REJECTED_TOPIC,
    TOPIC_INDEX,
    ArchiveRecord,
    Block,
    Supersession,
    Topic,
    TopicFormatError,
    anchor_of,
    block_id,
    held_file_of,
    is_held_topic,
    is_topic_path,
    page_of_held,
    parse_tool_evidence,
    parse_topic,
    render_topic,
    scan_archive,
)
from ..outcomes import ReasonCode, WriteFailure
from ..trust import hold_reason, page_hold_reason
from ..workspace import Workspace
from ._current import core_after
from ._distill import Edits, TopicReader

__all__ = ["HELD_TITLE", "HeldItem", "approve", "held_items", "hold_untrusted", "reject"]

log = logging.getLogger("dagmem.write")

HELD_TITLE = "Held for review"
REJECTED_TITLE = "Rejected"


def _read_text(record: ArchiveRecord) -> str:
    """What of a record was read rather than written by the agent: a tool call's output (its evidence's
    excerpt; the command or path on its first line is the agent's own), else the record's text."""
    found = parse_tool_evidence(record.content) if record.role == "tool" else None
    return record.content if found is None else found.excerpt


def _sources(block: Block) -> list[tuple[str, str]]:
    return [(s.session_id, s.anchor) for c in block.citations for s in c.sources]


def hold_untrusted(
    edits: Edits, records: Sequence[ArchiveRecord], topics: TopicReader
) -> dict[str, str | None]:
    """`edits` with every untrusted block the batch adds to the core master, and every block it adds to
    a page that carries an instruction from text the person did not type, moved to the hold queue."""
    return _hold_pages(_hold_core(edits, records, topics), records, topics)


def _page(relpath: str) -> bool:
    """A topic page whose new blocks the page rule judges (the core, the queue and its decisions apart)."""
    return (
        is_topic_path(relpath)
        and relpath not in (CORE_MASTER, REJECTED_TOPIC, TOPIC_INDEX)
        and not is_held_topic(relpath)
    )


def _hold_pages(
    edits: dict[str, str | None], records: Sequence[ArchiveRecord], topics: TopicReader
) -> dict[str, str | None]:
    out = dict(edits)
    by_anchor = {(r.session_id, anchor_of(r.source_id)): r for r in records}
    gone: set[str] = set()
    for path in sorted(out):
        text = out[path]
        if text is None or not _page(path):
            continue
        old_text = topics.read(path)
        try:
            before = {b.id for b in parse_topic(old_text, path).blocks} if old_text is not None else set()
            new = parse_topic(text, path)
        except (TopicFormatError, ValueError):
            continue  # an edit that does not parse is refused by validation (then filed plainly), not here
        kept: list[Block] = []
        held: list[Block] = []
        for block in new.blocks:
            cited = [by_anchor[key] for key in _sources(block) if key in by_anchor]
            reason = None
            if block.id not in before and cited:
                reason = page_hold_reason(block.claim, [(r.effective_origin, _read_text(r)) for r in cited])
            if reason is None:
                kept.append(block)
                continue
            log.info("block %s of %s held for review: %s", block.id, path, reason)
            held.append(block)
        if not held:
            continue
        gone.update(b.id for b in held)
        if kept:
            out[path] = render_topic(Topic(new.title, tuple(kept)))
        else:  # only held blocks: a new page is not opened (a standing one keeps its blocks: `before`)
            del out[path]
        queue_path = held_file_of(path)
        queue = _enqueued(out.get(queue_path) or topics.read(queue_path), queue_path, held)
        out[queue_path] = render_topic(Topic(f"{HELD_TITLE}: {new.title}", queue))
    if gone:  # a held block replaces nothing: what it superseded stands
        for path, text in list(out.items()):
            if text is not None and not is_held_topic(path):
                try:
                    out[path] = _unsupersede_file(path, text, gone, topics)
                except ValueError:
                    continue  # refused by validation, as above
    return out


def _hold_core(edits: Edits, records: Sequence[ArchiveRecord], topics: TopicReader) -> dict[str, str | None]:
    """`edits` with every untrusted block the batch adds to the core master moved to the hold queue."""
    out = dict(edits)
    new_text = out.get(CORE_MASTER)
    if new_text is None:
        return out
    old_text = topics.read(CORE_MASTER)
    old = parse_topic(old_text, CORE_MASTER) if old_text is not None else None
    new = parse_topic(new_text, CORE_MASTER)
    before = {b.id: b for b in old.blocks} if old is not None else {}
    by_anchor = {(r.session_id, anchor_of(r.source_id)): r for r in records}
    kept: list[Block] = []
    held: list[tuple[Block, str]] = []
    taken = set(before) | {b.id for b in new.blocks}
    for block in new.blocks:
        if before.get(block.id) == block:
            kept.append(block)
            continue
        cited = [by_anchor[key] for key in _sources(block) if key in by_anchor]
        reason = hold_reason(block.claim, [(r.effective_origin, r.content) for r in cited]) if cited else None
        if reason is None:
            kept.append(block)
            continue
        if block.id in before:  # a rewrite of a standing fact: the fact stays, the new words wait
            kept.append(before[block.id])
            fresh = tuple(
                c for c in block.citations if all((s.session_id, s.anchor) in by_anchor for s in c.sources)
            )
            if not fresh:
                continue
            copy = Block(block_id(HELD_TOPIC, block.claim, taken), block.claim, fresh)
            taken.add(copy.id)
            held.append((copy, reason))
            continue
        held.append((block, reason))
    if not held:
        return out
    ids = {b.id for b in kept} | {b.id for b, _ in held}
    kept += [b for b in before.values() if b.id not in ids]
    # A held block is no core fact: the older facts it superseded stand (in the core and in every page).
    gone = {b.id for b, _ in held if b.id not in before}
    kept = _unsuperseded(kept, gone, before)
    for path, text in list(out.items()):
        if path != CORE_MASTER and text is not None and gone:
            out[path] = _unsupersede_file(path, text, gone, topics)
    out[CORE_MASTER] = render_topic(Topic(new.title, tuple(kept))) if kept or old is not None else None
    for block, reason in held:
        log.info("core fact %s held for review: %s", block.id, reason)
    queue = _enqueued(
        out.get(HELD_TOPIC) or topics.read(HELD_TOPIC), HELD_TOPIC, [block for block, _ in held]
    )
    out[HELD_TOPIC] = render_topic(Topic(HELD_TITLE, queue))
    return out


def _enqueued(text: str | None, path: str, held: Sequence[Block]) -> tuple[Block, ...]:
    """The hold queue `path` (its text, None: none yet) with `held` appended in order; a block held again
    (said again) gains the citations the waiting one lacks, so every record stays cited."""
    queue = list(parse_topic(text, path).blocks) if text is not None else []
    queued = {b.id: n for n, b in enumerate(queue)}
    for block in held:
        if block.id not in queued:
            queued[block.id] = len(queue)
            queue.append(block)
            continue
        waiting = queue[queued[block.id]]
        have = {c.id for c in waiting.citations}
        extra = tuple(c for c in block.citations if c.id not in have)
        queue[queued[block.id]] = replace(waiting, citations=waiting.citations + extra)
    return tuple(queue)


def _unsuperseded(blocks: Sequence[Block], gone: set[str], before: Mapping[str, Block]) -> list[Block]:
    """`blocks` with each supersession (or partly one) by a block of `gone` (held: no longer in the core)
    undone: that line of the block is as it was before the edit (none, when the block is new)."""
    out: list[Block] = []
    for block in blocks:
        old = before.get(block.id)
        undone = block
        if _by_gone(block.superseded, gone):
            undone = replace(undone, superseded=old.superseded if old is not None else None)
        if _by_gone(block.partly, gone):
            undone = replace(undone, partly=old.partly if old is not None else None)
        out.append(undone)
    return out


def _by_gone(mark: Supersession | None, gone: set[str]) -> bool:
    return mark is not None and mark.topic == CORE_MASTER and mark.by in gone


def _unsupersede_file(path: str, text: str, gone: set[str], topics: TopicReader) -> str:
    topic = parse_topic(text, path)
    marked = [b for b in topic.blocks if _by_gone(b.superseded, gone) or _by_gone(b.partly, gone)]
    if not marked:
        return text
    old_text = topics.read(path)
    before = {b.id: b for b in parse_topic(old_text, path).blocks} if old_text is not None else {}
    return render_topic(Topic(topic.title, tuple(_unsuperseded(topic.blocks, gone, before))))


@dataclass(frozen=True)
class HeldEvidence:
    source_id: str
    origin: str | None  # None: the archive does not hold the cited frame
    text: str


@dataclass(frozen=True)
class HeldItem:
    block_id: str
    claim: str
    date: str
    reason: str | None
    evidence: tuple[HeldEvidence, ...]
    page: str = CORE_MASTER  # where approving it files it


def _read_topic(workspace: Workspace, path: str) -> tuple[Topic | None, bytes | None]:
    data = workspace.read_bytes(path)
    return (None if data is None else parse_topic(data.decode("utf-8"), path)), data


def _held_files(workspace: Workspace) -> list[str]:
    """The hold queue's files: `topics/held.md` first, then each page's, by name."""
    found = sorted(
        relpath
        for path in workspace.paths.topics.glob("held*.md")
        if is_held_topic(relpath := f"topics/{path.name}")
    )
    return sorted(found, key=lambda relpath: relpath != HELD_TOPIC)


def held_items(workspace: Workspace) -> list[HeldItem]:
    """The queue, oldest first (the core's candidates, then each page's), each item with its evidence
    (origin and text), why it is held and where approving it files it."""
    frames: dict[str, dict[str, tuple[str, str, str]]] = {}
    items = []
    for held_path in _held_files(workspace):
        topic, _ = _read_topic(workspace, held_path)
        if topic is not None:
            items += _items(workspace, held_path, topic, frames)
    return items


def _items(
    workspace: Workspace, held_path: str, topic: Topic, frames: dict[str, dict[str, tuple[str, str, str]]]
) -> list[HeldItem]:
    items = []
    page = page_of_held(held_path)
    rule = hold_reason if page == CORE_MASTER else page_hold_reason
    for block in topic.blocks:
        evidence = []
        for session, anchor in _sources(block):
            if session not in frames:
                data = read_regular(workspace.paths.source(session)) or b""
                frames[session] = {
                    anchor_of(f.source_id): (f.source_id, f.origin, f.content)
                    for f in scan_archive(data, session).frames
                }
            found = frames[session].get(anchor)
            if found is None:
                evidence.append(HeldEvidence(f"{session}#{anchor}", None, ""))
            else:
                evidence.append(HeldEvidence(*found))
        reason = rule(block.claim, [(e.origin or "", e.text) for e in evidence])
        date = max((c.date for c in block.citations), default="")
        items.append(HeldItem(block.id, block.claim, date, reason, tuple(evidence), page))
    return items


@dataclass(frozen=True)
class Decision:
    block_id: str
    decision: str  # "approved" | "rejected"
    tx: str | None  # None: it was decided already (nothing written)


def approve(workspace: Workspace, block_id: str) -> Decision:
    """Move held block `block_id` into the core master (and so `core.md`), or a page's into its page."""
    return _decide(workspace, block_id, None, "approved")


def reject(workspace: Workspace, block_id: str) -> Decision:
    """Move held block `block_id` to `topics/rejected.md`: kept as cited evidence, never recalled."""
    return _decide(workspace, block_id, REJECTED_TOPIC, "rejected")


def _decide(workspace: Workspace, block_id: str, to: str | None, decision: str) -> Decision:
    with workspace.lock():
        workspace.recover()
        held_path, queue, queue_bytes, block = HELD_TOPIC, None, None, None
        for held_path in _held_files(workspace):
            queue, queue_bytes = _read_topic(workspace, held_path)
            block = next((b for b in queue.blocks if b.id == block_id), None) if queue is not None else None
            if block is not None:
                break
        if block is None:
            for target in (CORE_MASTER, REJECTED_TOPIC) if to is None else (to,):
                goal, _ = _read_topic(workspace, target)
                if goal is not None and any(b.id == block_id for b in goal.blocks):
                    return Decision(block_id, decision, None)  # decided before (a rerun): nothing to do
            raise WriteFailure(ReasonCode.INVALID_INPUT, f"no held item {block_id!r} (see `dagmem held`)")
        assert queue is not None
        target = to if to is not None else page_of_held(held_path)
        if target == REJECTED_TOPIC:
            title = REJECTED_TITLE
        elif target == CORE_MASTER:
            title = "Core"
        else:
            title = queue.title.removeprefix(f"{HELD_TITLE}: ")
        goal, goal_bytes = _read_topic(workspace, target)
        rest = tuple(b for b in queue.blocks if b.id != block_id)
        moved = Topic(goal.title if goal is not None else title, (*(goal.blocks if goal else ()), block))
        changed: dict[str, bytes | None] = {
            held_path: render_topic(Topic(queue.title, rest)).encode() if rest else None,
            target: render_topic(moved).encode(),
        }
        if target == CORE_MASTER:
            changed[CORE_FILE] = core_after(workspace, changed, render_topic(moved).encode())
        before: Mapping[str, bytes | None] = {
            held_path: queue_bytes,
            target: goal_bytes,
            **({CORE_FILE: workspace.read_bytes(CORE_FILE)} if target == CORE_MASTER else {}),
        }
        record = workspace.install("", [], changed, before=dict(before))
    log.info("held item %s %s: tx %s", block_id, decision, record.tx)
    return Decision(block_id, decision, record.tx)
