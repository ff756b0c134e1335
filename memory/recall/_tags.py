"""Finding this block's own tags (`<memory-context>`, `<quoted-material>`) in quoted text, in any spelling a
reader might take for them, so `_render` can break each one.

A reader (a model above all) reads text by how it looks, so the text is matched in a folded form, one
character at a time, each folded character remembering where it came from:

- default-ignorable characters are dropped (soft hyphen, zero-width space and joiners, word joiner,
  variation selectors, bidi controls, Hangul fillers, tag characters: they show nothing, so
  `memory-con<SHY>text` reads as the name);
- each remaining character is NFKD-decomposed and its combining marks dropped (`ẹ` reads as `e`),
  case-folded, and folded once more by a table of look-alikes (Unicode's confusables for the letters of the
  two names and for `<`, `/` and `-`: Cyrillic and Greek letters, the fraction and division slashes,
  mathematical and CJK angle brackets, every dash); `m` folds to `rn`, as the confusables' skeleton has
  it, so `rnemory` is `memory` too; the hyphen between a name's two words may be an underscore, spaces
  or nothing (`memory_context`, `memory<SHY>context`).

Character references (`&lt;`, `&#x3c;`, `&sol;`, `&lang;` ...) are matched in the folded text as they are.
The match is mapped back to the original text: the tag is broken by a zero-width space right after its
name's last character, and a name already followed by one is left alone, so neutralising is idempotent."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Final

__all__ = ["MARK", "name_ends"]

MARK: Final = "\u200b"  # what breaks a tag's name

# Look-alikes of what the two names and a tag's start are made of (after NFKD and case folding, so
# full-width and mathematical letters are folded already). From Unicode's confusables (TR39), the entries
# whose target is one of these characters.
_LOOK_ALIKES: Final = {
    "a": "аɑα⍺ꭤ",
    "c": "сϲᴄⲥꮯ𐐽",
    "d": "ԁᏧꓒꓓ",
    "e": "еҽ℮ꬲεєѐ",
    "i": "іıɩιӏᎥꙇɪ",
    "l": "ӏǀ|׀ⵏꓲ1ℓ",
    "m": "мⅿꮇ",
    "n": "ոпηռ",
    "o": "оοσօ૦০๐໐ᴏⲟ0ჿ",
    "q": "ԛգզ",
    "r": "гᴦⲅꭇꮁ",
    "t": "тτᴛ",
    "u": "υսᴜʋꭎꞟ",
    "x": "х×⨯ᕁχ",
    "y": "уүγʏყɣ",
    "-": "˗⁃−➖ᐨ",
    "/": "⁄∕⧸╱⟋ノ丿〳᜵⼃",
    "<": "‹❮˂ᐸ〈⟨〈《⟪≺⧼❬❰⦑ᚲ⋖",
    ">": "›❯˃ᐳ〉⟩〉》⟫≻⧽❭❱⦒⋗",
}
_FOLD: Final = {c: target for target, chars in _LOOK_ALIKES.items() for c in chars}
_FOLD.update({"m": "rn"})  # the skeleton of "m" (so "rn" and "m" read alike)

# Default-ignorable code points that are not of category Cf (those are dropped by category).
_IGNORABLE_RANGES: Final = (
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x115F, 0x1160),  # Hangul fillers
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),  # Mongolian variation selectors
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFFA0, 0xFFA0),
    (0xE0000, 0xE0FFF),  # tags and variation selectors supplement
)


def _ignorable(c: str) -> bool:
    if unicodedata.category(c) == "Cf":
        return True
    point = ord(c)
    return any(low <= point <= high for low, high in _IGNORABLE_RANGES)


def _fold_char(c: str) -> str:
    if c.isascii():
        folded = c.lower()
        return _FOLD.get(folded, folded)
    if _ignorable(c):
        return ""
    out = []
    for part in unicodedata.normalize("NFKD", c):
        if unicodedata.combining(part):
            continue
        if unicodedata.category(part) == "Pd":  # every dash reads as "-"
            out.append("-")
            continue
        for low in part.casefold():
            out.append(_FOLD.get(low, low))
    return "".join(out)


def _folded(text: str) -> tuple[str, list[int]]:
    """`text` folded, and for each folded character the index of the character it came from."""
    chars: list[str] = []
    origin: list[int] = []
    for i, c in enumerate(text):
        for f in _fold_char(c):
            chars.append(f)
            origin.append(i)
    return "".join(chars), origin


def _skeleton(name: str) -> str:
    return "".join(_fold_char(c) for c in name)


# "<" as a reader may see it, after folding (a look-alike is "<" by now): itself or a character reference
# (HTML decodes `&lt` without its semicolon too; digits 0 and 1 fold to o and l). Then "/" likewise,
# optional, then the name. Whatever follows (">", whitespace, attributes, "/>") does not matter.
_O: Final = "[o]*"
_LT: Final = rf"(?:<|&lt;?|&lang(?:le)?;?|&lsaquo;?|&#{_O}6o;?|&#x{_O}3c;?)"
_SLASH: Final = rf"(?:/|&sol;|&#{_O}47;?|&#x{_O}2f;?)?"
_JOIN: Final = r"(?:-|_|\s+)?"


def _pattern(*names: str) -> re.Pattern[str]:
    # The hyphen between the name's two words as a reader may see it: a hyphen, an underscore, spaces, or
    # nothing (a soft hyphen or a joiner in its place is dropped by the folding, so it reads as nothing).
    alternatives = "|".join(
        _JOIN.join(re.escape(_skeleton(word)) for word in name.split("-")) for name in names
    )
    return re.compile(rf"{_LT}\s*{_SLASH}\s*(?:{alternatives})")


def name_ends(text: str, pattern: re.Pattern[str]) -> Iterator[int]:
    """The index in `text` just after the last character of each tag name `pattern` finds that is not
    broken yet (not followed by `MARK`), in order."""
    if text.isascii() and "<" not in text and "&" not in text:
        return  # no tag can start without "<" or a reference (every look-alike of it is non-ASCII)
    folded, origin = _folded(text)
    for found in pattern.finditer(folded):
        end = origin[found.end() - 1] + 1
        if not text.startswith(MARK, end):
            yield end


BOTH: Final = _pattern("memory-context", "quoted-material")
BLOCK: Final = _pattern("memory-context")
