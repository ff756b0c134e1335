"""Does a person's newer statement give a newer value of a fact their older statement gave?

The one rule, for every language of `lang/` (`_saying` reads the sentences, `_facts` is a prior):

- **Both state a fact of now, about the speaker.** A question, a hypothetical, a plan, a past that is
  over, someone else's words, a joke, or a sentence about someone else ("my sister moved to Madrid") is
  never a newer value of the speaker's fact; neither is "also" one more ("I also have a flat in Berlin").
- **The same topic.** They share a word of their topic ("rent", "coffee", "analyst"; for Chinese and
  Japanese two character pairs), or they are about the same attribute of the table ("relocated to
  Glasgow" and "back in Manchester": where the speaker lives).
- **A newer value.** The newer one names a value the older does not (a name, a number, an address, a
  diet...), or negates what the older said.
- **Said as a change.** It carries an update or a correction cue ("now", "instead", "switched",
  "actually", "typo", "jetzt", "ya no", "désormais", "现在", "今は"...); without one, only a fact held one
  value at a time (an e-mail, a phone number, an amount, a date) that is given another value is updated.

Said again with the same values, nothing changed: no update."""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Final, Literal

from ._facts import attributes_of, single, value_words
from ._saying import Said, _fold, sayings
from ._script import CJK_VALUE_RANGES, char_class

__all__ = [
    "Change",
    "Update",
    "change_keys",
    "changes",
    "held",
    "said_keys",
    "same_fact",
    "update",
]

Change = Literal["update", "retraction"]

# Kinds of value a person has one of at a time: said with another value, without a cue, it changed ("my
# e-mail is ...", "the rent is £1,075"); a place or a job said again may be a second one, so needs a cue.
_ONE_AT_A_TIME = frozenset({"email", "phone", "url"})  # identifiers: a new one, said without a cue, replaces
# A word more current statements than this hold is the vocabulary of where they are kept (a chat about one
# project), not the topic of one fact: the writer and recall leave such words out of `common`.
COMMON_STATEMENTS = 12
_STATEMENT_WORDS = 12  # topic words (character pairs in Chinese and Japanese: 24) a statement holds at most
_CLOSE = 1 / 3
_MOST = 1 / 2  # of an older text's topic words, in what a newer one replaced: replaced whole
_SAME = (
    1 / 2
)  # of the longer sentence's topic words, shared: the same statement with another number  # of the shorter sentence's topic words, shared: what makes two sentences one topic


@dataclass(frozen=True)
class Update:
    """What a newer text does to an older one: the change; whether it leaves none of the older text's
    facts standing (`whole`) or replaces only some of them ("I live in Paris and I work as a nurse", then
    "I moved to Berlin": the nurse stands; a change said without a cue, `_tentative`, never replaces the
    whole); and whether only the kind of a value relates them (`weak`: a
    correction of a date, "it's the 25th of May, not the 23rd", which belongs to the newest older date)."""

    change: Change
    whole: bool
    weak: bool = False


@dataclass(frozen=True)
class _Link:
    newer: frozenset[str]  # the values `new` gives that `old` did not name
    attributes: frozenset[str]  # the attributes of the table both are about
    had: bool  # `old` named a value
    weak: bool  # related by the kind of a value alone
    kinds: frozenset[str] = frozenset()  # the kinds of value both name (a date, an amount, an e-mail)
    worded: bool = False  # related by the words of their topics, not by an attribute alone


@functools.lru_cache(maxsize=8192)
def _units(text: str) -> tuple[Said, ...]:
    """What `text` says one by one: each clause of a sentence of several (with the sentence's cue when it
    has none of its own: "change of plan, we're doing Croatia"), else the sentence."""
    said = sayings(text)
    # A sentence of several clauses is also read whole (its topic may span them) unless one of them is
    # about someone else ("big news — my husband got a job at Deloitte").
    mixed = {s.sentence for s in said if s.clause and s.subject == "other"}
    cue = {s.sentence: s.cue for s in said if not s.clause}
    return tuple(
        s
        if s.cue is not None or not s.clause
        else dataclasses.replace(s, cue=cue.get(s.sentence), lent=cue.get(s.sentence) is not None)
        for s in said
        if s.clause or s.sentence not in mixed
    )


