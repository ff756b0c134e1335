"""The words of one attribute of the table of facts in one language: what says a sentence is about it (its
triggers) and what is a value of it (its values). Each `lang/<code>.py` gives its own as data (`FACTS`) and
`_facts` merges them, so a language is one more module and the table holds no words of its own.

Entries are written as a person types them once casefolded (`_saying._fold`: "fussball", not "Fußball"):
a word or a phrase of a spaced language, or a string of Chinese or Japanese."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Lexicon", "words"]


@dataclass(frozen=True)
class Lexicon:
    triggers: tuple[str, ...] = ()  # the sentence is about the attribute: "moved", "wohne", "住在"
    values: tuple[str, ...] = ()  # a value of it: "vegan", "matcha", "韩语"
    # Phrases that hold one of its triggers and are not about it: "of course" (of "course"), "flat white".
    ignore: tuple[str, ...] = ()


def words(text: str) -> tuple[str, ...]:
    """A list written as text, its entries separated by commas or line ends ("move to, based in"), so a long
    list of phrases stays a few lines of a module."""
    return tuple(w for line in text.splitlines() for w in (p.strip() for p in line.split(",")) if w)
