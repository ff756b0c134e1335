"""What a person's sentence says, in any language whose table `lang/` holds: whether it states a fact of
now (or asks, supposes, plans, remembers, reports someone else's words, jokes), about whom, with which cue
of a change, and the words of its topic and its values.

Every reading is one rule over the tables (`_tables.Saying`), never a code path per language: a sentence's
language is told by its script (kana: Japanese; Han: Chinese) or, for a language written with spaces, by
its function words and letters; its table then says which words are questions, hypotheticals, plans,
past, reported words, jokes, cues, negations and additions. What is left of a sentence after those and its
function words are the words of its topic; numbers, e-mail and web addresses, names (capitalised inside a
sentence) and quoted words are its values."""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from ._tables import Saying
from .lang import de, en, es, fr, ja, zh

__all__ = ["LANGUAGES", "Kind", "Said", "asks_about_now", "language_of", "of_speaker", "read", "sayings"]

LANGUAGES: Final[dict[str, Saying]] = {t.code: t for t in (en.SAYING, de.SAYING, es.SAYING, fr.SAYING,
                                                           zh.SAYING, ja.SAYING)}  # fmt: skip
Kind = Literal["fact", "question", "hypothetical", "plan", "past", "reported", "joke"]
Cue = Literal["update", "retraction"]

_KANA: Final = re.compile(r"[\u3040-\u30ff]")
_HAN: Final = re.compile(r"[\u3400-\u9fff]")
_CJK_RUN: Final = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]+")
_HIRAGANA: Final = re.compile(r"[\u3040-\u309f]+")
_APOSTROPHE: Final = re.compile(r"'")
_SPLIT: Final = re.compile(r"(?<=[.!?…])\s+(?=\S)|(?<=[。！？!?])|\n+|(?<=[;:])\s+(?=[A-ZÀ-Ý¿¡])")
_WORD: Final = re.compile(r"[^\W\d_][\w'’-]*[^\W_]|[^\W\d_]")
_EMAIL: Final = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL: Final = re.compile(r"(?:https?://|www\.)\S+")
_NUMBER: Final = re.compile(r"\d+(?:[.,:/]\d+)*")
_QUOTED: Final = re.compile(r"[\"“„«‹「『]([^\"”“»›」』]{2,60})[\"”“»›」』]")
_LEAD: Final = re.compile(
    r"^(?:(?:ok|okay|so|well|oh|ah|hey|hi|yeah|yes|no|ugh|lol|haha|btw|anyway|also|and|but|hmm|"
    r"ja|also|na|nein|bueno|pues|vale|oye|eh|bon|alors|ben|euh|donc)\b[\s,!.:—-]*)+",
    re.IGNORECASE,
)
_MARKS: Final = "?？"


@dataclass(frozen=True)
class Said:
    """One sentence, read: `kind` "fact" states something as true now; `subject` is "speaker" (the person
    who says it, or a sentence about no one else) or "other"; `cue` a change it says; `words` its topic
    (casefolded content words, or character pairs of Chinese and Japanese); `values` what it gives a fact."""

    text: str
    lang: str
    kind: Kind
    subject: Literal["speaker", "other"]
    cue: Cue | None
    negated: bool
    addition: bool
    words: frozenset[str]
    values: frozenset[str]
    kinds: frozenset[str] = frozenset()  # the kinds of its values: date, time, amount, email, url, phone
    sentence: int = 0  # which sentence of the text (`sayings`)
    clause: bool = False  # one clause of a sentence of several (the sentence is read whole too)
    lent: bool = False  # its cue is its sentence's, said in another clause ("change of plan, ...")

    @property
    def states(self) -> bool:
        return self.kind == "fact"


@functools.lru_cache(maxsize=8192)
def language_of(text: str) -> str:
    """The language of a text: Japanese when it holds kana, Chinese when it holds Han characters, else the
    spaced language whose function words it holds most (letters only a language writes break ties)."""
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    words = [w.casefold() for w in _WORD.findall(text)]
    best, score = "en", 0.0
    for table in LANGUAGES.values():
        if not table.spaced:
            continue
        hits = sum(w in table.stop for w in words) + 2 * sum(c in _LETTERS.get(table.code, "") for c in text)
        if hits > score:
            best, score = table.code, hits
    return best


