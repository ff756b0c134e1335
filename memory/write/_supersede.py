"""Deciding supersessions: when a newer user statement states a newer value of an older block's fact.

The one rule every writer of supersessions calls (the extractive distiller at each write, `reorganise`
between existing blocks, and the `openai` distiller to check the model's choice against the branch rule):

- **A cue**, in the newer statement's own sentence: an update ("now", "no longer", "not … any more", "moved
  to", "changed to", "switched", "instead", "现在", "不再", "搬到", "改成", …) or a retraction ("actually",
  "correction", "scratch that", "I was wrong", "其实", "更正", "说错了", …). A new number for the same
  quantity of a slot (an age, a number of children) is a cue of its own. A cue inside a question, a hypothetical ("if I moved
  to Berlin", "I might switch"), a plan ("I'm going to move") or negated ("I haven't moved") is none.
- **The same subject.** Either the same first-person slot (`_slots`: where the user lives, works, their
  name, diet, age, partner, pets, likes), with a different value for a single-valued slot or the same
  value negated ("I no longer live in Paris"); or, within one topic file, high lexical overlap of the two
  statements (content words, CJK character pairs) with a changed value. "I now also like X" adds, never
  replaces; a statement about someone else ("my friend moved to Berlin") states no slot of the user.
- **Whole blocks only.** An old block is superseded only when every slot fact it states is replaced: a
  block saying "I live in Paris and I work as a nurse" is not hidden by a move to Berlin (the nurse would
  go with it). The extractive distiller files such sentences as one core block per clause, so the move
  supersedes "I live in Paris" alone.

Dense similarity (the recall index's WordLlama vectors) is not used: the write core never imports recall,
and a static embedding ranks "I live in Paris" and "I live in Berlin" as near-identical, which is exactly
the pair a subject match must tell apart by its slot and value, not by closeness. Lexical and slot rules
are deterministic, offline, and measured (tests/memory/write/data/supersession_pairs.jsonl).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from ..format import Block, SourceRef
from ..text import sayings, user_text
from ._fact_keys import keys_of
from ._slots import MULTI_VALUED, NUMERIC, Fact, clauses, facts_of, sentences, strip_lead

if TYPE_CHECKING:
    from ._blocks import TopicEdit

__all__ = [
    "Aside",
    "Reason",
    "Statement",
    "choose",
    "cue_of",
    "cue_only",
    "newest_date",
    "off_path",
    "statement",
    "supersede_older",
    "supersession",
    "usable",
]

Reason = Literal["update", "retraction"]

Aside = Callable[[SourceRef], int | None]
"""For a source of the batch's session: where it was said (its position in the session's order) when it
lies on the batch's path or on a side branch of it, None when it may lie on an alternative of the path."""

_RETRACTION: Final = re.compile(
    r"\b(?:actually|correction|correct(?:ed|ing)? (?:myself|that)|scratch that|i was wrong|i misspoke|"
    r"i meant|my mistake|my bad|not true|that['’]?s wrong|that was wrong|i lied|i got that wrong|"
    r"to be precise|sorry|oops|wait)\b|其实|实际上|更正|纠正|说错|我错了|搞错|口误|不对",
    re.I,
)
_UPDATE: Final = re.compile(
    r"\b(?:now|no longer|any ?more|no more|moved|relocated|changed|switched|instead|these days|nowadays|"
    r"from now on|update|updated|recently|as of|became|turned|got (?:married|divorced|engaged)|"
    r"started|stopped|quit|gave up|left|new (?:job|address|place|home)|not (?:a|an) \w+ (?:any ?more)|"
    r"went (?:up|down)|increased|decreased|rose|dropped|raised|lowered|postponed|delayed|pushed back|"
    r"rescheduled|cancell?ed|extended)\b|"
    r"现在|不再|搬到|搬去|搬回|改成|改为|改了|换成|换到|换了|如今|目前|已经|最近|开始|转行|戒了|更新|了[。！!.]?$",
    re.I,
)
_NEGATED_CUE: Final = re.compile(
    r"(?:n['’]t|\bnot|\bnever|\bno)\s+(?:\w+\s+)?(?:moved?|moving|switch(?:ed|ing)?|chang(?:ed?|ing)|"
    r"relocat(?:ed?|ing)|actually|quit(?:ting)?|stop(?:ped|ping)?|left|leav(?:e|ing)|start(?:ed|ing)?|"
    r"bec(?:o|a)me|turn(?:ed)?|update[ds]?)\b|没有?(?:搬|改|换)|不(?:搬|换)|并没",
    re.I,
)
_ADDITION: Final = re.compile(r"\b(?:also|too|as well|another|additionally|in addition)\b|还|也|又", re.I)
_STOP: Final = frozenset(
    """a about after all also am an and any anymore are as at be been but by can did do does for from get
    got had has have i i'm im in is it its just like me more my no not now of on or our so than that the
    their them then there they this to too very was we were what when which who will with you your yes
    yeah actually sorry update correction scratch wrong instead moved changed switched longer recently
    really still currently these days nowadays thanks thank hey hello wow great cool nice glad haha lol
    awesome okay sounds""".split()
)
_WORD: Final = re.compile(r"[^\W\d_][\w'’-]*[^\W_]|[^\W\d_]{2,}")
_NUMBER: Final = re.compile(r"\d+(?:[.:,]\d+)*")
_CJK_RUN: Final = re.compile(r"[\u3400-\u9fff]+")
_PARTICLES: Final = re.compile(r"[了的吗呢吧啊呀]")
_CUE_CJK: Final = re.compile(r"现在|不再|搬到|改成|换成|其实|更正|已经|最近|开始|目前|如今|实际上|纠正")
_VERB: Final = re.compile(
    r"\b(?:is|are|was|were|will be|has been|have been|costs?|starts?|begins?|ends?|leaves?|moved|changed|"
    r"got moved|got changed|now)\b|定在|改成|改到|改为|换成|换到|是|在|要|从",
    re.I,
)