@functools.lru_cache(maxsize=8192)
def _facts(text: str) -> tuple[Said, ...]:
    """The facts of now about the speaker that `text` states: what a newer text may change."""
    return tuple(s for s in _units(text) if s.states and s.subject == "speaker")


@functools.lru_cache(maxsize=8192)
def _held(text: str) -> tuple[Said, ...]:
    """What an older text held about the speaker that a newer one may change: its facts, its plans ("we're
    going to Asturias this Christmas") and what its questions take as given when they name a value ("is
    lina.wang@163.com all right on my CV?")."""
    return tuple(
        s
        for s in _units(text)
        if s.subject == "speaker"
        and (s.states or s.kind == "plan" or (s.kind == "question" and bool(s.kinds & _ONE_AT_A_TIME)))
    )


def held(text: str) -> tuple[Said, ...]:
    """What `text` holds about the speaker that a newer text may change (`_held`)."""
    return _held(text)


def changes(text: str) -> tuple[Said, ...]:
    """What `text` says of the speaker as a change: its facts and plans said with an update or a
    correction cue (one more, "I also ...", is no change)."""
    return tuple(s for s in _newer(text) if s.cue is not None and not (s.addition and s.cue != "retraction"))


@functools.lru_cache(maxsize=8192)
def _newer(text: str) -> tuple[Said, ...]:
    """What a newer text says that may change an older one: its facts and its plans (a plan changes
    only a plan)."""
    return tuple(s for s in _units(text) if s.subject == "speaker" and s.kind in ("fact", "plan"))


@functools.lru_cache(maxsize=8192)
def update(old: str, new: str, common: frozenset[str] = frozenset()) -> Update | None:
    """The change the person's newer text `new` makes to what their older text `old` stated, or None.
    `common`: the keys (`said_keys`) so common where the texts are kept that sharing them makes no two
    sentences one fact: a long chat about one project says "team" and "pitch" in every other turn
    (`w:team`), and names a sum or a meeting in dozens of its statements (`a:money`, `a:appointment`)."""
    olds = _held(old)
    news = _newer(new)
    if not olds or not news:
        return None
    found: Change | None = None
    strong = False
    replaced: set[Said] = set()
    for before in olds:
        for said in news:
            link = _related(before, said, common)
            change = _change(said, link)
            if link is None or change is None:
                continue
            if not _tentative(said, link):
                replaced.add(before)
            strong = strong or not link.weak
            found = "retraction" if "retraction" in (found, change) else change
    if found is None:
        return None
    whole = (
        bool(replaced)
        and all(s in replaced or not _informative(s) for s in olds if s.states)
        and _most(replaced, _units(old))
    )
    return Update(found, whole, weak=not strong)


@functools.lru_cache(maxsize=8192)
def changed_in(old: str, new: str, common: frozenset[str] = frozenset()) -> tuple[Said, ...]:
    """The sentences of what the person's older text `old` held that their newer text `new` changes
    (`common`: as for `update`)."""
    news = _newer(new)
    return tuple(b for b in _held(old) if any(_change(s, _related(b, s, common)) is not None for s in news))


def _tentative(new: Said, link: _Link) -> bool:
    """A change the older statement may stand beside, so never wholly replaced by it: one said without a
    cue to what is held one at a time ("I live in Berlin" after "I live in Paris": perhaps a second home),
    or one related by an attribute alone of which a person has several (a meeting, a trip, a hobby:
    another one, even said with a cue, is as often one more)."""
    if link.kinds & _ONE_AT_A_TIME:
        return False
    if new.cue is None or (new.lent and new.cue != "retraction"):
        return True
    return new.cue != "retraction" and not link.worded and not any(single(a) for a in link.attributes)


def _most(replaced: set[Said], units: tuple[Said, ...]) -> bool:
    """Do the replaced sentences hold most of what the older text is about? A long turn that mentions a
    fact among other things (a plan, a request, a project's details) keeps standing, in part."""
    told = frozenset().union(*(s.words for s in units))
    gone = frozenset().union(*(s.words for s in replaced))
    return len(gone) >= _MOST * len(told)


def _informative(said: Said) -> bool:
    return bool(said.words or said.values)


@functools.lru_cache(maxsize=8192)
def same_fact(old: str, new: str, common: frozenset[str] = frozenset()) -> bool:
    """Do both texts state, of the speaker, one fact with different values (a newer value, said with or
    without a cue)? What orders two current statements newest first when no update was recognised.
    `common`: as for `update`."""
    return any(
        (link := _related(a, b, common)) is not None and not link.weak
        for a in _held(old)
        for b in _facts(new)
    )


