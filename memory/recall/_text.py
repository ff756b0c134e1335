"""What the recall index sees of a text: its terms (for BM25) and the plain text of a claim.

Terms are what `memory.text` reads of a text for an index (`index_words`, `INDEX_STOPWORDS`): casefolded
(NFKC first, so full-width letters and digits match their ASCII forms) word runs of letters and digits,
without English function words (the 179 words of NLTK's list: measured here on LoCoMo,
+3.8 points of all@10 over a 33-word list). Runs of CJK characters (Han, kana, Hangul) have no spaces
between words, so they are indexed by overlapping character bigrams (a lone character as itself): a Chinese
query then finds Chinese memory without a word segmenter or its dictionary.
"""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime
from typing import Any, Final

from ..format import TOPIC_SLUG_PATTERN
from ..text import INDEX_STOPWORDS, cjk_bigrams, index_words

__all__ = ["analyse", "date_words", "plain_claim", "term_set", "terms"]

_ESCAPED: Final = re.compile(r"\\(.)")
_BLOCK_LINK: Final = re.compile(
    r"\[((?:\\.|[^\\\[\]])+)\]\(" + TOPIC_SLUG_PATTERN + r"\.md#\^b-[0-9a-f]{8}\)"
)


def terms(text: str) -> list[str]:
    """The BM25 terms of `text` (repeats kept: term frequency counts). Words in order, then CJK bigrams.
    Written for speed (one C-level findall, no per-character Python): it runs on every indexed block."""
    words, runs = index_words(text)
    return [w for w in words if w not in INDEX_STOPWORDS] + cjk_bigrams(runs)


_local = threading.local()  # a Snowball stemmer object is not safe to share between threads
_WORDS_MAX: Final = 1 << 17  # whitespace-separated words whose terms are kept (cleared whole when full)
_words: dict[str, tuple[list[str], list[str]]] = {}
_SETS_MAX: Final = 1 << 14  # texts whose term sets are kept (cleared whole when full)
_sets: dict[str, frozenset[str]] = {}


def _stemmer() -> Any:
    stemmer: Any = getattr(_local, "stemmer", None)
    if stemmer is None:
        import Stemmer  # here: rendering the core block at a session's start stems nothing

        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def analyse(text: str) -> list[str]:
    """`terms` reduced to their Snowball English stems ("painted", "paints" -> "paint"): measured on
    LoCoMo, +2.3 points of all@10 for BM25. CJK bigrams and other scripts pass through unchanged.

    Every indexed block is analysed, so the stems of each whitespace-separated word are cached: no term
    spans whitespace (it is neither a word character nor CJK, before or after NFKC and casefolding,
    which both work character by character there), so a text's terms are its words' terms in order,
    words first and CJK bigrams after, exactly as `terms` orders them."""
    stemmer = _stemmer()
    words: list[str] = []
    bigrams: list[str] = []
    for token in text.split():
        found = _words.get(token)
        if found is None:
            out, runs = index_words(token)
            found = (
                stemmer.stemWords([w for w in out if w not in INDEX_STOPWORDS]),
                stemmer.stemWords(cjk_bigrams(runs)),
            )
            if len(_words) >= _WORDS_MAX:
                _words.clear()
            _words[token] = found
        words += found[0]
        bigrams += found[1]
    return words + bigrams if bigrams else words


def term_set(text: str) -> frozenset[str]:
    """The set of `analyse(text)`, kept per text: a hit's evidence and claim are analysed for every query
    that returns it (a dozen texts a query, the same ones again and again in a long-running host)."""
    found = _sets.get(text)
    if found is None:
        found = frozenset(analyse(text))
        if len(_sets) >= _SETS_MAX:
            _sets.clear()
        _sets[text] = found
    return found


def plain_claim(claim: str) -> str:
    """A claim as a person reads it: block links reduced to their text, backslash escapes undone."""
    if "\\" not in claim and "](" not in claim:
        return claim  # neither a link nor an escape (most claims): nothing to undo
    return _ESCAPED.sub(r"\1", _BLOCK_LINK.sub(r"\1", claim))


def date_words(epoch: float) -> str:
    """'8 May 2023': session dates in the indexed text lift temporal questions (measured: +2 points)."""
    moment = datetime.fromtimestamp(epoch, UTC)
    return f"{moment.day} {moment:%B %Y}"
