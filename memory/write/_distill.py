"""Distillers turn a batch of records into topic edits. The default is deterministic and offline.

A distiller reads only the topic files it touches (through the `TopicReader` it is given) and returns
whole new texts for them; the transaction validates and installs them. The same batch distilled twice
gives the same bytes (ids are derived from content).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final, Protocol

from ..currency import SessionShape, ShapeSource, are_alternatives
from ..format import BRIEF_SLUG, TOPIC_INDEX_SLUG, ArchiveRecord, Block, SourceRef, anchor_of, inert
from ._across import Across
from ._blocks import TopicEdit
from ._brief import BRIEF_TITLE, BriefEntry, brief_entries
from ._brief_keys import brief_subject
from ._core_facts import CORE_PATH, CORE_TITLE, read_core_facts
from ._exchanges import exchanges
from ._fact_keys import keys_of
from ._slot_index import SlotIndex
from ._speakers import speaker_pages
from ._subjects import SubjectPicker
from ._supersede import Aside, newest_date, off_path, supersede_older

__all__ = [
    "RESERVED_TOPIC_SLUGS",
    "BatchInput",
    "Distiller",
    "Edits",
    "ExtractiveDistiller",
    "PlainDistiller",
    "TopicReader",
    "excerpt",
    "exchange_claim",
]

Edits = Mapping[str, str | None]  # "topics/<slug>.md" -> the file's new text, or None to delete it


@dataclass(frozen=True)
class BatchInput:
    """The records to distil, oldest first. Every one of them must be cited by some block.

    `lineage`, when the writer knows the session, gives the archive anchors (`src-<hex>`) of the batch's
    path: its records and all their ancestors (computed on first call; O(depth)). A distiller that
    rewrites a block asks it (only a block whose evidence is on this path, or in other sessions).

    `shapes`, when the writer has them, gives each session's DAG shape (this session's from the DAG its
    actor holds, the batch's records included): what `currency.between_alternatives` needs to refuse a
    supersession between two alternatives of one fork."""

    session_id: str
    records: tuple[ArchiveRecord, ...]
    lineage: Callable[[], frozenset[str]] | None = field(default=None, compare=False)
    shapes: ShapeSource | None = field(default=None, compare=False)
    slots: SlotIndex | None = field(default=None, compare=False)


class TopicReader(Protocol):
    def read(self, relpath: str) -> str | None:
        """The current text of a topic file (e.g. "topics/lisbon.md"), None if it does not exist."""
        ...

    def size(self, relpath: str) -> int | None:
        """The size in bytes of a topic file without reading it, None if it does not exist."""
        ...


class Distiller(Protocol):
    name: str

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits: ...


# A compact English stopword list: function words carry no topic.
_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren as at be because been before being
    below between both but by can cannot could couldn did didn do does doesn doing don down during each few
    for from further get got had hadn has hasn have haven having he her here hers herself him himself his how
    i if in into is isn it its itself just know let like ll me more most much must my myself no nor not now of
    off oh ok okay on once only or other ought our ours ourselves out over own really re same say said she
    should shouldn so some such sure than thank thanks that the their theirs them themselves then there these
    they this those through to too under until up us very was wasn way we well were weren what when where
    which while who whom why will with won would wouldn yeah yes yet you your yours yourself yourselves
    going go great good think thing things one lot want make really something anything time way actually
    maybe please could would also still even back""".split()
)
_WORD = re.compile(r"[^\W\d_][\w'’-]*[^\W_]|[^\W\d_]{2,}")
_SLUG_CHARS = re.compile(r"[^a-z0-9]+")
_EXCERPT = 400
# A topic file stops growing at this size and its word continues in `<slug>--2.md`, `--3`, ...: a write
# rewrites and re-parses the files it touches, so their size bounds the cost of a write.
TOPIC_FILE_LIMIT = 16 * 1024
# Topic names a salient word never takes: `topics/core.md` is the master of the always-injected core block
# (DESIGN §2), so a turn that says "core" loudest must not land there; only a distiller's explicit core path
# writes it. ("core" also covers its parts, `core--2.md`, ...: they are named after the same slug.)
# "held" and "rejected" are the hold queue's (`_held`): only the hold rule and the person's decision write them.
# "index" is the topic index's (`topics/index.md`, derived by every install): never a topic.
# "brief" is the project's brief (`_brief`): only its rules write it.
RESERVED_TOPIC_SLUGS: Final = frozenset({"core", "held", "rejected", BRIEF_SLUG, TOPIC_INDEX_SLUG})


