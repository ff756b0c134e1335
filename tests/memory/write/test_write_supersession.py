"""A transaction that supersedes a block (DESIGN §12): it may mark any older block of the files it
touches, its successor must exist after the install (in the file the line names), never the block itself
and never around a cycle; the install reads only the files the chain passes through."""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import Block, Supersession, Topic, make_block, parse_topic, render_topic
from dagmem.memory.outcomes import ReasonCode
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import BatchInput, Edits, TopicReader, records_of, write_batch
from dagmem.sim import check_home

HOME, BERLIN, NOTES, OTHER = "topics/home.md", "topics/berlin.md", "topics/scratch.md", "topics/other.md"
PLAIN = "topics/notes.md"  # where a batch whose edits are refused is filed instead

# What a script edits: the batch, what the files say now, and the block ids it may not reuse.
Script = Callable[[BatchInput, TopicReader], Edits]


class Scripted:
    name = "scripted"

    def __init__(self, script: Script) -> None:
        self.script = script

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        return self.script(batch, topics)


def citing(path: str, claim: str, batch: BatchInput, taken: set[str] | None = None) -> Block:
    """A block citing every record of the batch."""
    sources = [("user", record.source_id) for record in batch.records]
    return make_block(path, claim, [("2026-11-20", sources)], set() if taken is None else taken)


def topic_of(topics: TopicReader, path: str) -> Topic:
    text = topics.read(path)
    assert text is not None
    return parse_topic(text, path)


def with_block(topic: Topic, *extra: Block) -> str:
    return render_topic(Topic(topic.title, (*topic.blocks, *extra)))


def superseding(topic: Topic, claim: str, by: str, where: str, reason: str = "update") -> str:
    """`topic` with its block `claim` marked superseded by block `by` of `where`."""
    status = Supersession(by, where, "2026-11-20", reason)  # type: ignore[arg-type]
    marked = tuple(dataclasses.replace(b, superseded=status) if b.claim == claim else b for b in topic.blocks)
    return render_topic(Topic(topic.title, marked))


class Home:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = FileSessionStore(root)
        self.workspace = Workspace(root / "memory")
        self.sessions = 0

    def write(self, script: Script) -> None:
        """One session of two turns, written by `script` in one transaction."""
        self.sessions += 1
        sid = f"s{self.sessions}"
        ids = [self.store.append(sid, role, f"{sid} {role} turn").id for role in ("user", "assistant")]
        write_batch(self.workspace, sid, records_of(sid, self.store.read_nodes(sid, ids)), Scripted(script))

    def refused(self, script: Script) -> str:
        """Write a session whose edits the install refuses: the batch is filed plainly instead (in
        `topics/notes.md`); the refusal's words, as the warning says them."""
        seen: list[str] = []
        handler = logging.Handler()
        handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
        log = logging.getLogger("dagmem.write")
        log.addHandler(handler)
        try:
            self.write(script)
        finally:
            log.removeHandler(handler)
        (warning,) = [line for line in seen if "filed as plain cited blocks" in line]
        assert self.text(PLAIN).startswith("# Notes")
        return warning

    def text(self, path: str) -> str:
        return (self.root / "memory" / path).read_text()

    def block(self, path: str, claim: str) -> Block:
        return next(b for b in parse_topic(self.text(path), path).blocks if b.claim == claim)

    def check(self) -> None:
        workspace_id = read_workspace_id(self.root / "memory" / ".dagmem" / "workspace-id")
        report = check_home(self.store, self.root / "memory", workspace_id)
        assert report.violations == []


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    made = Home(tmp_path / "home")
    yield made
    made.workspace.close()


def paris(batch: BatchInput, topics: TopicReader) -> Edits:
    return {HOME: render_topic(Topic("Home", (citing(HOME, "I live in Paris.", batch),)))}


def test_a_write_may_mark_an_older_block_of_another_session_superseded(home: Home) -> None:
    home.write(paris)
    old = home.block(HOME, "I live in Paris.")

    def moved(batch: BatchInput, topics: TopicReader) -> Edits:
        topic = topic_of(topics, HOME)
        berlin = citing(HOME, "I moved to Berlin.", batch, {b.id for b in topic.blocks})
        grown = parse_topic(with_block(topic, berlin), HOME)
        return {HOME: superseding(grown, "I live in Paris.", berlin.id, HOME)}

    home.write(moved)
    new, berlin = parse_topic(home.text(HOME), HOME).blocks
    assert new.superseded == Supersession(berlin.id, HOME, "2026-11-20", "update")
    assert (new.id, new.claim, new.citations) == (old.id, old.claim, old.citations)  # cites s1 only
    assert home.text(HOME).split("\n")[2] == (
        f"**Superseded** on `2026-11-20` by [{berlin.id}](home.md#^{berlin.id}) (update):"
    )
    home.check()