def _change(new: Said, link: _Link | None) -> Change | None:
    if link is None:
        return None
    if new.cue is not None:
        return new.cue
    if link.had and link.newer and link.kinds & _ONE_AT_A_TIME:
        return "update"  # an identifier given another value: a new e-mail, phone number or address
    if (
        link.had
        and link.newer
        and "number" not in _types(link.newer)
        and any(single(a) for a in link.attributes)
    ):
        # what is held one at a time given another value, a name or a word (a bare number changes with a
        # cue, or as a quantity): the car, the partner, the city (said without a cue, `_tentative`: the
        # older one stands, partly superseded)
        return "update"
    return None


def _related(old: Said, new: Said, common: frozenset[str] = frozenset()) -> _Link | None:
    """How `new` gives `old`'s fact a value it did not have, if it does.

    The same fact: two words of their topics in common (two character pairs in Chinese and Japanese; a word
    inside another counts, "Feier" in "Geburtstagsfeier"), or one with a value named on either side ("rent
    is £950", "the rent is going up to £1,075"), or an attribute of the table both name a value of ("I
    live in Brighton", "I'm back in Manchester"), or, weakly, a kind of value both name and `new` changes
    with a cue (a date, an amount, an address). A newer value: one `new` names that `old` does not; said
    with a cue, also a word of its topic in place of one of the older's ("navy" then "terracotta is my
    colour these days"); or `new` negates what `old` said."""
    if new.addition and new.cue != "retraction":
        return None
    limit = _STATEMENT_WORDS * (2 if old.lang in ("zh", "ja") else 1)
    if max(len(old.words), len(new.words)) > limit:
        return None  # a long sentence discusses; a fact of the person is said in a few words (or a clause)
    if new.kind == "plan" and old.kind != "plan":
        return None  # a plan changes a plan, never what is so
    spaced = old.lang not in ("zh", "ja")
    old_words, new_words = _uncommon(old.words, "w:", common), _uncommon(new.words, "w:", common)
    shared = _shared(old_words, new_words) if spaced else old_words & new_words
    attributes = _uncommon(_attributes(old) & _attributes(new), "a:", common)
    old_values = _values(old)
    new_values = _values(new)
    valued = bool(old_values or new_values)
    # a share of the shorter topic, not a count: two long sentences share a few words by chance
    close = len(shared) >= _CLOSE * min(len(old_words), len(new_words))
    by_words = close and (len(shared) >= 2 or (spaced and len(shared) == 1 and valued))
    # an attribute both name a value of, of one type: a number replaces a number, a word a word ("45
    # minutes to work" and "I'm an architect now" are not one fact)
    # of an attribute held one value at a time: meetings, trips and pets stand together, so two of them
    # are one fact only by their words ("the dentist moved to Friday")
    by_attribute = bool(attributes) and bool(_types(old_values) & _types(new_values))
    kinds = old.kinds & new.kinds
    newer = new_values - old_values
    gone, added = old_words - new_words, new_words - old_words
    if not newer and new.cue is not None and attributes and 0 < len(gone) <= 2 and 0 < len(added) <= 2:
        newer = added  # a word or two in place of the older's: "navy", then "terracotta is my colour now"
    negates = new.negated and not old.negated and bool(shared)
    if not newer and not negates:
        return None  # said again with the same values: nothing changed
    if _types(frozenset(newer)) == {"number"} and not negates:
        # only a number differs: the same thing said with another number, most of its words the same
        # ("the rent is £950" / "the rent is going up to £1,075"), not two events that each have a date
        by_words = by_words and len(shared) >= _SAME * max(len(old_words), len(new_words))
        by_attribute = by_attribute and len(shared) >= _SAME * max(len(old_words), len(new_words))
    if by_words or by_attribute:
        return _Link(frozenset(newer), attributes, bool(old_values), weak=False, kinds=kinds, worded=by_words)
    if kinds and new.cue == "retraction" and new_values - old_values:
        # a correction that names only its value ("no wait, it's the 25th"): of the newest older statement
        # of that kind
        return _Link(frozenset(newer), attributes, True, weak=True, kinds=kinds)
    return None