_LETTERS: Final = {"de": "äöüßÄÖÜ", "es": "ñ¿¡áíóúÑ", "fr": "çèêàùœëîôÇÈÊÀ"}


@functools.lru_cache(maxsize=8192)
def sayings(text: str) -> tuple[Said, ...]:
    """Each sentence of `text` (its first 20,000 characters), read in the text's language; a sentence of
    several clauses ("I'm a data analyst at Ocado, can you explain window functions?") also clause by
    clause, so a fact said in passing before a question, or beside another fact, is read on its own."""
    lang = language_of(text[:2000])
    out: list[Said] = []
    for number, sentence in enumerate(_sentences(text)):
        whole = dataclasses.replace(read(sentence, lang), sentence=number)
        parts = _clauses(sentence)
        out.append(whole)
        if len(parts) > 1:
            # A clause without a subject of its own is the sentence's ("my husband got a job at Deloitte,
            # starts in a month": the husband starts).
            out += [
                dataclasses.replace(_inherit(read(part, lang), whole), sentence=number, clause=True)
                for part in parts
            ]
    return tuple(out)


def _inherit(clause: Said, sentence: Said) -> Said:
    if sentence.subject == "other" and clause.subject == "speaker" and not _first_person(clause):
        clause = dataclasses.replace(clause, subject="other")
    # A joke, a supposition, a memory or someone's words is so in each of its clauses (a question is not:
    # "I'm an analyst at Ocado, can you explain window functions?")
    if sentence.kind in _WHOLE_KINDS and clause.kind == "fact":
        clause = dataclasses.replace(clause, kind=sentence.kind)
    return clause


_WHOLE_KINDS: Final = ("joke", "hypothetical", "past", "reported")


_ASKED_WORDS: Final = 8  # topic words of a question about one fact of the person, at most (16 pairs in CJK)


