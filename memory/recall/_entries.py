"""One indexed block (an `Entry`), made from a topic file and the archived records its citations name.

An entry keeps what a hit needs without reading the workspace again: the plain claim, its topic and block
id, a digest of the block's bytes (so a rewritten topic file re-indexes only the blocks that changed), and
each cited source with its session, node, role, time, sequence number and an excerpt (to order a hit's
evidence by relevance, and to show it), and its supersession (the successor's block id, topic and the date,
DESIGN §12) and partly supersession (the same of the block holding a newer value of part of it), so a query
resolves a hit's status, and what comes with it, without reading a topic file. Its vector is stored beside
it. Marking a block either way changes its bytes, so its digest: the install that marks it re-indexes it.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..durable import open_regular, read_regular
from ..errors import UnsafePath
from ..format import GitContext, WorkspacePaths, anchor_of, git_context_of

if TYPE_CHECKING:
    from ..format import ArchiveRecord, Block, Frame, Supersession, Topic
from ._embed import DIM, embed
from ._text import analyse, date_words, plain_claim

__all__ = [
    "ArchiveScans",
    "ArchiveSources",
    "Entry",
    "Source",
    "SourceLookup",
    "Succession",
    "block_digest",
    "clear_caches",
    "entries_of_topic",
    "topic_of",
    "uncut_rest",
    "vectorise",
]

EXCERPT = 300  # characters of a cited record kept in the index
# Keyed by whole blocks, so bounded like the validated-block cache (`format._topic_validate`): 65,536 kept
# a simulator worker's blocks alive from home to home.
_DIGESTS_MAX = 1 << 14
_digests: dict[Block, str] = {}


def clear_caches() -> None:
    """Let go of the block digests remembered (a process done with one workspace, going on to another)."""
    _digests.clear()


def block_digest(block: Block) -> str:
    """A digest of the block's bytes in its file (16 hex digits of sha256). An install re-reads every
    block of each file it touched and most are unchanged: they are looked up (blocks are values), not
    rendered again."""
    found = _digests.get(block)
    if found is None:
        from ..format import render_block  # here: a query over a current index renders no block

        found = hashlib.sha256(render_block(block).encode("utf-8", "surrogatepass")).hexdigest()[:16]
        if len(_digests) >= _DIGESTS_MAX:
            _digests.clear()
        _digests[block] = found
    return found


@dataclass(frozen=True)
class Source:
    session: str
    anchor: str
    node: str | None  # None when the archive does not hold the cited frame (a dangling citation)
    role: str | None
    created_at: float | None
    seq: int | None
    excerpt: str
    origin: str | None = None  # only when it is not the role's default (`_unusual`); None otherwise
    git: GitContext | None = None  # where in git it was said (the frame's `source-meta`), when known
    # The record's whole text while an entry is made from it (never kept in the index): what a claim that
    # quotes only the start of a long turn leaves out is indexed beside it (`Entry.more`).
    text: str | None = field(default=None, compare=False, repr=False)

    @property
    def source_id(self) -> str:
        return f"{self.session}/{self.node}" if self.node is not None else f"{self.session}#{self.anchor}"

    def to_json(self) -> list[Any]:
        row = [self.session, self.anchor, self.node, self.role, self.created_at, self.seq, self.excerpt]
        # The origin only when it is not the role's, and the git context only when known (so caches
        # written before either existed still read, and a record without them costs nothing more).
        if self.git is not None:
            return [*row, self.origin, self.git.to_json()]
        return row if self.origin is None else [*row, self.origin]

    @classmethod
    def from_json(cls, raw: Sequence[Any]) -> Source:
        session, anchor, node, role, created_at, seq, excerpt, *rest = raw
        origin = str(rest[0]) if rest and rest[0] is not None else None
        git = git_context_of(rest[1]) if len(rest) > 1 else None
        return cls(str(session), str(anchor), node, role, created_at, seq, str(excerpt), origin, git)

    @property
    def effective_origin(self) -> str | None:
        return self.origin if self.origin is not None else self.role


def _unusual(origin: str, role: str | None) -> str | None:
    """The origin as a Source keeps it: None for the role's default, so equal sources compare equal."""
    return None if origin == role else origin


def _excerpt(text: str) -> str:
    # Folding a prefix gives a prefix of the folded text: fold only as much as the excerpt needs.
    folded = " ".join(text[: 2 * EXCERPT].split())
    if len(folded) <= EXCERPT and len(text) > 2 * EXCERPT:
        folded = " ".join(text.split())
    return folded if len(folded) <= EXCERPT else folded[:EXCERPT] + " …"


def source_of(record: ArchiveRecord) -> Source:
    return Source(
        record.session_id,
        anchor_of(record.source_id),
        record.node_id,
        record.role,
        record.created_at,
        record.seq,
        _excerpt(record.content),
        _unusual(record.effective_origin, record.role),
        record.git,
        record.content,
    )


Succession = tuple[str, str, str]  # a superseded block's (successor block id, its topic, date YYYY-MM-DD)


def succession_of(block: Block) -> Succession | None:
    """What the index keeps of a block's supersession: its successor, where it is, and when."""
    return _succession(block.superseded)


