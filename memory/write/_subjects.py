"""What a block is about: the subject its topic file is named after.

A person keeps pages about people, pets, places, projects and things, not about the loudest word of an
exchange. So the subject of a block is, in order of weight:

- a **name**: a capitalised word or run of them ("Oscar", "New York") that is not a sentence's first word
  (or is capitalised mid-sentence elsewhere in the batch), not a speaker's label ("Caroline: ..."), and not
  a word that is only capitalised for emphasis or greeting (the filler list);
- a **noun-phrase head**: the last content word of a run after a determiner or possessive ("my new
  *puppy*", "the *pottery class*" -> class is the head, pottery the modifier: both count);
- any other content word.

Plural heads are filed under their singular ("dogs" and "dog" share a page). A subject that already has a
page (on disk or in this batch) counts double, so a workspace grows pages rather than one file per turn;
every choice is a function of the batch and a few `stat`s of the files it names (O(batch), never a scan
of the workspace). A block that names nothing (or only filler) joins the page of the block before it in the
batch, and otherwise `notes`.

Measured on five LoCoMo conversations: the old rule (the most salient word) made 705 files, 541 of one
block, the largest named `photo`, `it-s`, `awesome`; the filler list below holds the words that rule and
this one picked as subjects there and that name nothing (interjections, evaluations, contractions, generic
verbs and adverbs).
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Final

import Stemmer

from ..format import ArchiveRecord, parse_tool_evidence
from ..text import WORK_GENERIC
from ._exchanges import new_session
from ._slots import READ_CHARS

__all__ = [
    "FILLER_WORDS",
    "SubjectPicker",
    "file_subject",
    "is_filler",
    "label_of",
    "may_name",
    "speaker_labels",
]

# Words that are never a page's subject, lowercase. Interjections, greetings, evaluative adjectives,
# intensifiers, generic verbs, adverbs of time and degree, and the chat-import words ("photo", "shares").
FILLER_WORDS: Final = frozenset(
    """
    yeah yes yep yup nope no nah oh ooh wow whoa hey hi hello bye goodbye thanks thank thankyou cheers ok okay
    hmm haha lol omg ugh aww awww yay woohoo gosh sure totally absolutely definitely exactly indeed
    awesome amazing great good nice cool fantastic wonderful incredible lovely beautiful gorgeous stunning
    adorable cute fun funny glad happy sad sorry excited exciting interesting inspiring inspired impressive
    incredible perfect special tough hard crazy weird super brilliant terrific fabulous sweet neat
    breathtaking heartwarming awestruck priceless peaceful rewarding supportive passionate motivated
    important proud grateful thankful lucky blessed true real
    photo photos picture pictures pic pics image shares share sharing shared
    it-s i-m that-s let-s i-ve you-re can-t what-s how-s they-re couldn-t i-ll wasn-t don-t it-ll
    life-s
    keep love loved loves feel feels felt see seen know knew think thought mean means meant make makes made
    making give gave take taking get getting got find finding found look looks looking seems sounds sound
    enjoy enjoyed help helped appreciate appreciated agree agreed believe believing happened happening
    coming going doing trying try tried started start catch watch reminds remind inspire express pushing
    cherishing seeing stepping recommend bring brings talk talking around blast
    now always never often lately recently currently hopefully really actually probably maybe also still
    together everyone everything someone something anything nothing anyone everybody people person
    new next last first right left best big little positive favorite favourite fave kind sort lot lots bit way ways thing things stuff part day days time
    times today tomorrow yesterday week weekend month year years moment moments
    difference impact experience experiences memories memory
    gonna wanna gotta congrats congratulations
    """.split()
)
# The filler words a turn addresses someone with ("Hey Mel!", "Thanks, Sam."): a name right after one of
# these, ending its clause, is spoken to, not about. Not every filler word: "... maybe Oscar." and "...
# last month Oscar." speak about Oscar.
_ADDRESS: Final = frozenset(
    """
    yeah yes yep yup nope no nah oh ooh wow whoa hey hi hello bye goodbye thanks thank thankyou cheers ok
    okay hmm haha lol omg ugh aww awww yay woohoo gosh congrats congratulations sorry love
    """.split()
)

_STOP: Final = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself
    of off on once only or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself yourselves
    much many must shall may might us let like well even back one two three via per""".split()
)
# Words after which a noun phrase starts.
_DETERMINERS: Final = frozenset(
    "a an the my our your his her their its this that these those some any every each another no".split()
)
_TOKEN = re.compile(r"[^\W\d_](?:[\w’'-]*[^\W_])?|[.!?;:]+|[,()\"“”]")
_LABEL = re.compile(r"\s*([A-Z][\w’'-]*(?: [A-Z][\w’'-]*)?):\s")
_SENTENCE_END = frozenset(".!?;:")
_MAX_NAME_WORDS = 3
_MAX_PHRASE_WORDS = 3
# Weights of one mention: a file an edit changed outweighs a file read or named, which outweighs a name,
# then a noun head, then a plain content word.
_FILE_EDIT, _FILE, _NAME, _HEAD, _WORD = 5.0, 4.0, 3.0, 2.0, 1.0
# A file named in a turn: a path or a name with an extension code is written in.
_PATH: Final = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]+\.(?:py|pyi|ex|exs|heex|eex|erl|ts|tsx|js|jsx|mjs|cjs|vue|svelte|rs|go|rb|"
    r"java|kt|swift|c|h|cc|cpp|hpp|cs|php|scala|clj|hs|ml|lua|sh|sql|css|scss|html|toml|yaml|yml|json|md|"
    r"ini|cfg|lock|proto|graphql|tf|nix|zig|dart|r|jl)(?![\w/])"
)
_SPAN: Final = re.compile(r"\s*\((?:offset|limit) [^)]*\)\s*$")
# File names too common to name a page alone: their folder says which one ("report/mod.rs").
_GENERIC_FILES: Final = frozenset(
    """index init __init__ mod main lib app utils util helpers helper types type config settings test tests
    setup conftest common core base models model views view routes router components component styles
    style package readme changelog makefile""".split()
)