def asks_about_now(question: str) -> bool:
    """Does the question ask about the person who asks, as things are now: about the speaker, in the first
    person or (a language that leaves its pronoun out) naming no one, not about a past ("when did I…?",
    "have I ever…?"), not addressed to the listener ("can you suggest…?"), and short, as a question about
    one fact is ("where do I live?", "Wo wohne ich?", "¿dónde vivo?"; not "what is Caroline's job?")?"""
    said = sayings(question)
    if not said or any(s.kind == "past" or s.subject != "speaker" for s in said):
        return False
    for one in said:
        table = LANGUAGES[one.lang]
        folded = _fold(one.text)
        if _matcher(table)("asks_past", folded) or _matcher(table)("addressee", folded):
            return False
    words = sum(len(s.words) // (1 if LANGUAGES[s.lang].spaced else 2) for s in said if not s.clause)
    return words <= _ASKED_WORDS and any(of_speaker(s) for s in said)


def of_speaker(said: Said) -> bool:
    """Is the sentence about the person who says it: in the first person, or, in a language that leaves
    its subject pronoun out ("¿dónde vivo?", "今飼ってるペットの名前は？"), naming no one?"""
    if _first_person(said):
        return True
    return LANGUAGES[said.lang].drops_pronouns and not any(v[:1].isalpha() for v in said.values)


def _first_person(said: Said) -> bool:
    """Does the sentence hold one of its language's first-person words ("I", "my", "ich", "我", "私")?"""
    table = LANGUAGES[said.lang]
    folded = _fold(said.text)
    if not table.spaced:
        return any(e in folded for e in table.first_person)
    return _matcher(table)("first_person", folded)


_CLAUSE: Final = re.compile(
    r"\s*(?:[,;—–]|\s-\s|(?<=\w)\s+(?:and|but|so|und|aber|y|pero|et|mais)\s+)\s*|[，；、]"
)


def _clauses(sentence: str) -> list[str]:
    """A sentence's clauses, each of at least two words (three characters in Chinese and Japanese)."""
    parts = [p.strip() for p in _CLAUSE.split(sentence) if p and p.strip()]
    return [p for p in parts if len(p.split()) >= 2 or (_CJK_RUN.search(p) and len(p) >= 3)]


def _sentences(text: str) -> list[str]:
    out = []
    for raw in _SPLIT.split(text[:20_000]):
        sentence = " ".join(raw.split())
        if sentence.strip(" .,!?;:…。！？"):
            out.append(sentence)
    return out


@functools.lru_cache(maxsize=8192)
def read(sentence: str, lang: str | None = None) -> Said:
    """One sentence, read with the table of `lang` (told from the sentence when None; a sentence in
    Chinese or Japanese script is read with that table whatever the text around it is)."""
    code = language_of(sentence) if lang is None or _CJK_RUN.search(sentence) else lang
    table = LANGUAGES[code]
    bare = _LEAD.sub("", sentence).strip()
    folded = _fold(bare)
    match = _matcher(table)
    kind: Kind = "fact"
    marked = sentence.rstrip().rstrip("\"')]”’»」").endswith(tuple(_MARKS))
    # "might change jobs next year" (no mark, its subject left out) supposes; "might I ask…?" asks
    opens = match("question_starts", folded, at_start=True) and not match(
        "hypothetical", folded, at_start=True
    )
    if marked or opens or (table.question_ends and folded.rstrip(" 。.!！").endswith(table.question_ends)):
        kind = "question"
    elif match("reported", folded) or _reported_quote(sentence):
        kind = "reported"
    elif match("joke", folded):
        kind = "joke"
    elif match("hypothetical", folded):
        kind = "hypothetical"
    elif match("past", folded):
        kind = "past"
    elif match("plan", folded):
        kind = "plan"
    cued = _fold(_without_names(bare, table))
    retraction = match("retraction", cued)
    cue: Cue | None = "retraction" if retraction else "update" if match("update", cued) else None
    if kind in ("hypothetical", "joke", "reported"):
        cue = None  # a supposed, joked or quoted change is none of the person's
    other = _about_other(table, folded) or (kind != "question" and _led_by_name(table, bare, folded))
    subject: Literal["speaker", "other"] = "other" if other else "speaker"
    return Said(
        sentence,
        code,
        kind,
        subject,
        cue,
        match("negation", folded),
        match("addition", folded),
        _topic(table, folded),
        _values(sentence, table),
        _kinds(table, folded),
    )


def _without_names(sentence: str, table: Saying) -> str:
    """The sentence with the names inside it left out (`_named`), where capitals mark names: a cue's word
    inside a name ("New Gary Old Town", "New Year's Eve", "Back Bay") is no cue."""
    if not table.spaced or table.nouns_capitalised:
        return sentence
    words = sentence.split()
    return " ".join(w for n, w in enumerate(words) if not _named(words, n, after=_CUE_ENDS))


_NAME_ENDS: Final = (".", "!", "?")  # a capital after these opens a sentence, not a name
_CUE_ENDS: Final = (*_NAME_ENDS, ":")  # ... and for cues after a colon too ("Big news: Now I live ...")


def _named(words: list[str], n: int, *, after: tuple[str, ...] = _NAME_ENDS) -> bool:
    """Is the `n`th of a sentence's words a name: capitalised inside it, not after a sentence's end?"""
    token = words[n].strip(".,;:!?()\"'“”‘’«»")
    return bool(n) and token[:1].isupper() and token[1:2].islower() and not words[n - 1].endswith(after)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("’", "'")


@functools.cache
def _matcher(table: Saying) -> _Match:
    return _Match(table)


class _Match:
    """The table's lists as patterns, compiled once: `match(name, folded)` says whether the sentence holds
    one of the list's entries (at its start only, with `at_start`)."""

    def __init__(self, table: Saying) -> None:
        self.table = table
        self.anywhere: dict[str, re.Pattern[str] | tuple[str, ...]] = {}
        self.start: dict[str, re.Pattern[str] | tuple[str, ...]] = {}

    def __call__(self, name: str, folded: str, *, at_start: bool = False) -> bool:
        cache = self.start if at_start else self.anywhere
        found = cache.get(name)
        if found is None:
            entries = tuple(_fold(e) for e in getattr(self.table, name))
            found = cache[name] = _compiled(entries, self.table.spaced, at_start)
        if isinstance(found, tuple):
            return folded.startswith(found) if at_start else any(e in folded for e in found)
        return found.search(folded) is not None


def _compiled(entries: tuple[str, ...], spaced: bool, at_start: bool) -> re.Pattern[str] | tuple[str, ...]:
    if not spaced:
        return entries
    if not entries:
        return re.compile(r"(?!)")
    alternatives = "|".join(sorted((re.escape(e) for e in entries), key=len, reverse=True))
    edge = r"(?<![\w'])" if not at_start else "^"
    # an elided entry ("j'", "l'") runs on into its word
    elided = "|".join(
        sorted((re.escape(e) for e in entries if e.endswith(("'", "’"))), key=len, reverse=True)
    )
    tail = rf"|(?:{elided})" if elided else ""
    return re.compile(rf"{edge}(?:(?:{alternatives})(?![\w']){tail})")


def _reported_quote(sentence: str) -> bool:
    """Someone's words in quotes after a colon ("he wrote: 'I live in Perth now'"): reported."""
    return bool(re.search(r"[:：]\s*[\"“„«‹'「『]", sentence))


def _about_other(table: Saying, folded: str) -> bool:
    """Is the sentence's subject someone else: one of the table's others among its first words (first
    characters, without spaces), before any first-person word."""
    if table.spaced:
        head = " ".join(folded.split()[:4])
        match = _matcher(table)
        if not match("others", head):
            return False
        first = _compiled(tuple(_fold(e) for e in table.first_person), True, False)
        other = _compiled(tuple(_fold(e) for e in table.others), True, False)
        assert not isinstance(first, tuple)
        assert not isinstance(other, tuple)
        at_other = other.search(head)
        at_first = first.search(head)
        # "my sister ..." is the sister's: a possessive other wins over its own "my"
        return at_other is not None and (at_first is None or at_first.start() >= at_other.start())
    head = folded[:10]
    if any(
        head.startswith(e) or (e in head and not head.startswith(table.first_person)) for e in table.others
    ):
        return True
    # "我姐上周刚搬去苏州": a relation after the speaker's own word ("my"), written with or without its
    # particle (的, の, 家)
    for mine in sorted(table.first_person, key=len, reverse=True):
        if head.startswith(mine):
            rest = head[len(mine) :].lstrip("的の家们")
            return any(rest.startswith(e.removeprefix(mine)) for e in table.others if e.removeprefix(mine))
    return False


def _led_by_name(table: Saying, sentence: str, folded: str) -> bool:
    """ "Omar bought a Honda Civic", "Tom's rent is 1950 euros now": a sentence of a spaced language led by
    a name (a capitalised word that is none of the table's words, before a word in lower case), without a
    first-person word, is about that person."""
    words = sentence.split(maxsplit=2)
    if not table.spaced or table.nouns_capitalised or len(words) < 2 or not words[1][:1].islower():
        return False  # "Cambridge CB2 1RX" is an address, "Termin ist am 3. Juni" a German noun
    head = _POSSESSIVE.sub("", words[0].strip(".,;:!?()\"'“”‘’«»¡¿"))
    if not (head[:1].isupper() and head[1:2].islower()) or _fold(head) in _skipped(table):
        return False
    return not _matcher(table)("first_person", folded)


_POSSESSIVE: Final = re.compile(r"['’]s$")


def _topic(table: Saying, folded: str) -> frozenset[str]:
    """The words of a sentence's topic: content words (not function words, time words, or the table's cue
    and marker words) of at least three letters, an elided article or pronoun taken off ("l'appartement":
    "appartement"); in Chinese and Japanese the character pairs of its runs that hold a character of
    meaning (Han or katakana: kana pairs are grammar)."""
    skip = _skipped(table)
    if not table.spaced:
        stop = set(table.stop)
        pairs: set[str] = set()
        for found in _CJK_RUN.findall(folded):
            run = "".join(c for c in found if c not in stop)
            pairs.update(run[i : i + 2] for i in range(len(run) - 1))
        return frozenset(p for p in pairs - skip if not _HIRAGANA.fullmatch(p))
    words: set[str] = set()
    for word in _WORD.findall(folded):
        pieces = [p for p in _APOSTROPHE.split(word) if p]
        if pieces[-1:] != ["t"]:  # "don't", "isn't": a negated auxiliary, no topic
            words.update(pieces if len(pieces) > 1 else [word])
    return frozenset(w for w in words if len(w) >= 3 and w not in skip and not w.isdigit())


@functools.cache
def _skipped(table: Saying) -> frozenset[str]:
    """What is never a topic word: the table's function words, time words and marker words."""
    return table.stop | _marker_words(table) | frozenset(_fold(w) for w in table.time + table.calendar)


@functools.cache
def _marker_words(table: Saying) -> frozenset[str]:
    """The single words of the table's lists: they say how something is said, not what it is about."""
    lists: Iterable[tuple[str, ...]] = (
        table.first_person, table.question_starts, table.hypothetical, table.plan, table.past, table.reported,
        table.joke, table.update, table.retraction, table.negation, table.addition,
    )  # fmt: skip
    words = {_fold(e) for entries in lists for e in entries if " " not in e}
    if not table.spaced:
        return frozenset(w for w in words if len(w) == 2)
    return frozenset(words)


_PHONE: Final = re.compile(r"(?<![\w.])\+?\d[\d ()./-]{5,}\d(?![\w@])")
_AMOUNT: Final = re.compile(
    r"[€$£¥]\s?\d|\d[\d.,]*\s?(?:k\b|€|\$|£|¥|円|元|块|万|euros?\b|eur\b|dollars?\b|pounds?\b|pesos?\b)"
)
_CLOCK: Final = re.compile(r"\b\d{1,2}(?::\d{2}|h\d{0,2}\b| ?uhr\b| ?(?:am|pm)\b)|\d+\s*[点時]")
_CJK_DATE: Final = re.compile(r"\d+\s*月|\d+\s*[日号號]")


def _kinds(table: Saying, folded: str) -> frozenset[str]:
    """The kinds of value a casefolded sentence names: a date (a number beside a weekday or a month: "6
    march", "14. september", "6月8号"), a clock time, an amount of money, an e-mail or web address, a
    phone number."""
    found = set()
    if _EMAIL.search(folded):
        found.add("email")
    if _URL.search(folded):
        found.add("url")
    plain = _URL.sub(" ", _EMAIL.sub(" ", folded))
    if any(sum(c.isdigit() for c in m) >= 7 for m in _PHONE.findall(plain)):
        found.add("phone")
    if _AMOUNT.search(plain):
        found.add("amount")
    if _CLOCK.search(plain):
        found.add("time")
    if _CJK_DATE.search(plain) or _dated(table, plain):
        found.add("date")
    return frozenset(found)


def _dated(table: Saying, folded: str) -> bool:
    """A number within two words of the name of a weekday or a month."""
    if not table.spaced:
        return False
    words = re.findall(r"[\w']+", folded)
    times = _calendar(table)
    return any(
        w.isdigit() and len(w) <= 4 and any(x in times for x in words[max(0, n - 2) : n + 3])
        for n, w in enumerate(words)
    )


@functools.cache
def _calendar(table: Saying) -> frozenset[str]:
    return frozenset(_fold(w) for w in table.calendar)


def _values(sentence: str, table: Saying) -> frozenset[str]:
    """Its addresses, numbers, quoted words and names (a capitalised word inside a sentence), but not the
    name of a weekday or a month, nor a name the sentence is said to ("sorry to hear that, Melanie.")."""
    found: set[str] = set()
    calendar = _calendar(table)
    for pattern in (_EMAIL, _URL):
        found.update(m.casefold().rstrip(".,;:!?") for m in pattern.findall(sentence))
    stripped = _URL.sub(" ", _EMAIL.sub(" ", sentence))
    found.update(n.replace(",", "") for n in _NUMBER.findall(stripped))
    found.update(q.casefold().strip() for q in _QUOTED.findall(stripped))
    words = stripped.split()
    for n, word in enumerate(words):
        token = word.strip(".,;:!?()\"'“”‘’«»")
        if _named(words, n):
            addressed = words[n - 1].endswith(",") and (n == len(words) - 1 or word.endswith((".", "!", "?")))
            if not addressed and _fold(token) not in calendar:
                found.add(token.casefold())
    return frozenset(v for v in found if v)
