"""What a reader with a scope may read of the files themselves: the core block, a topic file, the topic
index, each cut down to the blocks whose every cited record is in the scope (`_visible` is the same rule
over index entries)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..durable import read_below
from ..format import (
    CORE_FILE,
    CORE_MASTER,
    REJECTED_TOPIC,
    TOPIC_INDEX,
    Block,
    Topic,
    TopicFormatError,
    is_held_topic,
    parse_topic,
    parse_topic_index,
    render_core,
    render_topic,
    render_topic_index,
    summarise_topic,
)
from ..trust import OutOfScope, Scope
from ._core_text import core_facts
from ._entries import ArchiveSources

__all__ = ["core_for", "index_for", "topic_for"]


def _block_allowed(scope: Scope, sources: ArchiveSources) -> Callable[[Block], bool]:
    def allowed(block: Block) -> bool:
        cited: list[tuple[str, str | None]] = []
        for citation in block.citations:
            for ref in citation.sources:
                found = sources(ref.session_id, ref.anchor)
                cited.append((ref.session_id, None if found is None else found.effective_origin))
        return scope.allows_evidence(cited)

    return allowed


def core_for(memory: Path, scope: Scope | None) -> str:
    """The core block a reader with `scope` may be given: `core.md` itself for the owner; for anyone else
    it is rendered from the facts `core.md` shows (the current ones) whose every cited record is in the
    scope ("" when none).
    Raises `OutOfScope` when the scope does not include the core."""
    if scope is None or scope.is_owner:
        data = read_below(memory, CORE_FILE)
        return "" if data is None else data.decode("utf-8", "replace")
    if not scope.core:
        raise OutOfScope("the core block")
    data = read_below(memory, CORE_MASTER)
    core = read_below(memory, CORE_FILE)
    if data is None or core is None:
        return ""
    # The one current-facts rule: `core.md` is the master's current blocks (superseded and left ones
    # skipped, in the transaction that made them so); a scoped reader gets the part of it it may see, never
    # the master's history rendered as standing facts.
    current = {fact.block_id for fact in core_facts(core.decode("utf-8", "replace")) if fact.block_id}
    master = parse_topic(data.decode("utf-8"), CORE_MASTER)
    allowed = _block_allowed(scope, ArchiveSources(memory))
    kept = tuple(b for b in master.blocks if b.id in current and allowed(b))
    return render_core(render_topic(Topic(master.title, kept))) if kept else ""


def topic_for(memory: Path, path: str, scope: Scope | None) -> str | None:
    """The topic file `path` as a reader with `scope` may read it: whole for the owner; for anyone else
    only its blocks whose every cited record is in the scope, and None when none is (or when it is the hold
    queue's and the scope has no `held`), so a reader cannot tell a hidden topic from a missing one."""
    data = read_below(memory, path)
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    if scope is None or scope.is_owner:
        return text
    if path == REJECTED_TOPIC or (is_held_topic(path) and not scope.held):
        return None
    if path == CORE_MASTER and not scope.core:
        return None
    topic = parse_topic(text, path)
    kept = tuple(filter(_block_allowed(scope, ArchiveSources(memory)), topic.blocks))
    return render_topic(Topic(topic.title, kept)) if kept else None


def index_for(memory: Path, scope: Scope | None) -> str:
    """The topic index a reader with `scope` may read ("" when none): `topics/index.md` itself for the
    owner; for anyone else it is drawn again from the listed topics as that reader sees them (a topic with
    no block it may see is not listed, and nothing says how many the owner's index holds)."""
    data = read_below(memory, TOPIC_INDEX)
    if data is None:
        return ""
    text = data.decode("utf-8", "replace")
    if scope is None or scope.is_owner:
        return text
    try:
        entries = parse_topic_index(text).entries
    except TopicFormatError:
        return ""  # not an index dagmem wrote: nothing in it is known to be the reader's to see
    summaries = []
    for entry in entries:
        seen = topic_for(memory, entry.path, scope)
        if seen is not None:
            summaries.append(summarise_topic(entry.path, parse_topic(seen, entry.path)))
    return render_topic_index(summaries) or ""