def partly_of(block: Block) -> Succession | None:
    """What the index keeps of a block's partly supersession, as `succession_of` of its supersession."""
    return _succession(block.partly)


def _succession(found: Supersession | None) -> Succession | None:
    return None if found is None else (found.by, found.topic, found.date)


def _succession_json(raw: Any) -> Succession | None:
    return None if raw is None else (str(raw[0]), str(raw[1]), str(raw[2]))


@dataclass
class Entry:
    topic: str
    block_id: str
    digest: str
    text: str  # the claim as a person reads it
    date: str  # the latest citation's date, YYYY-MM-DD
    sources: tuple[Source, ...]
    vector: npt.NDArray[np.float16] | None = None
    words: dict[str, int] | None = None  # BM25 term counts, kept in the delta so a reader need not analyse
    superseded: Succession | None = None
    more: str = ""  # the rest of each cited turn the claim quotes only the start of (`uncut_rest`)
    partly: Succession | None = None  # the block holding a newer value of part of this one (it comes with it)

    @property
    def key(self) -> tuple[str, str]:
        return (self.block_id, self.digest)

    def index_text(self) -> str:
        """What is searched: the claim after its date in words ('8 May 2023 User: ...'), then the rest of
        any turn it cuts short, so every word of every cited turn is found."""
        times = [s.created_at for s in self.sources if s.created_at is not None]
        text = f"{self.text} {self.more}" if self.more else self.text
        return f"{date_words(max(times))} {text}" if times else f"{self.date} {text}"

    def to_json(self, *, vector: bool = True) -> dict[str, Any]:
        body: dict[str, Any] = {
            "t": self.topic,
            "b": self.block_id,
            "h": self.digest,
            "x": self.text,
            "d": self.date,
            "e": [s.to_json() for s in self.sources],
        }
        if self.superseded is not None:
            body["s"] = list(self.superseded)
        if self.partly is not None:
            body["p"] = list(self.partly)
        if self.more:
            body["m"] = self.more
        if vector and self.vector is not None:
            body["v"] = base64.b64encode(self.vector.astype("<f2").tobytes()).decode()
        if vector and self.words is not None:
            body["w"] = self.words
        return body

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Entry:
        vector = None
        if "v" in raw:
            vector = np.frombuffer(base64.b64decode(raw["v"]), dtype="<f2").astype(np.float16)
            if vector.shape != (DIM,):
                raise ValueError(f"a vector of {vector.shape} in the recall index, expected ({DIM},)")
        return cls(
            str(raw["t"]),
            str(raw["b"]),
            str(raw["h"]),
            str(raw["x"]),
            str(raw["d"]),
            tuple(Source.from_json(s) for s in raw["e"]),
            vector,
            raw.get("w"),  # {term: count} as JSON gives it: read in bulk when a delta is opened
            _succession_json(raw.get("s")),
            str(raw.get("m", "")),
            _succession_json(raw.get("p")),
        )


SourceLookup = Callable[[str, str], Source | None]  # (session, anchor) -> the archived record, or None


class ArchiveSources:
    """Finds cited records: first among `records` (a batch in hand), then in the session archives, each
    scanned once (strictly, so only frames of the valid prefix count) when a citation needs it. With
    `scans` (a writer's, kept across its installs) an archive scanned before is scanned on from there."""

    def __init__(
        self, memory: Path, records: Iterable[ArchiveRecord] = (), scans: ArchiveScans | None = None
    ) -> None:
        self.memory = memory
        self._found: dict[tuple[str, str], Source] = {}
        for record in records:
            source = source_of(record)
            self._found[(source.session, source.anchor)] = source
        self._scanned: dict[str, Mapping[str, Source]] = {}
        self._scans = scans

    def __call__(self, session: str, anchor: str) -> Source | None:
        found = self._found.get((session, anchor))
        if found is not None:
            return found
        sources = self._scanned.get(session)
        if sources is None:
            path = WorkspacePaths(self.memory).source(session)
            if self._scans is not None:
                sources = self._scanned[session] = self._scans.sources(path, session)
            else:
                try:
                    data = read_regular(path) or b""
                except (NotADirectoryError, UnsafePath):
                    data = b""
                sources = self._scanned[session] = _sources_in(data, session)
        return sources.get(anchor)


def _sources_in(data: bytes, session: str) -> dict[str, Source]:
    """The records of an archive's frames by anchor (the first frame of each), scanned strictly."""
    from ..format import scan_archive  # here: a query over a current index scans no archive

    found: dict[str, Source] = {}
    for frame in scan_archive(data, session).frames:
        anchor = anchor_of(frame.source_id)
        found.setdefault(anchor, _source_of_frame(session, anchor, frame))
    return found


def _source_of_frame(session: str, anchor: str, frame: Frame) -> Source:
    return Source(
        session,
        anchor,
        frame.node_id,
        frame.role,
        frame.created_at,
        frame.seq,
        _excerpt(frame.content),
        _unusual(frame.origin, frame.role),
        frame.git,
        frame.content,
    )


