"""The extractive distiller's core path: `topics/core.md`, the master of the always-injected block.

A core fact is a stable statement about the user: a sentence of a user turn, in the first person, of
identity ("my name is", "I am a nurse", "I live in Porto") or of standing preference ("I prefer aisle
seats", "I never drink coffee"). Deterministic, offline, no model: a sentence qualifies by its opening
words, questions never do. This is the only writer of `topics/core.md` besides the LLM distiller's `core`
field; a topic word never names it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ..format import CORE_MASTER, ArchiveRecord

__all__ = ["CORE_PATH", "CORE_TITLE", "core_facts"]

CORE_PATH: Final = CORE_MASTER
CORE_TITLE: Final = "Core"
_MAX_FACT = 240  # characters: longer sentences are stories, not facts

_SENTENCE: Final = re.compile(r"[^.!?\n]+[.!?]*")
# Interjections a fact may start with; they are dropped before the opening is judged.
_LEAD: Final = re.compile(
    r"^(?:(?:actually|also|and|anyway|btw|by the way|fyi|oh|ok|okay|so|well)\b[,:]?\s*)+", re.I
)
_FACT: Final = re.compile(
    r"^(?:"
    r"my name is|call me|i['’]?m called|i am called|"
    r"(?:i['’]m|i am) (?:a|an|from|based in|originally from|allergic|vegetarian|vegan|married|single|"
    r"divorced|retired|left-handed|right-handed|\d+ years old)\b|"
    r"i (?:live|work|grew up|was born|study)\b|"
    r"my (?:wife|husband|partner|son|daughter|kids|children|job|work|birthday|pronouns|favou?rite)\b|"
    r"i (?:really |strongly |usually |generally |always |definitely )?"
    r"(?:prefer|like|love|hate|dislike|enjoy|avoid|can['’]t stand|cannot stand|don['’]t like|do not like|"
    r"don['’]t eat|do not eat|don['’]t drink|do not drink)\b|"
    r"i (?:always|never)\b"
    r")",
    re.I,
)


def core_facts(records: Sequence[ArchiveRecord]) -> list[tuple[str, ArchiveRecord]]:
    """(fact, record) for each first-person statement of identity or preference in the user's turns,
    oldest first, each fact once (the first record that said it)."""
    seen: set[str] = set()
    out: list[tuple[str, ArchiveRecord]] = []
    for record in records:
        if record.role != "user":
            continue
        for match in _SENTENCE.finditer(record.content):
            sentence = " ".join(match.group().split())
            sentence = _LEAD.sub("", sentence)
            if not sentence or sentence.endswith("?") or len(sentence) > _MAX_FACT:
                continue
            if _FACT.match(sentence) is None:
                continue
            fact = sentence[0].upper() + sentence[1:]
            key = fact.casefold().rstrip(".!")
            if key not in seen:
                seen.add(key)
                out.append((fact, record))
    return out