def berlin_and_paris(batch: BatchInput, topics: TopicReader) -> Edits:
    return {
        **paris(batch, topics),
        BERLIN: render_topic(Topic("Berlin", (citing(BERLIN, "I moved to Berlin.", batch),))),
        OTHER: render_topic(Topic("Other", (citing(OTHER, "Something else.", batch),))),
    }


def test_a_successor_in_an_untouched_file_is_read_from_that_file_alone(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    home.write(berlin_and_paris)
    berlin = home.block(BERLIN, "I moved to Berlin.")
    read: list[str] = []
    original = Workspace.read_bytes

    def recording(self: Workspace, relpath: str) -> bytes | None:
        read.append(relpath)
        return original(self, relpath)

    monkeypatch.setattr(Workspace, "read_bytes", recording)

    def retract(batch: BatchInput, topics: TopicReader) -> Edits:
        notes = render_topic(Topic("Notes", (citing(NOTES, "A note.", batch),)))
        return {
            NOTES: notes,
            HOME: superseding(topic_of(topics, HOME), "I live in Paris.", berlin.id, BERLIN),
        }

    home.write(retract)
    assert home.block(HOME, "I live in Paris.").superseded == Supersession(
        berlin.id, BERLIN, "2026-11-20", "update"
    )
    assert BERLIN in read
    assert OTHER not in read  # nothing else of the workspace is read
    home.check()


@pytest.mark.parametrize(
    ("target", "fragment"),
    [
        (lambda berlin: (BERLIN, "b-00000000"), "superseded by berlin.md#^b-00000000, which does not exist"),
        (lambda berlin: ("topics/nowhere.md", berlin.id), "nowhere.md#^"),
        (lambda berlin: (HOME, berlin.id), "which does not exist"),
    ],
)
def test_a_write_naming_a_missing_successor_is_refused_and_writes_nothing(
    home: Home, target: Callable[[Block], tuple[str, str]], fragment: str
) -> None:
    home.write(berlin_and_paris)
    berlin = home.block(BERLIN, "I moved to Berlin.")
    before = home.text(HOME)
    where, by = target(berlin)

    def dangling(batch: BatchInput, topics: TopicReader) -> Edits:
        notes = render_topic(Topic("Notes", (citing(NOTES, "A note.", batch),)))
        return {NOTES: notes, HOME: superseding(topic_of(topics, HOME), "I live in Paris.", by, where)}

    detail = home.refused(dangling)
    assert str(ReasonCode.INVALID_TOPIC_FORMAT) in detail
    assert fragment in detail
    assert "topics/home.md, line 3" in detail
    assert home.text(HOME) == before  # the refused edits are not installed
    assert not (home.root / "memory" / NOTES).exists()
    home.check()


def test_a_block_superseded_by_itself_is_refused(home: Home) -> None:
    home.write(paris)
    old = home.block(HOME, "I live in Paris.")

    def itself(batch: BatchInput, topics: TopicReader) -> Edits:
        topic = topic_of(topics, HOME)
        grown = parse_topic(with_block(topic, citing(HOME, "New.", batch, {old.id})), HOME)
        return {HOME: superseding(grown, "I live in Paris.", old.id, HOME)}

    assert "superseded by itself" in home.refused(itself)


def test_a_cycle_through_an_untouched_file_is_refused_and_a_chain_is_fine(home: Home) -> None:
    def chained(batch: BatchInput, topics: TopicReader) -> Edits:
        edits = dict(berlin_and_paris(batch, topics))
        paris_id = parse_topic(str(edits[HOME]), HOME).blocks[0].id
        edits[BERLIN] = superseding(
            parse_topic(str(edits[BERLIN]), BERLIN), "I moved to Berlin.", paris_id, HOME
        )
        return edits

    home.write(chained)  # Berlin -> Paris across two new files: a chain
    berlin = home.block(BERLIN, "I moved to Berlin.")

    def closing(batch: BatchInput, topics: TopicReader) -> Edits:
        notes = render_topic(Topic("Notes", (citing(NOTES, "A note.", batch),)))
        return {
            NOTES: notes,
            HOME: superseding(topic_of(topics, HOME), "I live in Paris.", berlin.id, BERLIN),
        }

    assert re.search(
        r"supersession cycle: home\.md#\^b-.* -> berlin\.md#\^b-.* -> home", home.refused(closing)
    )
    home.check()