def file_subject(path: str) -> str:
    """The subject a file gives: its name, with its folder when the name alone is a common one (a read's
    span, "(offset 40, limit 20)", is no part of its name)."""
    path = _SPAN.sub("", path)
    parts = [p for p in path.strip().replace("\\", "/").split("/") if p and p != "."]
    if not parts:
        return path.strip()
    name = parts[-1]
    stem = name.split(".", 1)[0].casefold()
    if stem in _GENERIC_FILES and len(parts) > 1:
        return f"{parts[-2]}/{name}"
    return name


_USER = 2.0  # the person's own words say what the exchange is about more than a reply does
_PAGE = 6.0  # a subject that already has a page (measured: 2 left the median page at 2 blocks)


def is_filler(word: str) -> bool:
    return word.casefold().replace("’", "-").replace("'", "-") in FILLER_WORDS


@functools.lru_cache(maxsize=1 << 16)
def may_name(word: str) -> bool:
    """Could this word name a subject at all (a function word, a filler word or a contraction cannot)?"""
    lower = word.casefold()
    return (
        len(lower) >= 3
        and lower not in _STOP
        and not is_filler(lower)
        and lower not in WORK_GENERIC  # "test", "function", "changes": too general to name a page
        and "'" not in lower
        and "’" not in lower
    )


@functools.lru_cache(maxsize=1 << 16)
def _content(token: str) -> bool:
    """A lower-case word that could be a subject (adverbs in -ly pass over)."""
    return token[:1].isalpha() and token[:1].islower() and may_name(token) and not token.endswith("ly")


_local = threading.local()  # a Snowball stemmer is not safe to share between threads; one each, made once


def _stemmer() -> Any:
    stemmer: Any = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer


def label_of(text: str) -> tuple[str, str] | None:
    """(the speaker's label a turn opens with, the rest of it): "Caroline: hi" -> ("Caroline", "hi")."""
    found = _LABEL.match(text)
    return None if found is None else (found[1], text[found.end() :])


def speaker_labels(records: Sequence[ArchiveRecord]) -> frozenset[str]:
    """Names that open turns as a speaker's label ("Caroline: ..."): the speakers, not their subjects. Only
    turns have speakers: a tool's record opens with the tool's name ("Bash: mix test")."""
    return frozenset(
        found[0] for r in records if r.role in _SPOKEN and (found := label_of(r.content)) is not None
    )


_SPOKEN: Final = ("user", "assistant")


