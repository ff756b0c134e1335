"""A page per speaker of a labelled chat: each turn's first-person sentences that are not questions, one
block per turn on the speaker's page, citing that turn alone, written in the same install as the
exchanges; and recall, asked about the speaker, finds a fact said there in passing."""

from __future__ import annotations

from pathlib import Path

from dagmem.memory.format import ArchiveRecord, HomePaths, Topic, anchor_of, is_topic_path, parse_topic
from dagmem.memory.recall import RecallIndex, RecallQuery, search
from dagmem.memory.store import FakeClock, FileSessionStore
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import ExtractiveDistiller, reorganise
from dagmem.memory.write._speakers import speaker_pages, statement
from dagmem.memory.writing import write_home
from dagmem.tests._two_part_chat import write_two_parts

DAY = 86_400.0
FIRST = [
    ("user", "Caroline: Hey Melanie! I went to a support group yesterday."),
    ("assistant", "Melanie: Wow, that's great! Did it help?"),
    ("user", "Caroline: It did. I'll keep you posted."),
    (
        "assistant",
        "Melanie: Lovely. I'm carving out me-time each day, running or playing my violin. How's work?",
    ),
    ("user", "Caroline: Busy! Note: the office moved."),
]
SECOND = [
    ("assistant", "Melanie: Hey Caroline! We went camping at the beach last weekend."),
    ("user", "Caroline: Sounds fun! I'll keep you posted."),  # said again, in another session
    ("assistant", "Melanie: Gorgeous colours!"),  # nothing in the first person: no statement
]


def _write(home: Path, distiller: ExtractiveDistiller | None = None) -> dict[str, str]:
    """Write the chat as one session (the second part two days later); each turn's anchor -> its part."""
    return write_two_parts(home, FIRST, SECOND, distiller or ExtractiveDistiller())


def _pages(home: Path) -> dict[str, Topic]:
    topics = HomePaths(home).memory / "topics"
    return {
        f"topics/{f.name}": parse_topic(f.read_text(encoding="utf-8"), f"topics/{f.name}")
        for f in sorted(topics.glob("*.md"))
        if is_topic_path(f"topics/{f.name}")
    }


def _cited(topic: Topic) -> list[list[str]]:
    return [[s.anchor for c in b.citations for s in c.sources] for b in topic.blocks]


def test_each_speaker_has_a_page_of_what_they_say_of_themselves(tmp_path: Path) -> None:
    _write(tmp_path)
    pages = _pages(tmp_path)
    melanie = pages["topics/melanie.md"]
    assert melanie.title == "Melanie"
    assert [b.claim for b in melanie.blocks] == [
        "Assistant: “Melanie: I'm carving out me-time each day, running or playing my violin.”",
        "Assistant: “Melanie: We went camping at the beach last weekend.”",
    ]
    # Each statement cites its turn alone; the same turn is still in its exchange block.
    assert _cited(melanie) == [[anchor_of("chat/p1t3")], [anchor_of("chat/p2t0")]]
    exchanges = [b.claim for path, t in pages.items() if path != "topics/melanie.md" for b in t.blocks]
    assert any("playing my violin. How's work?" in claim for claim in exchanges)
    caroline = pages["topics/caroline.md"]
    assert [b.claim for b in caroline.blocks] == [
        "User: “Caroline: I went to a support group yesterday.”",
        "User: “Caroline: I'll keep you posted.”",
    ]


def test_a_statement_said_again_in_another_session_is_not_cited_twice(tmp_path: Path) -> None:
    part = _write(tmp_path)
    pages = _pages(tmp_path)
    for path in ("topics/caroline.md", "topics/melanie.md"):
        for anchors in _cited(pages[path]):
            assert len({part[a] for a in anchors}) == 1, path
    assert _cited(pages["topics/caroline.md"])[1] == [anchor_of("chat/p1t2")]