_MEAT: Final = frozenset(
    {"meat", "fish", "chicken", "pork", "beef", "lamb", "seafood", "肉", "鱼", "鸡肉", "猪肉", "牛肉", "海鲜"}
)
_NOT_FOR: Final = {  # what a diet rules out: eating it (newly said, with a cue) ends the diet
    "vegetarian": _MEAT,
    "vegan": _MEAT | {"eggs", "dairy", "cheese", "鸡蛋", "奶酪"},
    "pescatarian": _MEAT - {"fish", "seafood", "鱼", "海鲜"},
}
JACCARD: Final = 0.5  # lexical same-subject threshold within one topic (content words)
CJK_JACCARD: Final = 0.35  # the same for character pairs of Chinese text


@dataclass(frozen=True)
class Statement:
    """What a user's text states: its slot facts, and (for the newer side) the cue each sentence carries."""

    facts: tuple[tuple[Fact, Reason | None, bool], ...]  # (fact, its sentence's cue, an addition?)
    cue: Reason | None  # the strongest cue of a usable sentence (retraction over update)
    blocked: bool  # every sentence is a question, hypothetical or reported: states nothing
    words: frozenset[str]
    numbers: frozenset[str]
    subject: frozenset[str] = frozenset()  # the content words before the verb ("the wedding venue is ...")
    keys: frozenset[str] = frozenset()  # the fact keys it states (`_fact_keys`: "anna/rent", "user/job")


def cue_of(sentence: str) -> Reason | None:
    """The cue a sentence carries: "retraction" (a correction of what was said), "update" (a change since),
    or None; a negated cue ("I haven't moved") is none."""
    if _NEGATED_CUE.search(sentence) and not re.search(r"\bno longer\b|不再", sentence, re.I):
        return None
    if _RETRACTION.search(sentence):
        return "retraction"
    if _UPDATE.search(sentence):
        return "update"
    return None


def usable(sentence: str) -> bool:
    """Does the sentence state something as so (not a question, a supposition, a plan, someone's reported
    words or a joke), as the text layer reads it in any of its languages?"""
    said = [s for s in sayings(sentence) if not s.clause]
    return bool(said) and all(s.kind in ("fact", "past") for s in said)


def cue_only(sentence: str) -> bool:
    """A sentence that is a cue and nothing more ("Scratch that.", "更正一下。"): it lends its cue to the next."""
    return cue_of(sentence) is not None and not strip_lead(sentence).strip(" .!?,:;。！？，：；")


def _content(text: str) -> tuple[frozenset[str], frozenset[str]]:
    words = {w for w in map(str.casefold, _WORD.findall(text)) if len(w) >= 3 and w not in _STOP}
    words = {w[:-1] if w.endswith("s") and len(w) > 4 else w for w in words}
    for run in _CJK_RUN.findall(_PARTICLES.sub("", _CUE_CJK.sub(" ", text))):
        words.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(words), frozenset(_NUMBER.findall(text))


