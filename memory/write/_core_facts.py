"""The extractive distiller's core path: `topics/core.md`, the master of the always-injected block.

A core fact is a stable statement about the user: a sentence of a user turn, in the first person, of
identity ("my name is", "I am a nurse", "I live in Porto", "我住在柏林") or of standing preference ("I
prefer aisle seats", "I never drink coffee"). Deterministic, offline, no model: a sentence qualifies by
its opening words or a first-person slot (`_slots`), questions and hypotheticals never do. A sentence of
several facts ("I live in Paris and I work as a nurse.") is one fact per clause, so that a later move
supersedes where the user lives and leaves their job current. This is the only writer of `topics/core.md` besides the LLM distiller's `core`
field; a topic word never names it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..format import CORE_MASTER, ArchiveRecord
from ._slots import READ_CHARS, clauses, facts_of, sentences, strip_lead
from ._supersede import cue_only, usable

__all__ = ["CORE_PATH", "CORE_TITLE", "CoreFact", "core_facts", "read_core_facts"]

CORE_PATH: Final = CORE_MASTER
CORE_TITLE: Final = "Core"
_MAX_FACT = 240  # characters: longer sentences are stories, not facts

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


@dataclass(frozen=True)
class CoreFact:
    """One core fact: its text (a clause of a user turn, interjections dropped), the record that said it,
    and the words it was said in (its sentence, after a cue-only sentence before it such as "Scratch
    that."), which is what the supersession rule reads for a cue."""

    text: str
    record: ArchiveRecord
    said: str


def core_facts(records: Sequence[ArchiveRecord]) -> list[tuple[str, ArchiveRecord]]:
    """(fact, record) for each first-person statement of identity or preference in the user's turns,
    oldest first, each fact once (the first record that said it)."""
    seen: set[str] = set()
    out: list[tuple[str, ArchiveRecord]] = []
    for fact in read_core_facts(records)[0]:
        key = fact.text.casefold().rstrip(".!。！")
        if key not in seen:
            seen.add(key)
            out.append((fact.text, fact.record))
    return out


def read_core_facts(records: Sequence[ArchiveRecord]) -> tuple[list[CoreFact], set[str]]:
    """The core facts of `records`, and the source ids of the user turns that are wholly core facts
    (every sentence of them is one or more facts, or only an interjection): such a turn, alone in its
    exchange, is filed in the core master only. A fact said by two records is there twice (the master
    files it once, citing both)."""
    out: list[CoreFact] = []
    whole: set[str] = set()
    for record in records:
        if record.role != "user":
            continue
        covered = True
        stated = False  # a turn of interjections alone ("AND", "ok!") states no fact: it is filed on a page
        previous = ""
        read = sentences(record.content)
        for raw in read:
            facts, wholly = _facts_of_sentence(raw)
            if not facts:
                covered = covered and not strip_lead(raw).strip(" .!?。！？")
                previous = raw if cue_only(raw) else ""
                continue
            covered = covered and wholly
            stated = True
            said = f"{previous} {raw}".strip()
            previous = ""
            out += [CoreFact(text, record, said) for text in facts]
        if covered and stated and len(record.content) <= READ_CHARS:
            whole.add(record.source_id)
    return out, whole


def _facts_of_sentence(raw: str) -> tuple[list[str], bool]:
    """The facts a sentence states, one per clause ("I live in Paris and I work as a nurse." is two), and
    whether it is wholly facts. A clause that is not a first-person fact ("My car is a Tesla and I'm
    vegetarian") stays out: the core holds the fact clauses alone, so a later change of what the other
    clause says leaves no stale words in the core (the whole sentence is filed in its topic)."""
    sentence = strip_lead(raw)
    if not sentence or sentence.endswith(("?", "？")) or len(sentence) > _MAX_FACT:
        return [], False
    parts = clauses(sentence)
    facts = [part for part in parts if _is_fact(part)]
    wholly = len(facts) == len(parts)
    if not facts:
        return [], False
    # "I am not vegetarian, I eat fish": the negation only retracts; the core keeps what is true now
    said = [facts_of(part) for part in facts]
    if any(f and not any(x.negated for x in f) for f in said):
        facts = [part for part, f in zip(facts, said, strict=True) if not (f and all(x.negated for x in f))]
    return [fact[0].upper() + fact[1:] for fact in facts], wholly


def _is_fact(clause: str) -> bool:
    text = strip_lead(clause)
    if _FACT.match(text) is not None:
        return True
    return bool(facts_of(text)) and usable(text)
