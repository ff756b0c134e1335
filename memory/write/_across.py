"""Supersession across topic files: a newer value of a fact supersedes the older current blocks stating
that fact in ANY topic file, in the same install (the rule within one file is `_supersede`'s).

The fact is found by its key (`_fact_keys`: a subject and an attribute), the older blocks by the slot
index (`_slot_index`) and by this batch's own earlier blocks. Where no key decides, the person's words
do (`text.update`): the older blocks filed under the words and attributes of a newer fact said with a
change (`text.change_keys`) are read again, and each whose facts the newer words all replace is
superseded, each with only some replaced partly superseded. An older block is superseded when every key
it states is restated by the newer words with a change: for a quantity a different number, for any other
fact a change cue ("moved", "switched", "no longer", "sold the …", "现在", "改…") and not the same value said
again. Never a block the new one restates, one said later than it, one off the batch's path (an
alternative of a fork: `left`, never superseded), or one whose subject differs ("Maya lives in Porto" is
untouched by "I moved to Lisbon").
"""

from __future__ import annotations

import re
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Final

from ..format import Block
from ..text import COMMON_STATEMENTS, Update, change_keys, said_keys, update, user_text
from ._blocks import TopicEdit
from ._fact_keys import NUMERIC_ATTRIBUTES, VALUE_WORDS, KeyFact, keys_of
from ._slot_index import LOOKUP_LIMIT, SlotIndex
from ._supersede import Aside, Reason, cue_of, newest_date, off_path

__all__ = ["Across", "replaces_keys"]

_VALUE_EN: Final = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]+|\d+(?:[.,]\d+)*")
_NEGATION: Final = re.compile(
    r"\b(?:no longer|not|n['’]t|never|left|gave up|sold|traded|quit|no more|instead of|forget)\b|不|离开|卖了|戒了",
    re.I,
)
_CJK_RUN: Final = re.compile(r"[\u3400-\u9fff]+")
_CJK_FILLER: Final = re.compile(r"[了的吗呢吧啊呀我是在住现已经最近上个月]")


def _values(text: str) -> frozenset[str]:
    """The words that carry a statement's value: proper names and numbers (English), the characters
    around the cue words (Chinese)."""
    found = {m.casefold() for m in _VALUE_EN.findall(text) if m not in {"I", "I'm", "I’m", "I've"}}
    found.update(m.casefold() for m in VALUE_WORDS.findall(text))
    for run in _CJK_RUN.findall(text):
        bare = _CJK_FILLER.sub("", run)
        found.update(bare[i : i + 2] for i in range(len(bare) - 1))
    return frozenset(found)


def _restated(old: str, new: str) -> bool:
    """The newer words say the older value again ("I moved to Berlin" after "I moved to Berlin last
    month"): every value word of the older is in the newer, which negates nothing."""
    subjects = {fact.key.partition("/")[0] for fact in keys_of(old)}
    values = {v for v in _values(old) if not any(v in s or s in v for s in subjects)}
    newer = {v for v in _values(new) if not any(v in s or s in v for s in subjects)}
    return bool(values) and values <= newer and _NEGATION.search(new) is None


def _replaced(fact: KeyFact, newer: KeyFact | None) -> bool:
    """Does `newer` (what a newer text says of the key) give the older `fact` a new value?"""
    if newer is None:
        return False
    if fact.key.partition("/")[2] in NUMERIC_ATTRIBUTES:
        return bool(newer.numbers - fact.numbers and fact.numbers - newer.numbers)
    return newer.cue


def replaces_keys(old: str, new: str, *, covered: frozenset[str] = frozenset()) -> Reason | None:
    """Does the user's newer text `new` replace every fact key the older text `old` states (but those in
    `covered`: already given a newer value by another block)?"""
    old_keys = [fact for fact in keys_of(old) if fact.key not in covered]
    if not old_keys:
        return None
    said: dict[str, KeyFact] = {fact.key: fact for fact in keys_of(new)}
    if not all(_replaced(fact, said.get(fact.key)) for fact in old_keys):
        return None
    if _restated(old, new):
        return None
    return "retraction" if cue_of(new) == "retraction" else "update"


def remaining(old: str, new: str) -> list[KeyFact]:
    """The keys of `old` that `new` does not give a newer value."""
    said: dict[str, KeyFact] = {fact.key: fact for fact in keys_of(new)}
    return [fact for fact in keys_of(old) if not _replaced(fact, said.get(fact.key))]


