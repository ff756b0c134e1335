"""What the recall index sees of a text: its terms (for BM25) and the plain text of a claim.

Terms are casefolded (NFKC first, so full-width letters and digits match their ASCII forms) word runs of
letters and digits, without English function words (the 179 words of NLTK's list: measured here on LoCoMo,
+3.8 points of all@10 over a 33-word list). Runs of CJK characters (Han, kana, Hangul) have no spaces
between words, so they are indexed by overlapping character bigrams (a lone character as itself): a Chinese
query then finds Chinese memory without a word segmenter or its dictionary.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from datetime import UTC, datetime
from typing import Any, Final

from ..format import TOPIC_SLUG_PATTERN

__all__ = ["STOPWORDS", "analyse", "date_words", "plain_claim", "term_set", "terms"]

STOPWORDS: Final = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he
    him his himself she she's her hers herself it it's its itself they them their theirs themselves what which
    who whom this that that'll these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about against between into through
    during before after above below to from up down in out on off over under again further then once here
    there when where why how all any both each few more most other some such no nor not only own same so than
    too very s t can will just don don't should should've now d ll m o re ve y ain aren aren't couldn
    couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't
    mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn
    wouldn't""".split()
)

# Words: letters/digits with inner apostrophes ("don't" is one stopword); CJK runs come out whole.
_CJK_RANGES: Final = (
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xAC00, 0xD7AF),
    (0x1100, 0x11FF),
    (0x3130, 0x318F),
)
_CJK = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES)
# The word pattern of text without a CJK character: there `[^\W_{CJK}]` is `[^\W_]`. Compiling the
# patterns with the CJK ranges costs 9 ms (their character classes span 40,000 code points), so a
# process whose texts hold no CJK character (an English query, its hits) never compiles them.
_PLAIN_WORD: Final = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_CJK_FIRST: Final = chr(min(lo for lo, _hi in _CJK_RANGES))


@functools.cache
def _cjk_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The word pattern and the CJK-run pattern for text with CJK characters (compiled on first use)."""
    return re.compile(rf"[^\W_{_CJK}]+(?:'[^\W_{_CJK}]+)*"), re.compile(rf"[{_CJK}]+")


def _has_cjk(folded: str) -> bool:
    return any(lo <= ord(c) <= hi for c in folded if c >= _CJK_FIRST for lo, hi in _CJK_RANGES)


def _words_and_runs(text: str) -> tuple[list[str], list[str]]:
    """The words of `text` (NFKC, casefolded, a trailing 's dropped) and its CJK runs, in order."""
    if text.isascii():  # NFKC leaves ASCII as it is, and casefolding only lowers its letters
        folded = text.lower()
    else:
        folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    if not _has_cjk(folded):
        return [w[:-2] if w.endswith("'s") else w for w in _PLAIN_WORD.findall(folded)], []
    word, cjk_run = _cjk_patterns()
    return [w[:-2] if w.endswith("'s") else w for w in word.findall(folded)], cjk_run.findall(folded)


def _bigrams(runs: list[str]) -> list[str]:
    """CJK runs as overlapping character bigrams (a lone character as itself)."""
    out: list[str] = []
    for run in runs:
        out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    return out


_ESCAPED: Final = re.compile(r"\\(.)")
_BLOCK_LINK: Final = re.compile(
    r"\[((?:\\.|[^\\\[\]])+)\]\(" + TOPIC_SLUG_PATTERN + r"\.md#\^b-[0-9a-f]{8}\)"
)


def terms(text: str) -> list[str]:
    """The BM25 terms of `text` (repeats kept: term frequency counts). Words in order, then CJK bigrams.
    Written for speed (one C-level findall, no per-character Python): it runs on every indexed block."""
    words, runs = _words_and_runs(text)
    return [w for w in words if w not in STOPWORDS] + _bigrams(runs)


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
            out, runs = _words_and_runs(token)
            found = (
                stemmer.stemWords([w for w in out if w not in STOPWORDS]),
                stemmer.stemWords(_bigrams(runs)),
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