def test_a_label_only_one_turn_opens_with_is_no_speaker(tmp_path: Path) -> None:
    _write(tmp_path)
    assert "topics/note.md" not in _pages(tmp_path)
    assert statement(_record("Note: the office moved.")) is None  # no first person either
    assert statement(_record("I moved the office.")) is None  # no label: no speaker's name
    assert statement(_record("Ana: Did I? I moved it. 我搬家了。")) == ("Ana", "Ana: I moved it. 我搬家了。")
    twice = [_record("Ok: I see my error."), _record("Ok: I fixed my error."), _record("Bo: I left.")]
    assert speaker_pages(twice, lambda _slug: False, str.casefold) == []  # a filler word, and one turn
    assert [s for _r, s, _t in speaker_pages(twice, lambda slug: slug == "bo", str.casefold)] == ["Bo"]
    # Two "Error: ..." lines among plain turns: no labelled chat, so no speaker.
    errors = [
        _record("Error: I/O failed on my disk."),
        _record("ok"),
        _record("Error: I retried."),
        _record("no"),
    ]
    assert speaker_pages(errors, lambda _slug: True, str.casefold) == []
    assert len(speaker_pages(errors[:3], lambda _slug: False, str.casefold)) == 2


def test_without_labels_or_with_the_pages_off_nothing_changes(tmp_path: Path) -> None:
    _write(tmp_path / "on")
    off = ExtractiveDistiller()
    off.speakers = False
    _write(tmp_path / "off", off)
    on_pages, off_pages = _pages(tmp_path / "on"), _pages(tmp_path / "off")
    assert set(on_pages) - set(off_pages) == {"topics/melanie.md", "topics/caroline.md"}
    assert all(on_pages[path] == off_pages[path] for path in off_pages if path != "topics/index.md")


def test_the_same_chat_distils_to_the_same_bytes(tmp_path: Path) -> None:
    _write(tmp_path / "a")
    _write(tmp_path / "b")
    assert _pages(tmp_path / "a") == _pages(tmp_path / "b")


def test_a_users_update_supersedes_their_older_statement(tmp_path: Path) -> None:
    clock = FakeClock(step=0)
    store = FileSessionStore(tmp_path, fsync=False, clock=clock)
    for role, text in (
        ("user", "Caroline: I live in Boston with my cat."),
        ("assistant", "Melanie: Nice, I love Boston."),
        ("user", "Caroline: Big news: I moved to Denver last month."),
        ("assistant", "Melanie: Wow, congrats on the move!"),
    ):
        clock.now += DAY
        store.append("chat", role, text)
    write_home(tmp_path, force=True, distiller=ExtractiveDistiller())
    blocks = _pages(tmp_path)["topics/caroline.md"].blocks
    older = next(b for b in blocks if "Boston" in b.claim)
    newer = next(b for b in blocks if "Denver" in b.claim)
    assert older.superseded is not None
    assert older.superseded.by == newer.id
    assert newer.superseded is None


def test_recall_asked_about_a_speaker_finds_what_they_said_in_passing(tmp_path: Path) -> None:
    _write(tmp_path)
    hits = search(
        RecallIndex.open(HomePaths(tmp_path).memory), RecallQuery("What instruments does Melanie play?", k=1)
    )
    assert hits[0].topic == "topics/melanie.md"
    assert [e.node for e in hits[0].evidence] == ["p1t3"]  # one turn of the budget, not its exchange's


def _record(text: str) -> ArchiveRecord:
    return ArchiveRecord("chat", "n1", "user", 1, 0.0, text)


def test_reorganise_leaves_a_speakers_page_of_one_block(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path, fsync=False)
    for role, text in (
        ("user", "Ana: Which harbour did you paint last week?"),
        ("assistant", "Bo: Porto's harbour at dusk, I painted it in oils."),
        ("user", "Ana: Lovely colours on the river boats."),
        ("assistant", "Bo: Thanks, the boats were the hardest part."),
    ):
        store.append("chat", role, text)
    write_home(tmp_path, force=True, distiller=ExtractiveDistiller())
    assert len(_pages(tmp_path)["topics/bo.md"].blocks) == 1  # a page of one block, as a quote page has
    with Workspace(HomePaths(tmp_path).memory, fsync=False) as ws:
        reorganise(ws)
    assert _pages(tmp_path)["topics/bo.md"].blocks[0].claim == (
        "Assistant: “Bo: Porto's harbour at dusk, I painted it in oils.”"
    )