def _uncommon(names: frozenset[str], kind: str, common: frozenset[str]) -> frozenset[str]:
    return frozenset(n for n in names if kind + n not in common) if common else names


def _shared(old: frozenset[str], new: frozenset[str]) -> set[str]:
    """The words two topics share, a word of four letters or more inside the other's counting as one."""
    found = set(old & new)
    for a in old - new:
        if len(a) < 4:
            continue
        found.update(a for b in new - old if len(b) >= 4 and (a in b or b in a))
    return found


@functools.lru_cache(maxsize=16384)
def _values(said: Said) -> frozenset[str]:
    """The values a sentence names: its names, numbers and addresses (`_saying`), the values of the
    table it names ("vegan", "matcha"); in Chinese and Japanese, which have no capitals to tell a name
    by, the words of its topic an attribute's trigger is not part of."""
    found = said.values | value_words(_fold(said.text))
    if said.lang in ("zh", "ja") and _attributes(said):
        found |= frozenset(w for w in said.words if not _trigger_in(w))
    return found


def _trigger_in(pair: str) -> bool:
    return any(pair in t or t in pair for t in _cjk_triggers())


@functools.cache
def _cjk_triggers() -> frozenset[str]:
    from ._facts import ATTRIBUTES

    return frozenset(t for a in ATTRIBUTES for t in a.triggers if not t.isascii())


@functools.lru_cache(maxsize=16384)
def _attributes(said: Said) -> frozenset[str]:
    return attributes_of(_fold(said.text), spaced=said.lang not in ("zh", "ja"))


def said_keys(text: str) -> frozenset[str]:
    """What an index files what the speaker held in `text` under: each word of its topics (`w:`), each
    attribute of the table (`a:`) and each kind of value (`k:`) it is about."""
    keys: set[str] = set()
    for said in _held(text):
        keys.update(_keys(said))
    return frozenset(keys)


def change_keys(text: str) -> frozenset[str]:
    """The keys (`said_keys`) of what in `text` may give an older fact a newer value: what is said with a
    cue, or of an attribute held one value at a time that it names a value of. Empty: `text` changes
    nothing, so nothing need be looked up."""
    keys: set[str] = set()
    for said in _newer(text):
        attributes = _attributes(said)
        if said.cue is None and not (_values(said) and any(single(a) for a in attributes)):
            continue
        if said.addition and said.cue != "retraction":
            continue
        keys.update(_keys(said))
    return frozenset(keys)


def _keys(said: Said) -> set[str]:
    return (
        {f"w:{w}" for w in said.words}
        | {f"a:{a}" for a in _attributes(said)}
        | {f"k:{k}" for k in said.kinds}
    )


@functools.lru_cache(maxsize=8192)
def states_of_self(text: str, question: str) -> bool:
    """Does `text` state, of the speaker and as so now, something on `question`'s topic: a word of its
    topic in common (a character pair in Chinese and Japanese) or an attribute of the table both are
    about ("what do I do for work?", "I'm a maths teacher")? Someone else's words, a quote, a joke, a
    supposition or a past are no such statement."""
    asked = sayings(question)
    if not asked:
        return False
    words = frozenset().union(*(s.words for s in asked))
    about = _asked_as(frozenset().union(*(_attributes(s) for s in asked)))
    for said in _facts(text):
        spaced = said.lang not in ("zh", "ja")
        if (_shared(words, said.words) if spaced else words & said.words) or about & _asked_as(
            _attributes(said)
        ):
            return True
    return False


# Attributes a question about one is answered by the other of: "where do I work?" by "I'm a nurse at
# St Thomas'", "what's my job?" by "I work at Airbus".
_ASKED_AS: Final = {"employer": "job"}


def _asked_as(attributes: frozenset[str]) -> frozenset[str]:
    return frozenset(_ASKED_AS.get(a, a) for a in attributes)


def _types(values: frozenset[str]) -> frozenset[str]:
    """A value's type: a number; a run of Chinese or Japanese (the character pairs of a topic, which name
    no value in another script); a word."""
    return frozenset(
        "number" if any(c.isdigit() for c in v) else "cjk" if not v.isascii() and _CJK.search(v) else "word"
        for v in values
    )


_CJK: Final = re.compile(f"[{char_class(CJK_VALUE_RANGES)}]")  # Chinese and Japanese (`_script`)