def _keywords(text: str) -> list[str]:
    return [w for w in map(str.casefold, _WORD.findall(text)) if len(w) >= 3 and w not in _STOPWORDS]


def _slug(word: str) -> str:
    # "Belém" -> "belem": strip accents so the file name stays readable ASCII.
    ascii_word = unicodedata.normalize("NFKD", word.casefold()).encode("ascii", "ignore").decode()
    slug = _SLUG_CHARS.sub("-", ascii_word).strip("-")[:48]
    if not slug:  # a word with no ASCII letters: name the file by a stable hash of it
        slug = "t-" + hashlib.sha256(word.encode()).hexdigest()[:10]
    return slug


def topic_slug(word: str) -> str:
    """The file name a subject's topic takes (`topics/<slug>.md`): how forget finds a topic named after a
    forgotten text."""
    return _slug(word)


def _excerpt(text: str) -> str:
    folded = " ".join(text.split())
    if len(folded) <= _EXCERPT:
        return folded
    cut = folded.rfind(" ", 0, _EXCERPT)
    return folded[: cut if cut > _EXCERPT // 2 else _EXCERPT] + " …"


def exchange_claim(records: Sequence[ArchiveRecord]) -> str:
    """The extractive claim of an exchange: the quoted gist of each turn, in order (also how `dagmem
    forget` re-distils a block from the evidence it keeps)."""
    return " ".join(_quote(r, r.content) for r in records)


def speaker_of(record: ArchiveRecord) -> str:
    """Who said a record, as a claim names them: its role, except in a user turn what the person did not
    type: a prompt the agent wrote to a sub-agent (`assistant` origin) is the agent's, and text pasted or
    fetched into the turn (`tool` origin) the tool's, never the person's."""
    if record.role == "user" and record.effective_origin == "assistant":
        return "Agent"
    if record.role == "user" and record.effective_origin == "tool":
        return "Tool"
    return record.role.capitalize()


def _quote(record: ArchiveRecord, text: str) -> str:
    """One turn's words as a claim quotes them: `User: “…”` (its gist, at most ~400 characters)."""
    return f"{speaker_of(record)}: “{inert(_excerpt(text))}”"


def excerpt(text: str) -> str:
    """The gist a claim quotes of a turn (whitespace folded; at most ~400 characters)."""
    return _excerpt(text)


def _date(created_at: float) -> str:
    return datetime.fromtimestamp(created_at, UTC).strftime("%Y-%m-%d")


def _open_part(slug: str, topics: TopicReader, pending: Mapping[str, TopicEdit] | None = None) -> str:
    """The file of `slug` that still has room (slugs never contain "--", so parts cannot collide).

    Asked before each block appended, with `pending` the batch's edits so far: a file is judged by what
    it holds with this batch's blocks, so one large batch rolls over as many blocks do one by one (judged
    by the files on disk alone, once per batch, one batch grew a file to 68 KB).

    Parts fill in order (1, 2, ... full, then one with room), so the first open part is found by galloping
    and bisecting: O(log parts) stats, not O(parts) for a word a large workspace says often."""

    def path(part: int) -> str:
        return f"topics/{slug}.md" if part == 1 else f"topics/{slug}--{part}.md"

    def is_open(part: int) -> bool:
        edit = pending.get(path(part)) if pending is not None else None
        size = edit.size() if edit is not None else topics.size(path(part))
        return size is None or size < TOPIC_FILE_LIMIT

    full, part = 0, 1  # invariant: `full` is full (0: none yet), `part` is the next probe
    while not is_open(part):
        full, part = part, part * 2
    while part - full > 1:  # the first open part lies in (full, part]
        middle = (full + part) // 2
        if is_open(middle):
            part = middle
        else:
            full = middle
    return path(part)


def states_own_fact(record: ArchiveRecord) -> bool:
    """May this record's words replace an older statement of a fact? Only the person's own: a user turn
    they typed, or one imported from another program's transcript (its user turns, as a person wrote them).
    Pasted or fetched material (`tool`), the assistant and the host never state the person's facts."""
    return record.role == "user" and record.effective_origin in ("user", "imported")


def _label(record: ArchiveRecord) -> str:
    return f"{record.role} {record.session_id}/{record.node_id}"


def path_rule(batch: BatchInput) -> Callable[[str], bool] | None:
    """`on_path(anchor)` over the batch's lineage, computed on first use (None: the path is unknown)."""
    if batch.lineage is None:
        return None
    lineage: frozenset[str] | None = None

    def on_path(anchor: str) -> bool:
        nonlocal lineage
        if lineage is None:
            lineage = batch.lineage() if batch.lineage is not None else frozenset()
        return anchor in lineage

    return on_path


_LABEL_NODE: Final = re.compile(r"^\w+ (?P<session>[^/\s]+)/(?P<node>\S+)$")
_ESCAPED: Final = re.compile(r"\\(.)")


def _node_of(source: SourceRef) -> str | None:
    """The node a source names, read from its label (`<role> <sid>/<node>`, as `_label` writes it) and
    trusted only when its anchor is that node's (so no label, however written, names another node)."""
    match = _LABEL_NODE.match(_ESCAPED.sub(r"\1", source.label))
    if match is None or match["session"] != source.session_id:
        return None
    node = match["node"]
    return node if anchor_of(f"{source.session_id}/{node}") == source.anchor else None


def side_rule(batch: BatchInput) -> Aside | None:
    """Where a source of the batch's session was said, when it lies on the batch's path or a side branch
    of it (None: it may lie on an alternative, or the shape is unknown); None without the session's
    shape. O(depth) per source asked, and only sources off the path are asked whether they are aside."""
    if batch.shapes is None or not batch.records:
        return None
    shapes, session_id, tip = batch.shapes, batch.session_id, batch.records[-1].node_id
    held: list[SessionShape | None] = []  # the session's shape, read once (a fresh one reads its files)
    answers: dict[SourceRef, int | None] = {}  # a source is asked once per block that cites it

    def aside(source: SourceRef) -> int | None:
        if source in answers:
            return answers[source]
        if not held:
            held.append(shapes(session_id))
        shape = held[0]
        node = _node_of(source)
        if (
            shape is None
            or node is None
            or tip not in shape.predecessors
            or are_alternatives(shape, node, tip)
        ):
            answers[source] = None
        else:
            answers[source] = shape.position(node)
        return answers[source]

    return aside


def _key_words(clause: str, said: str) -> str:
    """The words a core fact's keys are read from: its sentence (where its cue is), unless the sentence
    states other facts too ("Actually I live in Rome and I work as a nurse": the nurse clause alone)."""
    mine = {fact.key for fact in keys_of(clause)}
    return clause if {fact.key for fact in keys_of(said)} - mine else said


class ExtractiveDistiller:
    """Groups each batch's turns into exchanges (`_exchanges`: a question with its answer, never across a
    session gap), files each on the page of its subject (`_subjects`: a name or noun the chat uses, never a
    filler word) and writes one block per exchange: the quoted gist of each turn, citing every turn of it; an exchange already
    in its topic gains a citation instead of a copy. First-person facts about the user also go to
    `topics/core.md`, one block per clause (`core = False` turns that off). In a labelled chat each
    speaker's first-person statements also go to the speaker's page, one block per turn (`_speakers`;
    `speakers = False` turns that off). A user turn that updates or
    retracts an older current block of the file it lands in marks that block superseded (`_supersede`'s
    rule). Deterministic, offline, and it cites every record."""

    name = "extractive"
    core = True
    speakers = True  # a page per speaker of a labelled chat (`_speakers`)
    brief = True  # the project's brief (`_brief`): commands, conventions, decisions, fixes, files, threads

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        on_path = path_rule(batch)
        aside = side_rule(batch)
        files: dict[str, TopicEdit] = {}
        if batch.slots is not None:  # when each turn was said: time order, not write order, decides
            batch.slots.note_said((r.session_id, anchor_of(r.source_id), r.created_at) for r in batch.records)
        across = Across(files, topics.read, batch.slots, batch.session_id, on_path, aside)
        # Supersession across files runs after every block is filed, in the order the words were said:
        # a core fact said last must also reach the exchange of an older turn filed after it.
        said: list[tuple[float, Block, str, str]] = []
        # The core first: a user turn the master took whole is filed there only (the same fact in two
        # files would be recalled twice, and `verify` calls an identical claim a duplicate).
        in_core = (
            self._core(batch, topics, files, on_path=on_path, aside=aside, said=said) if self.core else set()
        )
        # A lone turn the core master took whole is filed there only, so it asks for no page either.
        blocks = [e for e in exchanges(batch.records) if not (len(e) == 1 and e[0].source_id in in_core)]

        def has_page(slug: str) -> bool:  # a reserved name is never a subject's page, whatever is there
            return slug not in RESERVED_TOPIC_SLUGS and topics.size(f"topics/{slug}.md") is not None

        subjects = SubjectPicker(blocks, has_page, _slug, RESERVED_TOPIC_SLUGS).subjects()
        pages = speaker_pages(batch.records, has_page, _slug) if self.speakers else []
        for exchange, subject in zip(blocks, subjects, strict=True):
            claim = exchange_claim(exchange)
            # A reserved slug is never the picker's choice; guarded all the same, since a write must not fail.
            word = PLAIN_SLUG if _slug(subject) in RESERVED_TOPIC_SLUGS else subject
            slug = _slug(word)
            path = _open_part(slug, topics, files)  # per block: the file's size with this batch's
            edit = files.get(path)
            if edit is None:
                # A name is titled as said; a file's name ("renderer.py") as it is written, a word capitalised.
                title = word if "." in word or "/" in word else word[:1].upper() + word[1:]
                edit = files[path] = TopicEdit(path, topics.read(path), inert(title))
            sources = [(_label(r), r.source_id) for r in exchange]
            # The same exchange said again (a re-run, or on a sibling branch) gains a citation.
            block = edit.add(claim, [(_date(exchange[-1].created_at), sources)])
            words = " ".join(r.content for r in exchange if states_own_fact(r))
            if words:  # only the person's own words supersede; an assistant's or a tool's never do
                supersede_older(
                    edit,
                    block,
                    words,
                    same_topic=True,
                    session_id=batch.session_id,
                    on_path=on_path,
                    aside=aside,
                )
                said.append((max(r.created_at for r in exchange if r.role == "user"), block, path, words))
        for record, speaker, text in pages:
            self._speaker_page(record, speaker, text, topics, files, on_path=on_path, aside=aside, said=said)
        if self.brief:
            file_brief(
                brief_entries(batch.records),
                topics,
                files,
                session_id=batch.session_id,
                on_path=on_path,
                aside=aside,
            )
        for _, block, path, words in sorted(said, key=lambda entry: entry[0]):  # stable: core first
            across.supersede(block, path, words)
        return {path: edit.render() for path, edit in files.items() if edit.changed}

    def _speaker_page(
        self,
        record: ArchiveRecord,
        speaker: str,
        text: str,
        topics: TopicReader,
        files: dict[str, TopicEdit],
        *,
        on_path: Callable[[str], bool] | None,
        aside: Aside | None,
        said: list[tuple[float, Block, str, str]],
    ) -> None:
        """One turn's statement about its speaker, on the speaker's page (`_speakers`). A statement the
        page already holds is not cited again: said in another session ("I'll keep you posted"), it would
        make a block of two sessions, and its exchange block cites it anyway. A user's statement
        supersedes as a core fact does (by its slots, in any file)."""
        slug = _slug(speaker)
        if slug in RESERVED_TOPIC_SLUGS:
            return
        path = _open_part(slug, topics, files)
        edit = files.get(path)
        if edit is None:
            edit = files[path] = TopicEdit(path, topics.read(path), inert(speaker))
        claim = _quote(record, text)
        if edit.holds(claim):
            return
        block = edit.add(claim, [(_date(record.created_at), [(_label(record), record.source_id)])])
        if states_own_fact(record):
            supersede_older(
                edit,
                block,
                text,
                same_topic=False,
                session_id=record.session_id,
                on_path=on_path,
                aside=aside,
            )
            said.append((record.created_at, block, path, text))

    def _core(
        self,
        batch: BatchInput,
        topics: TopicReader,
        files: dict[str, TopicEdit],
        *,
        on_path: Callable[[str], bool] | None,
        aside: Aside | None,
        said: list[tuple[float, Block, str, str]],
    ) -> set[str]:
        """First-person facts of identity and preference go to `topics/core.md`, where a fact said with
        an update or retraction cue supersedes the older fact of its slot. Returns the source ids of the
        user turns the master took whole (their exchange, if they are alone in it, is filed there only)."""
        facts, whole = read_core_facts(batch.records)
        if not facts:
            return set()
        edit = files[CORE_PATH] = TopicEdit(CORE_PATH, topics.read(CORE_PATH), CORE_TITLE)
        for n, fact in enumerate(facts):
            if edit.size() >= TOPIC_FILE_LIMIT:  # per fact, with the batch's: the master has no parts
                whole -= {f.record.source_id for f in facts[n:]}
                break
            record = fact.record
            claim = f"User: “{inert(fact.text)}”"
            block = edit.add(claim, [(_date(record.created_at), [(_label(record), record.source_id)])])
            if not states_own_fact(record):
                continue  # a candidate (held unless the person typed it) never replaces a standing fact
            supersede_older(
                edit,
                block,
                fact.text,
                context=fact.said,
                same_topic=False,
                session_id=batch.session_id,
                on_path=on_path,
                aside=aside,
            )
            said.append((record.created_at, block, CORE_PATH, _key_words(fact.text, fact.said)))
        return whole


PLAIN_SLUG: Final = "notes"


class PlainDistiller:
    """The fallback every write has: each exchange quoted in one block of `topics/notes.md` (and its
    parts), citing its turns; no subject, no core fact, no supersession. The write core files a batch this
    way when its distiller's edits cannot be installed (they fail validation, name a file no topic may
    have, or the distiller raised on the batch's text): no text of a turn makes a write fail for good."""

    name = "plain"

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        files: dict[str, TopicEdit] = {}
        for exchange in exchanges(batch.records):
            path = _open_part(PLAIN_SLUG, topics, files)
            edit = files.get(path)
            if edit is None:
                edit = files[path] = TopicEdit(path, topics.read(path), "Notes")
            sources = [(_label(r), r.source_id) for r in exchange]
            edit.add(exchange_claim(exchange), [(_date(exchange[-1].created_at), sources)])
        return {path: edit.render() for path, edit in files.items() if edit.changed}


def file_brief(
    entries: Sequence[BriefEntry],
    topics: TopicReader,
    files: dict[str, TopicEdit],
    *,
    session_id: str,
    on_path: Callable[[str], bool] | None,
    aside: Aside | None,
) -> None:
    """File the brief's entries in `topics/brief.md` (and its parts, as any page rolls over). An entry
    already there (the same claim) gains a citation; one of the same subject (a command of the same
    purpose, a file, a session's open threads) supersedes the older current one in the part it lands in,
    unless that one lies off the batch's own path (an alternative of a fork: `left`, never superseded; a
    side branch, a sub-agent's: its own). What
    an older part says of a subject is read newest first (`current_brief`)."""
    for entry in entries:
        path = _open_part(BRIEF_SLUG, topics, files)
        edit = files.get(path)
        if edit is None:
            edit = files[path] = TopicEdit(path, topics.read(path), BRIEF_TITLE)
        groups = [(_date(entry.records[-1].created_at), [(_label(r), r.source_id) for r in entry.records])]
        block = edit.add(inert(entry.claim_words), groups)
        subject = brief_subject(block)
        if subject is None:
            continue
        date = newest_date(block)
        for old in list(edit.blocks):
            if (
                old.id != block.id
                and old.superseded is None
                and brief_subject(old) == subject
                and newest_date(old) <= date
                # Only along the batch's own path: a side branch's entry (a sub-agent's) is its branch's,
                # never replaced by the main line's, nor an alternative's (`left`, never superseded).
                and not off_path(old, session_id, on_path)
            ):
                edit.supersede(old.id, block, path, "update")
