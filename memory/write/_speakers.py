"""A page per speaker: what each person of a labelled chat says about themselves, gathered in one place.

In a chat among named people (every turn opens with its speaker's label, "Melanie: ...", as an imported
transcript does), each speaker is an entity the whole conversation is about, yet the pages of subjects
(`_subjects`) file what they say under whatever each exchange was about, and never under the speaker
(a label names no subject). A question about one of them that needs facts from several sessions ("What
instruments does Melanie play?": a clarinet in one session, "running, reading, or playing my violin" in
passing in another, filed on `journey.md` and `job.md`) then finds each fact by its own words only.

So a turn of a speaker also gives one block on that speaker's page (`topics/<speaker>.md`, continued in
`<speaker>--2.md`, ...): its sentences in the first person ("I", "my", "we", "our", "我", ...) that are not
questions, quoted, citing that turn alone. A speaker is a label that opens at least two turns of the batch
or already has a page (one "Note: ..." names no one), in a batch more than half of whose turns open with a
label (a transcript's "Error: ..." lines are no chat among named people); a turn with no such sentence
gives no block. Each
turn is read once: O(batch), plus a few `stat`s per page (`_open_part`).

Measured on LoCoMo's development conversations, with entity expansion in recall (a query naming a page
raises its blocks: `recall._entities`), all@1 / all@10 / multi-hop all@10: 0.382 / 0.700 / 0.183 without
these pages, 0.399 / 0.716 / 0.275 with them. Without the expansion, quoting the whole turn gave 0.364 /
0.711 / 0.225 and its first-person sentences 0.396 / 0.714 / 0.246; every sentence but the questions gave
0.378 / 0.711 / 0.254 with it (see the project's benchmark notes, docs/benchmarks.md).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Final

from ..format import ArchiveRecord
from ._slots import sentences
from ._subjects import is_filler, label_of

__all__ = ["speaker_pages", "statement"]

# First-person words (English by word, Chinese by character): a sentence that holds one speaks of its
# speaker ("I'm" is "I" and "m").
_FIRST_PERSON: Final = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves"})
_WORD: Final = re.compile(r"[^\W\d_]+")
_QUESTION: Final = ("?", "？")


def _first_person(sentence: str) -> bool:
    return "我" in sentence or any(w in _FIRST_PERSON for w in map(str.casefold, _WORD.findall(sentence)))


def statement(record: ArchiveRecord) -> tuple[str, str] | None:
    """(the speaker's label, what the turn says of its speaker: its first-person sentences that are not
    questions, prefixed with the label as the turn is) or None (no label, or no such sentence)."""
    found = label_of(record.content) if record.role in ("user", "assistant") else None
    if found is None:
        return None  # no label, or a tool's record ("Bash: ..." names a tool, not a speaker)
    label, body = found
    said = [s for s in sentences(body) if not s.endswith(_QUESTION) and _first_person(s)]
    return (label, f"{label}: {' '.join(said)}") if said else None


def speaker_pages(
    records: Sequence[ArchiveRecord], has_page: Callable[[str], bool], slug: Callable[[str], str]
) -> list[tuple[ArchiveRecord, str, str]]:
    """(record, speaker, statement) for each turn of the batch that says something of its speaker, in
    order, for the speakers that have or earn a page (a label at least two turns open with, or one whose
    page exists), when the batch is a labelled chat (more than half its turns open with a label)."""
    said = [(record, found) for record in records if (found := statement(record)) is not None]
    opens = Counter(label for record in records if (label := _label(record)) is not None)
    if 2 * sum(opens.values()) <= len(records):
        return []  # not a labelled chat: a few "Error: ..." or "Note: ..." lines of a transcript name no one
    speaks = {
        label: (opens[label] >= 2 or has_page(slug(label)))  # a stat per label, not per turn
        and not any(is_filler(word) for word in label.split())  # "Ok: ..." or "Thanks: ..." names no one
        for label in {label for _record, (label, _text) in said}
    }
    return [(record, label, text) for record, (label, text) in said if speaks[label]]


def _label(record: ArchiveRecord) -> str | None:
    found = label_of(record.content) if record.role in ("user", "assistant") else None
    return None if found is None else found[0]
