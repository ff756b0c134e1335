"""What the sentences of a working session say: narration, the person's standing instructions, decisions,
what did not work, causes, what is left open. Pure; the words are each language's data (`lang/`), read
by these few rules, so another language is another table, not another code path.

A sentence here is split for prose with code in it: it ends at `.`, `!` or `?` followed by white space (so
`renderer.py` and `1.0.2` stay whole), at a line break, or at the CJK full stops."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Final

from .lang import en

__all__ = [
    "WORK_GENERIC",
    "clip",
    "is_cause",
    "is_decision",
    "is_failure_said",
    "is_instruction",
    "is_narration",
    "is_open_thread",
    "is_question",
    "work_sentences",
]

_TABLES: Final = (en,)
# Words too general to name a page in a working session (each language's table, joined).
WORK_GENERIC: Final = frozenset(w for table in _TABLES for w in table.WORK_GENERIC)
_SPLIT: Final = re.compile(r"(?<=[.!?])\s+|\n+|(?<=[。！？])")
_BULLET: Final = re.compile(r"^(?:[-*•+]|\d+[.)]|#+)\s+")
_MARKUP: Final = re.compile(r"[*_`#>]+")
NARRATION_CHARS: Final = 300  # longer than this, an assistant turn says more than what it is about to do
_SENTENCE_CHARS: Final = 400


def _phrases(name: str) -> tuple[str, ...]:
    return tuple(p for table in _TABLES for p in getattr(table, name))


def _words_pattern(phrases: Iterable[str]) -> re.Pattern[str]:
    alternatives = sorted({re.escape(p.strip()) for p in phrases if p.strip()}, key=len, reverse=True)
    return re.compile(r"(?<![\w'’])(?:" + "|".join(alternatives) + r")(?![\w'’])", re.IGNORECASE)


_NARRATION: Final = tuple(p.casefold() for p in _phrases("NARRATION_OPENERS"))
_INSTRUCTION_START: Final = tuple(p.casefold() for p in _phrases("INSTRUCTION_STARTS"))
_INSTRUCTION: Final = _words_pattern(_phrases("INSTRUCTION_WORDS"))
_DECISION: Final = _words_pattern(_phrases("DECISION_WORDS"))
_FAILED: Final = _words_pattern(_phrases("FAILED_WORDS"))
_CAUSE: Final = _words_pattern(_phrases("CAUSE_WORDS"))
_OPEN: Final = _words_pattern(_phrases("OPEN_WORDS"))


def work_sentences(text: str, limit: int = 20_000) -> list[str]:
    """The sentences of `text` (its first `limit` characters), bullets and Markdown marks taken off, each
    on one line and at most `_SENTENCE_CHARS` long. Code is no sentence: a fenced block, or a line
    indented as Markdown indents code (a test's `# should be expanded`, pasted with its failure)."""
    out: list[str] = []
    for raw in _SPLIT.split(_prose(text[:limit])):
        sentence = " ".join(_BULLET.sub("", raw.strip()).split())
        if sentence and _MARKUP.sub("", sentence).strip():
            out.append(sentence[:_SENTENCE_CHARS])
    return out


_FENCE: Final = re.compile(r"^[ \t]*(?:```|~~~)")
_CODE_LINE: Final = re.compile(r"^(?: {4}|\t)(?![ \t]*(?:[-*•+]|\d+[.)])\s)")


def _prose(text: str) -> str:
    """`text` without its code: fenced blocks and indented lines (a nested bullet stays) become blank."""
    if "\n" not in text:
        return text
    kept: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            kept.append("")
        elif fenced or _CODE_LINE.match(line):
            kept.append("")
        else:
            kept.append(line)
    return "\n".join(kept)


def clip(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters at a word's end (past half of it), with " …" when cut."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit] + " …"


def _plain(sentence: str) -> str:
    return " ".join(_MARKUP.sub("", sentence).split()).casefold().replace("’", "'")


def is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith(("?", "？"))


def is_narration(text: str) -> bool:
    """An assistant turn that only says what it is about to do or that a step went well ("Let me check
    the router:", "Perfect! Now let me run the tests."): short, and it opens with narration or announces
    the tool call that follows (ends with a colon)."""
    stripped = text.strip()
    if not stripped or len(stripped) > NARRATION_CHARS:
        return False
    plain = _plain(stripped)
    return plain.startswith(_NARRATION) or plain.endswith(":")


@functools.lru_cache(maxsize=8192)
def is_instruction(sentence: str) -> bool:
    """A sentence of the person's that sets how the work is done: a convention or a standing order ("no
    console logs!", "use rgb values in the themes, not indices", "always run the linter first"), not a
    question. (A task of the moment, "add a flag for CSV", is no instruction: it opens with no such word.)"""
    plain = _plain(sentence)
    if not plain or is_question(sentence) or len(plain) > 300:
        return False
    return plain.startswith(_INSTRUCTION_START) or _INSTRUCTION.search(plain) is not None


def is_decision(sentence: str) -> bool:
    """A sentence that states a choice ("We'll use Oban instead of a GenServer because ...")."""
    return not is_question(sentence) and _DECISION.search(_plain(sentence)) is not None


def is_failure_said(sentence: str) -> bool:
    """A sentence that says something did not work ("That approach didn't work", "still failing")."""
    return not is_question(sentence) and _FAILED.search(_plain(sentence)) is not None


def is_cause(sentence: str) -> bool:
    """A sentence that explains a problem ("The issue is that the sandbox runs in a separate process")."""
    return not is_question(sentence) and _CAUSE.search(_plain(sentence)) is not None


def is_open_thread(sentence: str) -> bool:
    """A sentence that leaves work for later ("Next steps: wire the hook", "still need to add tests")."""
    return _OPEN.search(_plain(sentence)) is not None