@functools.lru_cache(maxsize=4096)
def statement(text: str) -> Statement:
    """Read a user's text (a turn, or the user's part of a claim). Cached: `reorganise` asks once per pair
    of a file's blocks, and the same claims come back for each."""
    facts: list[tuple[Fact, Reason | None, bool]] = []
    best: Reason | None = None
    carried: Reason | None = None  # a sentence that is only a cue ("Correction.") lends it to the next
    usable_words: list[str] = []
    subject: frozenset[str] = frozenset()
    any_usable = False
    for sentence in sentences(text):
        if not usable(sentence):
            carried = None
            continue
        any_usable = True
        usable_words.append(sentence)
        if not subject:
            bare = strip_lead(sentence)
            verb = _VERB.search(bare)
            subject = (
                _content(bare[: verb.start()])[0] if verb is not None and verb.start() > 0 else frozenset()
            )
        cue = cue_of(sentence) or carried
        found = [
            (fact, cue, bool(_ADDITION.search(part))) for part in clauses(sentence) for fact in facts_of(part)
        ]
        facts += found
        carried = cue if not found and cue_only(sentence) else None
        if cue == "retraction" or (cue == "update" and best is None):
            best = cue
    words, numbers = _content(" ".join(usable_words))
    keys = frozenset(fact.key for fact in keys_of(text))
    return Statement(tuple(facts), best, not any_usable, words, numbers, subject, keys)


def _same_value(a: str, b: str) -> bool:
    if a == b:
        return True
    wa, wb = set(a.split()), set(b.split())
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def _replaces(new: Fact, cue: Reason | None, addition: bool, old: Fact) -> Reason | None:
    """Does the newer fact replace the older one (same slot), and why?"""
    if old.negated:
        return None
    if (new.slot, old.slot) == ("eats", "diet"):  # "I eat fish again" after "I am vegetarian"
        conflicting = cue is not None and not new.negated and new.value in _NOT_FOR.get(old.value, ())
        return cue if conflicting else None
    if new.slot != old.slot:
        return None
    if new.negated:  # "I no longer live in Paris": retracts that value, whatever the slot's arity
        return cue if cue is not None and _same_value(new.value, old.value) else None
    if addition or new.slot in MULTI_VALUED or _same_value(new.value, old.value):
        return None
    # "aisle seats" -> "window seats": a preference between things of one kind (the last word) is replaced
    if new.slot == "prefers" and new.value.split()[-1:] != old.value.split()[-1:]:
        return None
    if cue is None:
        return "update" if new.slot in NUMERIC else None
    return cue


def supersession(old: str, new: str, *, same_topic: bool = False) -> Reason | None:
    """Does the user's newer text `new` supersede the older block saying `old` (the user's words of each)?
    `same_topic`: both are filed in one topic file, so a lexical match may stand for a slot match."""
    return _decide(statement(old), statement(new), same_topic)


def _decide(old: Statement, new: Statement, same_topic: bool) -> Reason | None:
    if new.blocked or old.blocked:
        return None
    old_facts = [fact for fact, _, _ in old.facts if not fact.negated]
    if old_facts:
        reasons: list[Reason] = []
        for fact in old_facts:  # every fact of the old block must be replaced, or it stays current
            reason = next(
                (r for nf, cue, add in new.facts if (r := _replaces(nf, cue, add, fact)) is not None), None
            )
            if reason is None:
                return None
            reasons.append(reason)
        return "retraction" if "retraction" in reasons else "update"
    if not same_topic or new.facts or not old.words:
        return None
    if old.keys and new.keys and not old.keys & new.keys:
        return None  # "Anna's rent is 2270 euros now" and "Omar's rent is 1670 euros now": two facts
    return _lexical(old, new)


def _lexical(old: Statement, new: Statement) -> Reason | None:
    """Within one topic: the same statement with a changed value, said with a cue."""
    cjk = any(_CJK_RUN.fullmatch(w) for w in old.words | new.words)
    shared = old.words & new.words
    union = old.words | new.words
    replaced_number = bool(old.numbers - new.numbers and new.numbers - old.numbers)
    # two shared words are enough when a number in them was replaced ("my passport expires in 2027")
    enough = 3 if not replaced_number else 2
    close = len(shared) >= enough and len(shared) / len(union) >= (CJK_JACCARD if cjk else JACCARD)
    # "The wedding venue is the Grand Hotel" -> "... is now the Lakeside Inn": one subject, a new value.
    same_subject = len(old.subject) >= 2 and old.subject == new.subject
    if not (close or (same_subject and new.cue is not None)):
        return None
    if new.cue is None:
        # Within a topic a number alone is no cue: "note 3" and "note 9", "room 204" and "room 210" are
        # as often two things as one thing changed (a slot's number, an age, is: `_replaces`).
        return None
    if old.words == new.words and old.numbers == new.numbers:
        return None  # said again, nothing changed
    return new.cue


