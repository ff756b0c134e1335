"""What a search index reads of a text: its words and its CJK runs, the function words it leaves out, the
words a query says "I" with, and its sentences.

Words are casefolded (NFKC first, so full-width letters and digits match their ASCII forms) runs of letters
and digits with inner apostrophes ("don't" is one word), a trailing "'s" dropped. Runs of CJK characters
(Han, kana, Hangul) have no spaces between words: they come out whole, and the index takes them as
overlapping character bigrams (a lone character as itself)."""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final

from ._script import CJK_INDEX_RANGES, char_class
from .lang import en

__all__ = [
    "FIRST_PERSON_WORDS",
    "INDEX_STOPWORDS",
    "cjk_bigrams",
    "index_words",
    "sentence_runs",
]

# The function words the index leaves out: English's (the index stems English words).
INDEX_STOPWORDS: Final = en.INDEX_STOPWORDS
# The words a query about the person themself says (English's): "I", "me", "my", "mine", "myself".
FIRST_PERSON_WORDS: Final = en.FIRST_PERSON_WORDS

_CJK: Final = char_class(CJK_INDEX_RANGES)
# The word pattern of text without a CJK character: there `[^\W_{CJK}]` is `[^\W_]`. Compiling the
# patterns with the CJK ranges costs 9 ms (their character classes span 40,000 code points), so a
# process whose texts hold no CJK character (an English query, its hits) never compiles them.
_PLAIN_WORD: Final = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_CJK_FIRST: Final = chr(min(lo for lo, _hi in CJK_INDEX_RANGES))
# A sentence as recall reads a record: a run up to its closing marks (`.`, `!`, `?` and the CJK full ones).
_SENTENCE: Final = re.compile(r"[^.!?。！？]+[.!?。！？]*")


@functools.cache
def _cjk_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The word pattern and the CJK-run pattern for text with CJK characters (compiled on first use)."""
    return re.compile(rf"[^\W_{_CJK}]+(?:'[^\W_{_CJK}]+)*"), re.compile(rf"[{_CJK}]+")


def _has_cjk(folded: str) -> bool:
    return any(lo <= ord(c) <= hi for c in folded if c >= _CJK_FIRST for lo, hi in CJK_INDEX_RANGES)


def index_words(text: str) -> tuple[list[str], list[str]]:
    """The words of `text` (NFKC, casefolded, a trailing 's dropped) and its CJK runs, in order."""
    if text.isascii():  # NFKC leaves ASCII as it is, and casefolding only lowers its letters
        folded = text.lower()
    else:
        folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    if not _has_cjk(folded):
        return [w[:-2] if w.endswith("'s") else w for w in _PLAIN_WORD.findall(folded)], []
    word, cjk_run = _cjk_patterns()
    return [w[:-2] if w.endswith("'s") else w for w in word.findall(folded)], cjk_run.findall(folded)


def cjk_bigrams(runs: list[str]) -> list[str]:
    """CJK runs as overlapping character bigrams (a lone character as itself)."""
    out: list[str] = []
    for run in runs:
        out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    return out


def sentence_runs(text: str) -> list[str]:
    """The runs of `text` up to and with their closing marks (`.`, `!`, `?`, `。`, `！`, `？`): "Really?! Yes."
    -> ["Really?!", " Yes."]; marks with no text before them belong to none."""
    return _SENTENCE.findall(text)
