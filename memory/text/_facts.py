"""The one table of facts: the kinds of thing a person's situation changes in, how to tell a sentence is
about one (its triggers, or a value of it named), which words are its values, and how its values behave
(one at a time, or several at once).

It is a prior, not a gate (`_update`): two sentences that share the words of their topic relate without
it; it relates two that share none ("I relocated to Glasgow" and "back in Manchester now": both where the
person lives; "I'm learning Korean" and "switched to Japanese": both a language) and says which of them hold
one value at a time.

The table holds the attributes' names and how they behave; their words are each language's data
(`lang/<code>.py`, `FACTS`), merged here, so a language is one more module. How an entry matches:

- A value is a whole word or phrase of a spaced language ("tea" is no value of "team", nor "law" of
  "in-law"), and a string of Chinese or Japanese anywhere. Where values overlap the longest wins ("green
  tea" is a drink, not a colour and a drink; "咖啡色" a colour, not coffee).
- A trigger of a spaced language that is one word matches at a word's start ("relocat" finds "relocated"),
  except a word of four letters or fewer, which matches whole or with a plural "-s" ("car", "cars": not
  "career"); a phrase matches whole ("i use" is not "i usually"). A Chinese or Japanese trigger matches
  anywhere. A trigger inside a value counts for nothing ("drive" of
  "google drive"), nor inside one of its attribute's ignored phrases ("course" of "of course")."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from ._lexicon import Lexicon
from ._script import CJK_FACT_RANGES, char_class
from .lang import de, en, es, fr, ja, zh

__all__ = ["ATTRIBUTES", "Attribute", "attributes_of", "single", "value_words"]


@dataclass(frozen=True)
class Attribute:
    name: str
    single: bool  # one value at a time: a new one replaces the old (else several stand together)
    triggers: tuple[str, ...]
    values: tuple[str, ...] = ()  # words that are a value of it (a diet, a drink, a colour)
    ignore: tuple[str, ...] = ()  # phrases holding a trigger that are not about it ("of course")


# Each attribute, and whether it holds one value at a time. Its words are every language's `FACTS`.
_SHAPE: Final[tuple[tuple[str, bool], ...]] = (
    ("residence", True),
    ("job", True),
    ("employer", True),
    ("diet", True),
    ("drink", True),
    ("car", True),
    ("partner", True),
    ("pet", False),
    ("email", True),
    ("phone", True),
    ("money", True),
    ("appointment", False),
    ("study", True),
    ("language", False),
    ("hobby", False),
    ("favourite", True),
    ("tool", True),
    ("trip", False),
)
_TABLES: Final[tuple[dict[str, Lexicon], ...]] = (
    en.FACTS,
    de.FACTS,
    es.FACTS,
    fr.FACTS,
    zh.FACTS,
    ja.FACTS,
)


def _merged(entries: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(entries))


def _attribute(name: str, one: bool) -> Attribute:
    words = [table[name] for table in _TABLES if name in table]
    return Attribute(
        name,
        one,
        _merged(t for w in words for t in w.triggers),
        _merged(v for w in words for v in w.values),
        _merged(i for w in words for i in w.ignore),
    )


ATTRIBUTES: Final[tuple[Attribute, ...]] = tuple(_attribute(name, one) for name, one in _SHAPE)

_CJK: Final = char_class(CJK_FACT_RANGES)
_HAS_CJK: Final = re.compile(f"[{_CJK}]")
# A letter or a digit of a spaced language: the same word goes on (a Chinese or Japanese character does not
# make "notion" of "我用notion" part of a longer word).
_IN_WORD: Final = rf"[^\W{_CJK}]"
_SHORT: Final = 4  # a trigger of a single word this long or shorter matches whole (or with a plural "-s")


def _cjk(entry: str) -> bool:
    return _HAS_CJK.search(entry) is not None


def _either(entries: Iterable[str]) -> str:
    return "|".join(re.escape(e) for e in sorted(entries, key=len, reverse=True))


@functools.cache
def _values() -> re.Pattern[str]:
    """Every value of every attribute, the longest first where several begin at one place; a value of a
    spaced language whole (neither a letter nor a hyphen on either side)."""
    values = {v for a in ATTRIBUTES for v in a.values}
    spaced = [v for v in values if not _cjk(v)]
    cjk = [v for v in values if _cjk(v)]
    edge = rf"(?:{_IN_WORD}|-)"
    alternatives = [rf"(?<!{edge})(?:{_either(spaced)})(?!{edge})"] if spaced else []
    alternatives += [_either(cjk)] if cjk else []
    return re.compile("|".join(alternatives) or "(?!)")


@functools.cache
def _owners() -> dict[str, frozenset[str]]:
    owners: dict[str, set[str]] = {}
    for attribute in ATTRIBUTES:
        for value in attribute.values:
            owners.setdefault(value, set()).add(attribute.name)
    return {value: frozenset(names) for value, names in owners.items()}


@dataclass(frozen=True)
class _Triggers:
    spaced: re.Pattern[str] | None
    cjk: tuple[str, ...]
    ignore: re.Pattern[str] | None


@functools.cache
def _triggers(attribute: Attribute) -> _Triggers:
    spaced = [t for t in attribute.triggers if not _cjk(t)]
    stems = [t for t in spaced if " " not in t and len(t) > _SHORT]
    short = [t for t in spaced if " " not in t and len(t) <= _SHORT]
    phrases = [t for t in spaced if " " in t]
    alternatives = [f"(?:{_either(stems)})"] if stems else []
    if short:
        alternatives.append(rf"(?:{_either(short)})s?(?!{_IN_WORD})")
    if phrases:
        alternatives.append(rf"(?:{_either(phrases)})(?!{_IN_WORD})")
    pattern = re.compile(rf"(?<!{_IN_WORD})(?:{'|'.join(alternatives)})") if alternatives else None
    spaced_ignore = [i for i in attribute.ignore if not _cjk(i)]
    cjk_ignore = [i for i in attribute.ignore if _cjk(i)]
    ignored = [rf"(?<!{_IN_WORD})(?:{_either(spaced_ignore)})(?!{_IN_WORD})"] if spaced_ignore else []
    ignored += [_either(cjk_ignore)] if cjk_ignore else []
    ignore = re.compile("|".join(ignored)) if ignored else None
    return _Triggers(pattern, tuple(t for t in attribute.triggers if _cjk(t)), ignore)


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """`text` with the characters of `spans` made spaces (a trigger inside them no longer matches)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def attributes_of(folded: str, *, spaced: bool) -> frozenset[str]:
    """The attributes a casefolded sentence is about: by a value of one it names ("korean", "toyota"), or
    by one of its triggers outside the values it names ("relocated", "住在"). `spaced`: the sentence is of a
    spaced language (holding no Chinese or Japanese, whose entries are then not looked for)."""
    found: set[str] = set()
    named = list(_values().finditer(folded))
    owners = _owners()
    for match in named:
        found |= owners[match.group()]
    rest = _blank(folded, (m.span() for m in named))
    cjk = not spaced or _HAS_CJK.search(rest) is not None
    for attribute in ATTRIBUTES:
        if attribute.name in found:
            continue
        triggers = _triggers(attribute)
        text = rest
        if triggers.ignore is not None:
            text = _blank(text, (m.span() for m in triggers.ignore.finditer(text)))
        if (triggers.spaced is not None and triggers.spaced.search(text)) or (
            cjk and any(t in text for t in triggers.cjk)
        ):
            found.add(attribute.name)
    return frozenset(found)


def value_words(folded: str) -> frozenset[str]:
    """The attribute values a casefolded sentence names ("vegan", "matcha", "咖啡"): a word of a spaced
    language whole ("tea" is no value of "team"), a Chinese or Japanese one anywhere; of overlapping values
    the longest ("green tea")."""
    return frozenset(m.group() for m in _values().finditer(folded))


def single(name: str) -> bool:
    return next((a.single for a in ATTRIBUTES if a.name == name), False)