def _may_change(fact: KeyFact) -> bool:
    """Whether what a text says of a key can give it a newer value (`_replaced` needs this of it)."""
    return bool(fact.numbers) if fact.key.partition("/")[2] in NUMERIC_ATTRIBUTES else fact.cue


def _sources(block: Block) -> set[tuple[str, str]]:
    return {(s.session_id, s.anchor) for c in block.citations for s in c.sources}


def _shares_evidence(old: Block, new: Block) -> bool:
    """Both cite one turn (its core fact and its exchange): one statement, not an older and a newer."""
    return bool(_sources(old) & _sources(new))


@dataclass
class Across:
    """One batch's cross-file supersession: `edits` are the batch's topic edits (shared with the
    distiller: a file touched here is written in the same install), `read` the topic files' texts."""

    edits: MutableMapping[str, TopicEdit]
    read: Callable[[str], str | None]
    index: SlotIndex | None
    session_id: str
    on_path: Callable[[str], bool] | None
    aside: Aside | None
    mine: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # key -> this batch's blocks
    added: dict[tuple[str, str], int] = field(default_factory=dict)  # this batch's blocks, in order

    def _edit(self, path: str) -> TopicEdit | None:
        edit = self.edits.get(path)
        if edit is None:
            text = self.read(path)
            if text is None:
                return None
            edit = self.edits[path] = TopicEdit(path, text, "")
        return edit

    def supersede(self, new: Block, path: str, words: str) -> None:
        """Mark the older current blocks, in any file, that `words` (the user's words of `new`, filed in
        `path`) replace; then remember `new` under its keys for the batch's later blocks."""
        keys = keys_of(words)
        edit = self.edits.get(path)
        now = None if edit is None else edit.block(new.id)  # a later block may have superseded it since
        if edit is None or now is None or now.superseded is not None:
            return
        new = now
        if any(b.id == new.id for b in edit.original.blocks):
            return  # a block said before, cited again: it says nothing newer than it did
        date = newest_date(new)
        seen: set[tuple[str, str]] = set()
        self._by_words(new, path, words, date)
        for fact in keys:
            if not _may_change(fact):
                continue  # no cue and no number: it replaces nothing, so nothing is looked up
            candidates = list(self.mine.get(fact.key, []))
            if self.index is not None:
                candidates += self.index.lookup(fact.key)
            for where in candidates:
                if where in seen or where[1] == new.id:
                    continue
                seen.add(where)
                self._consider(where, new, path, words, date)
        for fact in keys:
            self.mine.setdefault(fact.key, []).append((path, new.id))

    def _by_words(self, new: Block, path: str, words: str, date: str) -> None:
        """The rule of the person's words: each older block filed under a word or attribute of a fact
        `words` changes, superseded when `text.update` finds every fact it states replaced, partly superseded
        when it finds some."""
        keys = change_keys(words)
        if keys:
            candidates = self._mine_under(keys)
            if self.index is not None:
                candidates += self.index.lookup_any(keys)
            common = self._common(keys)
            weak: list[tuple[TopicEdit, Block, Update]] = []
            for where in dict.fromkeys(candidates):
                if where[1] == new.id:
                    continue
                older = self._older(where, new, date)
                if older is None:
                    continue
                edit, old = older
                found = update(user_text(old.claim), words, common)
                if found is not None and found.weak:
                    weak.append((edit, old, found))
                elif found is not None:
                    self._mark(edit, old, new, path, found)
            # A change related only by the kind of its value ("no, it's the 25th") is to the newest
            # older statement of that kind.
            if weak:
                edit, old, found = max(weak, key=lambda entry: newest_date(entry[1]))
                self._mark(edit, old, new, path, found)
        self.added[(path, new.id)] = len(self.added)
        for key in said_keys(words):
            self.mine.setdefault(key, []).append((path, new.id))

    def _common(self, keys: frozenset[str]) -> frozenset[str]:
        """The words and attributes of `keys` so common in the workspace (this batch's blocks and the
        index's) that they tell no fact from another: a long chat about one project says "team" and "pitch"
        everywhere, and names a sum in dozens of its statements."""
        wanted = [k for k in keys if k.startswith(("w:", "a:"))]
        counts = self.index.counts(wanted) if self.index is not None else {}
        return frozenset(
            key for key in wanted if counts.get(key, 0) + len(self.mine.get(key, ())) > COMMON_STATEMENTS
        )

    def _mine_under(self, keys: frozenset[str]) -> list[tuple[str, str]]:
        """This batch's blocks filed under any of `keys`: those under the most of them first, then the
        newest, at most `LOOKUP_LIMIT` (a batch of many alike turns costs O(batch), not O(batch²))."""
        count: dict[tuple[str, str], int] = {}
        for key in keys:
            for where in self.mine.get(key, ())[-LOOKUP_LIMIT:]:
                count[where] = count.get(where, 0) + 1
        return sorted(count, key=lambda w: (-count[w], -self.added.get(w, 0)))[:LOOKUP_LIMIT]

    @staticmethod
    def _mark(edit: TopicEdit, old: Block, new: Block, path: str, found: Update) -> None:
        """Superseded when every fact `old` states is replaced; else partly, the rest still standing."""
        if found.whole:
            edit.supersede(old.id, new, path, found.change)
        else:
            edit.partly(old.id, new, path, found.change)

    def _older(self, where: tuple[str, str], new: Block, date: str) -> tuple[TopicEdit, Block] | None:
        """The current block at `where` (a topic path, a block id), with its file's edit, when `new` may
        supersede it: said before it, on its path, and not the same statement."""
        edit = self._edit(where[0])
        old = None if edit is None else edit.block(where[1])
        if (
            edit is None
            or old is None
            or old.superseded is not None
            or old.claim == new.claim
            or _shares_evidence(old, new)
            or newest_date(old) > date
            or off_path(old, self.session_id, self.on_path, self.aside)
            or self._said_later(old, new)
            or self._said_after(old, new)
        ):
            return None
        return edit, old

    def _consider(self, where: tuple[str, str], new: Block, path: str, words: str, date: str) -> None:
        older = self._older(where, new, date)
        if older is None:
            return
        edit, old = older
        old_words = user_text(old.claim)
        left = [fact for fact in remaining(old_words, words) if not self._replaced_elsewhere(old, fact, new)]
        covered = frozenset(fact.key for fact in keys_of(old_words)) - {fact.key for fact in left}
        if left:
            return
        reason = replaces_keys(old_words, words, covered=covered - {f.key for f in keys_of(words)})
        if reason is not None:
            edit.supersede(old.id, new, path, reason)

    def _replaced_elsewhere(self, old: Block, fact: KeyFact, new: Block) -> bool:
        """Another current block, said after `old` and not after `new`, gives `fact` (a key of the
        older block that `new` does not restate) a newer value: "I'm a lawyer and allergic to peanuts"
        is out of date once the job and the allergy have each been updated."""
        candidates = list(self.mine.get(fact.key, []))
        if self.index is not None:
            candidates += self.index.lookup(fact.key)
        for where in dict.fromkeys(candidates):
            edit = self._edit(where[0])
            other = None if edit is None else edit.block(where[1])
            if (
                other is None
                or other.id in {old.id, new.id}
                or other.superseded is not None
                or newest_date(other) < newest_date(old)
                or newest_date(other) > newest_date(new)
                or self._said_after(other, new)
                or self._said_after(old, other)
                or off_path(other, self.session_id, self.on_path, self.aside)
            ):
                continue
            said = {f.key: f for f in keys_of(user_text(other.claim))}
            if _replaced(fact, said.get(fact.key)):
                return True
        return False

    def _said_after(self, old: Block, new: Block) -> bool:
        """`old` was said after `new` (by the turns' own times: a batch of another session, or of a side
        branch, may be written after a newer one)."""
        if self.index is None:
            return False
        old_at, new_at = self.index.said_at(old), self.index.said_at(new)
        return old_at is not None and new_at is not None and old_at > new_at

    def _said_later(self, old: Block, new: Block) -> bool:
        """`old` (on a side branch of this session) was said after `new`: time order, not write order."""
        if self.aside is None:
            return False
        aside = self.aside

        def at(block: Block) -> int | None:
            found = [aside(s) for c in block.citations for s in c.sources if s.session_id == self.session_id]
            return max((p for p in found if p is not None), default=None)

        old_at = at(old)
        new_at = at(new)
        return old_at is not None and new_at is not None and old_at > new_at