class SubjectPicker:
    """Picks the subject of each block of one batch. `has_page(slug)` tells whether a page of that subject
    exists on disk; `slug` makes a file name of a subject."""

    def __init__(
        self,
        blocks: Sequence[Sequence[ArchiveRecord]],
        has_page: Callable[[str], bool],
        slug: Callable[[str], str],
        reserved: frozenset[str],
    ) -> None:
        self._has_page = has_page
        self._slug = slug
        self._reserved = reserved
        self._blocks = blocks
        self._opened: set[str] = set()  # pages this batch opens
        records = [r for exchange in blocks for r in exchange]
        self._labels = speaker_labels(records)
        self._stemmer = _stemmer()
        # Words capitalised mid-sentence somewhere in the batch: names even where they open a sentence.
        # A name is a word the batch writes capitalised mid-sentence more often than in lower case ("Max"
        # the dog, not "Now" in a song's title beside a dozen "now"s).
        capitals: Counter[str] = Counter()
        lower: Counter[str] = Counter()
        self._words: set[str] = set()
        for record in records:
            tokens = self._tokens(record.content)
            self._words.update(t.casefold() for t in tokens)
            for i, token in enumerate(tokens):
                if token[:1].islower():
                    lower[token] += 1
                elif i and tokens[i - 1] not in _SENTENCE_END and self._capitalised(token):
                    capitals[token] += 1
        self._names = {word for word, n in capitals.items() if n > lower[word.casefold()]}
        # How many turns of the batch mention each subject: a subject the batch keeps coming back to is
        # a page; one said once is a passing word (the document-frequency half of keyphrase scoring).
        self._spread: Counter[str] = Counter()
        self._said = [self._mentions_of(record) for record in records]  # each record's, in order
        for mentions in self._said:
            self._spread.update({subject for subject, _ in mentions})

    def subjects(self) -> list[str]:
        """Each block's subject, in order, as its page's title word(s) ("Oscar", "pottery", "New York").

        A block whose words open no page (each said once in the batch, and none with a page) follows the
        conversation's thread: the subject of the block before it in the same session, else of the next
        one that has a subject, else its own best word, else `notes`."""
        chosen: list[str | None] = []
        lone: list[str | None] = []
        at = 0
        for exchange in self._blocks:
            best, fallback = self._best(exchange, self._said[at : at + len(exchange)])
            at += len(exchange)
            if best is not None:
                self._opened.add(self._slug(best))
            chosen.append(best)
            lone.append(fallback)
        out: list[str] = []
        for n, exchange in enumerate(self._blocks):
            found = chosen[n]
            if found is None and n and out and not new_session(self._blocks[n - 1][-1], exchange[0]):
                found = out[-1]
            m = n
            while found is None and m + 1 < len(self._blocks):
                if new_session(self._blocks[m][-1], self._blocks[m + 1][0]):
                    break
                m += 1
                found = chosen[m]
            out.append(found or lone[n] or "notes")
        return out

    def _best(
        self, exchange: Sequence[ArchiveRecord], said: Sequence[list[tuple[str, float]]]
    ) -> tuple[str | None, str | None]:
        """(the best subject that has or earns a page, the best subject said only once)."""
        scores: dict[str, float] = {}
        first_seen: dict[str, int] = {}
        kinds: dict[str, float] = {}
        for record, mentions in zip(exchange, said, strict=True):
            weight = _USER if record.role == "user" else 1.0
            for subject, kind in mentions:
                scores[subject] = scores.get(subject, 0.0) + weight * kind
                first_seen.setdefault(subject, len(first_seen))
                kinds[subject] = kinds.get(subject, 0.0) + kind
        best: str | None = None
        lone: str | None = None
        best_key: tuple[float, int] | None = None
        lone_key: tuple[float, int] | None = None
        for subject, score in scores.items():
            slug = self._slug(subject)
            if slug in self._reserved:
                continue
            page = self._page(slug)
            if not page and kinds[subject] < _HEAD:
                continue  # a word the block says once, and not as a noun, may join a page, never open one
            value = score * math.log2(1 + self._spread[subject]) * (_PAGE if page else 1.0)
            key = (-value, first_seen[subject])  # ties: the subject said first
            if page or self._spread[subject] > 1 or kinds[subject] >= _FILE:  # a file is a page at once
                if best_key is None or key < best_key:
                    best, best_key = subject, key
            elif lone_key is None or key < lone_key:
                lone, lone_key = subject, key
        return best, lone

    def _page(self, slug: str) -> bool:
        return slug in self._opened or self._has_page(slug)

    def _tokens(self, text: str) -> list[str]:
        found = label_of(text)
        return _TOKEN.findall(found[1] if found is not None else text)

    @staticmethod
    def _capitalised(token: str) -> bool:
        return token[:1].isupper() and token[1:2].islower()

    def _mentions_of(self, record: ArchiveRecord) -> list[tuple[str, float]]:
        """(subject, weight) for each mention in one record. A tool call's evidence mentions the file it
        read or changed and nothing else (a tool's output is no one's words); a turn mentions the files
        it names as well as its words."""
        if record.role == "tool":
            found = parse_tool_evidence(record.content)
            if found is None or found.kind not in ("edit", "read") or not found.input:
                return []
            return [(file_subject(found.input), _FILE_EDIT if found.kind == "edit" else _FILE)]
        files = [(file_subject(m.group()), _FILE) for m in _PATH.finditer(record.content[:READ_CHARS])]
        return files + self._mentions(record.content)

    def _mentions(self, text: str) -> list[tuple[str, float]]:
        """(subject, weight) for each mention in one turn."""
        tokens = self._tokens(text)
        out: list[tuple[str, float]] = []
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token in self._names:
                run = [token]
                while (
                    len(run) < _MAX_NAME_WORDS
                    and i + len(run) < len(tokens)
                    and tokens[i + len(run)] in self._names
                    and tokens[i + len(run)] != run[-1]  # "Belém Belém": two mentions, not one name
                ):
                    run.append(tokens[i + len(run)])
                name = " ".join(run)
                before = tokens[i - 1].casefold() if i else ""
                i += len(run)
                after = tokens[i] if i < len(tokens) else "."
                # "Hey Mel!", "Thanks, Sam.": a name the turn speaks to, not one it speaks about.
                vocative = (before == "," or before in _ADDRESS) and after in {",", "!", "?", "."}
                if name not in self._labels and not vocative and all(may_name(w) for w in run):
                    out.append((name, _NAME))
                continue
            lower = token.casefold()
            if lower in _DETERMINERS:
                phrase, j = self._phrase(tokens, i + 1)
                out.extend((self._singular(w), _WORD) for w in phrase[:-1])
                if phrase:
                    out.append((self._singular(phrase[-1]), _HEAD))
                i = j
                continue
            if _content(lower):  # "Risotto" opening a sentence is the word "risotto"
                out.append((self._singular(lower), _WORD))
            i += 1
        return out

    def _phrase(self, tokens: Sequence[str], start: int) -> tuple[list[str], int]:
        """The content words of the noun phrase starting at `start` (after a determiner), and where it
        ends. Filler adjectives inside it are passed over ("my new puppy"); it ends at a function word or
        punctuation, at a participle after its noun ("a girl sitting", "a shelf filled"), and at a verb's
        -s after a singular noun ("the kettle needs": "needs" is no noun of the phrase)."""
        phrase: list[str] = []
        j = start
        while j < len(tokens) and len(phrase) < _MAX_PHRASE_WORDS:
            token = tokens[j]
            if not phrase and token[:1].islower() and is_filler(token):
                j += 1
                continue
            if not _content(token):
                break
            if phrase and (
                token.endswith(("ing", "ed"))
                or (token.endswith("s") and not token.endswith("ss") and not phrase[-1].endswith("s"))
            ):
                break
            phrase.append(token.casefold())
            j += 1
        return phrase, j

    def _singular(self, word: str) -> str:
        """ "dogs" -> "dog" when the batch says "dog" too or "dog" has a page (both stemming alike): a plural
        is filed with its singular, never with a made-up one ("series" is no plural of "sery")."""
        if not word.endswith("s") or len(word) <= 3:
            return word
        stem = self._stemmer.stemWord(word)
        for candidate in (word[:-1], word[:-2], word[:-3] + "y"):
            if (
                candidate
                and self._stemmer.stemWord(candidate) == stem
                and not is_filler(candidate)
                and (candidate in self._words or self._page(self._slug(candidate)))
            ):
                return candidate
        return word