@dataclass
class _Scanned:
    inode: int
    size: int
    mtime_ns: int
    valid_end: int  # where the strict scan stopped: the next scan starts there
    sources: dict[str, Source]
    ids: set[str]  # the source ids scanned so far: what a scan of the rest must not see again


class ArchiveScans:
    """The records of session archives, kept by a writer across its installs (`KEPT` sessions, the most
    recently asked): an archive is appended to, so the same file grown since (or unchanged) is scanned
    on from where its last scan stopped; one replaced (a forget rewrites it) or rewritten in place is
    scanned whole, as the workspace's index trusts an archive (`Workspace._archive`)."""

    KEPT = 16

    def __init__(self) -> None:
        self._held: OrderedDict[str, _Scanned] = OrderedDict()

    def sources(self, path: Path, session: str) -> Mapping[str, Source]:
        held = self._held.pop(session, None)
        try:
            fd = open_regular(path, os.O_RDONLY)
        except (FileNotFoundError, NotADirectoryError, UnsafePath):
            return {}
        try:
            info = os.fstat(fd)
            grown = (
                held is not None
                and held.inode == info.st_ino
                and (
                    info.st_size > held.size or (info.st_size, info.st_mtime_ns) == (held.size, held.mtime_ns)
                )
            )
            if held is None or not grown:
                held = _Scanned(info.st_ino, 0, 0, 0, {}, set())
            start = held.valid_end
            data = os.pread(fd, info.st_size - start, start) if info.st_size > start else b""
        finally:
            os.close(fd)
        from ..format import scan_archive

        if data:
            scan = scan_archive(data, session, known_ids=held.ids, base=start)
            for frame in scan.frames:
                anchor = anchor_of(frame.source_id)
                held.sources.setdefault(anchor, _source_of_frame(session, anchor, frame))
                held.ids.add(frame.source_id)
            held.valid_end = scan.valid_end
        held.size, held.mtime_ns = info.st_size, info.st_mtime_ns
        self._held[session] = held
        if len(self._held) > self.KEPT:
            self._held.popitem(last=False)
        return held.sources


def topic_of(path: str, data: bytes) -> Topic:
    from ..format import parse_topic  # here: a query over a current index parses no topic file

    return parse_topic(data.decode("utf-8"), path)


def entries_of_topic(
    path: str,
    topic: Topic,
    lookup: SourceLookup,
    known: Callable[[tuple[str, str]], bool] = lambda _key: False,
    *,
    vectorise_now: bool = True,
) -> tuple[list[tuple[str, str]], list[Entry]]:
    """The (block id, digest) of every block of a topic, and an entry (with its vector) for each block
    that `known` does not know yet: an install re-indexes only what it changed."""
    keys: list[tuple[str, str]] = []
    new: list[Entry] = []
    for block in topic.blocks:
        digest = block_digest(block)
        keys.append((block.id, digest))
        if known((block.id, digest)):
            continue
        sources: list[Source] = []
        seen: set[tuple[str, str]] = set()
        for citation in block.citations:
            for ref in citation.sources:
                if (ref.session_id, ref.anchor) in seen:
                    continue
                seen.add((ref.session_id, ref.anchor))
                found = lookup(ref.session_id, ref.anchor)
                sources.append(found or Source(ref.session_id, ref.anchor, None, None, None, None, ""))
        date = max((c.date for c in block.citations), default="")
        claim = plain_claim(block.claim)
        more = uncut_rest(claim, sources)
        new.append(
            Entry(
                path,
                block.id,
                digest,
                claim,
                date,
                tuple(sources),
                superseded=succession_of(block),
                more=more,
                partly=partly_of(block),
            )
        )
    if vectorise_now:
        vectorise(new)
    return keys, new


_QUOTED_HEAD = 80  # characters of a turn that show the claim quotes it


def uncut_rest(claim: str, sources: Sequence[Source]) -> str:
    """The text of the cited turns that `claim` quotes only the start of (an extractive claim's excerpt of
    a long turn): each such turn's words after the quoted part, whitespace folded. A turn the claim does
    not quote (a model's own words) adds nothing: its claim is what the distiller meant to say."""
    rest: list[str] = []
    for source in sources:
        if source.text is None:
            continue
        folded = " ".join(source.text.split())
        if len(folded) <= _QUOTED_HEAD or folded in claim:
            continue
        at = claim.find(folded[:_QUOTED_HEAD])
        if at < 0:
            continue
        quoted = _QUOTED_HEAD
        while at + quoted < len(claim) and quoted < len(folded) and claim[at + quoted] == folded[quoted]:
            quoted += 1
        if folded[quoted:].strip():
            rest.append(folded[quoted:].strip())
    return " ".join(rest)


def vectorise(entries: Sequence[Entry]) -> None:
    """Give entries their vectors and term counts, in one call to the model (its cost is mostly per call:
    an install embeds the new blocks of all its topic files at once)."""
    texts = [entry.index_text() for entry in entries]
    for entry, text, vector in zip(entries, texts, embed(texts), strict=True):
        entry.vector = vector.astype(np.float16)
        entry.words = dict(Counter(analyse(text)))
