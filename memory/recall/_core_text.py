"""The core block as a model should read it: each fact as its plain claim with its date, without the
Markdown of `memory/core.md` (citation references, `^b-` ids, source links are for people and tools).

`memory/core.md` is a topic file rendered one directory up (links to `sources/...` and `topics/...`), so it
is read back by turning those links into a topic file's own and parsing it strictly. Any other text (a
host's own core string) is read leniently: reference and definition lines are dropped, the rest kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from ..format import CORE_FILE
from ._text import plain_claim

__all__ = ["CoreFact", "core_facts", "core_lines"]

_DEFINITION: Final = re.compile(r"\[\^[^\]\s]+\]:")
_TRAILER: Final = re.compile(r"(?:\s+\[\^[^\]\s]+\])*(?:\s+\^b-[0-9a-f]{8})?\s*$")


@dataclass(frozen=True)
class CoreFact:
    text: str  # the plain claim
    date: str | None  # its latest citation's date, YYYY-MM-DD (None: a core string that is not core.md)
    block_id: str | None
    records: frozenset[tuple[str, str]] = frozenset()  # the (session, anchor) it cites (core.md only)


def core_facts(core: str) -> tuple[CoreFact, ...]:
    """The facts of a core block, in its order."""
    if not core.strip():
        return ()
    from ..format import TopicFormatError, parse_topic  # here: an empty core parses nothing

    # Record text is inert (`](` is escaped in it), so only real links match these.
    as_topic = core.replace("](sources/", "](../sources/").replace("](topics/", "](")
    try:
        topic = parse_topic(as_topic if as_topic.endswith("\n") else as_topic + "\n", CORE_FILE)
    except (TopicFormatError, ValueError):
        return _lenient(core)
    return tuple(
        CoreFact(
            plain_claim(block.claim),
            max((c.date for c in block.citations), default=None),
            block.id,
            frozenset((ref.session_id, ref.anchor) for c in block.citations for ref in c.sources),
        )
        for block in topic.blocks
    )


def _lenient(core: str) -> tuple[CoreFact, ...]:
    facts = []
    for raw in core.splitlines():
        line = raw.strip()
        if not line or line.startswith("# ") or _DEFINITION.match(line):
            continue
        text = _TRAILER.sub("", line)
        if text:
            facts.append(CoreFact(text, None, None))
    return tuple(facts)


def core_lines(core: str) -> list[str]:
    """One line per fact, `- [YYYY-MM-DD] claim`: what `render_context` injects and `dagmem core` prints."""
    return [f"- [{fact.date}] {fact.text}" if fact.date else f"- {fact.text}" for fact in core_facts(core)]
