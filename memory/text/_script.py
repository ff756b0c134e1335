"""Scripts: which characters are CJK (Chinese, Japanese, Korean), one definition of their Unicode blocks.

These scripts write no spaces between words, so the readers of words treat their characters apart: the
index takes their runs as character bigrams, the table of facts matches their entries anywhere, not on word
boundaries. Each reader takes the blocks it always has (a named selection of `CJK_RANGES` below, in the
order it listed them, so its character class is the same string): widening one would change what it
matches."""

from __future__ import annotations

from typing import Final

__all__ = [
    "CJK_FACT_RANGES",
    "CJK_INDEX_RANGES",
    "CJK_RANGES",
    "CJK_VALUE_RANGES",
    "char_class",
]

_Ranges = tuple[tuple[int, int], ...]

KANA: Final = (0x3040, 0x30FF)  # hiragana and katakana
HAN_EXT_A: Final = (0x3400, 0x4DBF)  # CJK unified ideographs, extension A
HAN: Final = (0x4E00, 0x9FFF)  # CJK unified ideographs
HAN_COMPAT: Final = (0xF900, 0xFAFF)  # CJK compatibility ideographs
HANGUL: Final = (0xAC00, 0xD7AF)  # Hangul syllables
HANGUL_JAMO: Final = (0x1100, 0x11FF)  # the letters a Hangul syllable is made of
HANGUL_COMPAT_JAMO: Final = (0x3130, 0x318F)  # the same letters written alone (ㅋㅋ)
HALFWIDTH_KANA: Final = (0xFF66, 0xFF9F)  # half-width katakana (NFKC makes them full-width)

# The one definition: every block any reader counts as CJK.
CJK_RANGES: Final[_Ranges] = (
    KANA,
    HAN_EXT_A,
    HAN,
    HAN_COMPAT,
    HANGUL,
    HANGUL_JAMO,
    HANGUL_COMPAT_JAMO,
    HALFWIDTH_KANA,
)
# The index's (`index_words`): its text is NFKC-normalised first, which leaves no half-width katakana.
CJK_INDEX_RANGES: Final[_Ranges] = tuple(r for r in CJK_RANGES if r != HALFWIDTH_KANA)
# The table of facts' (`_facts`): not the lone Hangul letters, which it reads as letters of a word (a
# letter beside a trigger or a value makes it part of a longer word); counting them CJK would change which
# sentences it relates.
CJK_FACT_RANGES: Final[_Ranges] = tuple(r for r in CJK_RANGES if r not in (HANGUL_JAMO, HANGUL_COMPAT_JAMO))
# A value's type in an update (`_update._types`): Chinese and Japanese only, narrower than the facts'. So it
# has always been: a Korean value or a compatibility ideograph typed "cjk" instead of "word" would change
# when two sentences' values are of one type, and so which sentences update which.
CJK_VALUE_RANGES: Final[_Ranges] = (KANA, HAN_EXT_A, HAN)


def char_class(ranges: _Ranges) -> str:
    """The body of a regular expression's character class for `ranges` (`[...]` without its brackets)."""
    return "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in ranges)