def off_path(
    block: Block, session_id: str, on_path: Callable[[str], bool] | None, aside: Aside | None = None
) -> bool:
    """True when some evidence of `block` in `session_id` lies off the batch's path (so the two may be
    alternatives of one fork, which are `left`, never superseded): the same path rule as `replaces`.
    With `aside`, evidence on a side branch of the path (a sub-agent's, a child of another role) is no
    alternative and does not count as off it."""
    mine = [s for c in block.citations for s in c.sources if s.session_id == session_id]
    if not mine:
        return False
    if on_path is None:
        return True
    return not all(on_path(s.anchor) or (aside is not None and aside(s) is not None) for s in mine)


def _aside_at(
    block: Block, session_id: str, on_path: Callable[[str], bool] | None, aside: Aside | None
) -> int | None:
    """When `block`'s newest evidence on a side branch of the batch's path was said (None: it has none
    there). Asked only of blocks `off_path` kept, so each such source is aside."""
    if on_path is None or aside is None:
        return None
    found = [
        aside(s)
        for c in block.citations
        for s in c.sources
        if s.session_id == session_id and not on_path(s.anchor)
    ]
    return max((p for p in found if p is not None), default=None)


def choose(
    new: str,
    candidates: Iterable[tuple[Block, bool]],
    *,
    context: str | None = None,
) -> tuple[Block, Reason] | None:
    """The newest candidate (older current blocks, oldest first, each with whether it shares the new
    block's topic file) that the user's newer words `new` supersede, with the reason. `context`: the
    words `new` was said in, when `new` is one clause of them (the cue is the sentence's, the facts the
    clause's: in "Actually I live in Rome and I work as a nurse" only the first clause moves the user)."""
    said = statement(new)
    if context is not None:
        around = statement(context)
        said = Statement(
            tuple((fact, around.cue, add) for fact, _, add in said.facts),
            around.cue,
            around.blocked,
            said.words,
            said.numbers,
            said.subject,
            said.keys,
        )
    if said.blocked or (said.cue is None and not said.numbers and not said.facts):
        return None
    found: tuple[Block, Reason] | None = None
    for block, same_topic in candidates:
        reason = _decide(statement(user_text(block.claim)), said, same_topic)
        if reason is not None:
            found = (block, reason)
    return found


def newest_date(block: Block) -> str:
    return max(c.date for c in block.citations)


def supersede_older(
    edit: TopicEdit,
    new: Block,
    words: str,
    *,
    context: str | None = None,
    same_topic: bool,
    session_id: str,
    on_path: Callable[[str], bool] | None,
    aside: Aside | None = None,
) -> Block | None:
    """Within one topic file being edited: mark every older current block that the user's newer `words`
    (the user's turns of `new`'s evidence) supersede (the value said on each alternative of a fork
    before, too), and return the newest of them, if any. O(the file's blocks): the file is one the write
    touches anyway (the core master, or the new block's own topic).

    Never a block `new` restates (a claim said again only gains a citation), never one whose evidence in
    this session lies off the batch's path (it may be an alternative of one fork: those are `left`),
    unless `aside` places it on a side branch of the path. Time order, not write order, decides: a
    side branch's block said after `new` (a boundary writes the head branch first, then the other tips)
    is not superseded by it; it supersedes `new` instead when its words are the newer value."""
    if new.superseded is not None or any(b.id == new.id for b in edit.original.blocks):
        return None
    date = newest_date(new)
    new_at: int | None = None
    older: list[tuple[Block, bool]] = []
    later: list[Block] = []
    for block in edit.blocks:
        if (
            block.id == new.id
            or block.superseded is not None
            or newest_date(block) > date
            or off_path(block, session_id, on_path, aside)
        ):
            continue
        at = _aside_at(block, session_id, on_path, aside)
        if at is not None and aside is not None and new_at is None:  # when `new` was said: once, if asked
            mine = [aside(s) for c in new.citations for s in c.sources if s.session_id == session_id]
            new_at = max((p for p in mine if p is not None), default=-1)
        if at is not None and new_at is not None and at > new_at:
            later.append(block)
        else:
            older.append((block, same_topic))
    found: Block | None = None
    for candidate in older:
        picked = choose(words, [candidate], context=context)
        if picked is not None:
            old, reason = picked
            found = edit.supersede(old.id, new, edit.path, reason)
    for block in reversed(later):  # the newest value said after `new` replaces it
        picked = choose(user_text(block.claim), [(new, same_topic)])
        if picked is not None:
            edit.supersede(new.id, block, edit.path, picked[1])
            break
    return found
