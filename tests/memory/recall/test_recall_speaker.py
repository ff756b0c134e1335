"""Recall that uses who is asked about: within a hit, the records that answer the query first, then the
records of the speaker a query names (or of the user, asked about "my ..."); a query naming an entity can
bring in the entity's page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dagmem import FileSessionStore, Hit
from dagmem.memory.format import ArchiveRecord
from dagmem.memory.recall import RecallIndex, RecallQuery, search
from dagmem.memory.recall import _search as recall_search
from dagmem.memory.recall._answers import only_asks
from dagmem.memory.recall._embed import embed
from dagmem.memory.recall._entities import BONUS, entity_pages
from dagmem.memory.recall._speaker import Asked, asked_about, label_of, speakers, without_speakers
from dagmem.memory.text import slug_of
from dagmem.memory.write import BatchInput, ExtractiveDistiller, TopicReader, exchange_claim
from dagmem.memory.write._blocks import TopicEdit
from dagmem.memory.writing import write_home


class _NoCore(ExtractiveDistiller):
    """The default distiller without its core and its speakers' pages: every exchange is one two-turn
    block."""

    core = False
    speakers = False


def _home(tmp_path: Path, turns: Sequence[tuple[str, str]], distiller: object = None) -> RecallIndex:
    home = tmp_path / "home"
    store = FileSessionStore(home, fsync=False)
    for role, text in turns:
        store.append("chat", role, text)
    write_home(home, force=True, distiller=distiller or _NoCore())  # type: ignore[arg-type]
    return RecallIndex.open(home / "memory")


def _speakers(hit: Hit) -> list[str]:
    return [e.text.split(":", 1)[0] for e in hit.evidence]


# Two exchanges holding the same words, the kayak said by Ana in one and by Ben in the other.
KAYAK = [
    ("user", "Ana: I bought a red kayak for the lake."),
    ("assistant", "Ben: Lovely, enjoy the calm water."),
    ("user", "Ana: Lovely, enjoy the calm water."),
    ("assistant", "Ben: I bought a red kayak for the lake."),
]


def _said_by(hit: Hit) -> str:
    """Who said the kayak line of the block `hit` is."""
    return next(e.text.split(":", 1)[0] for e in hit.evidence if "kayak" in e.text)


def test_the_two_blocks_match_a_query_naming_nobody_equally(tmp_path: Path) -> None:
    index = _home(tmp_path, KAYAK)
    hits = search(index, RecallQuery("the red kayak for the lake", k=2))
    assert len(hits) == 2
    assert hits[0].score == pytest.approx(hits[1].score, abs=0.02)  # what the prior must tip


def test_a_query_naming_a_speaker_puts_that_speakers_turn_first_in_each_hit(tmp_path: Path) -> None:
    index = _home(tmp_path, KAYAK)
    for who in ("Ana", "Ben"):
        hits = search(index, RecallQuery(f"What red kayak did {who} buy for the lake?", k=2))
        assert len(hits) == 2
        assert [_speakers(hit)[0] for hit in hits] == [who, who]


def test_the_prior_orders_evidence_not_blocks(tmp_path: Path) -> None:
    # Measured: ranking blocks by the asked speaker's share lowered recall; the blocks' scores and order
    # are the same whichever speaker is named.
    index = _home(tmp_path, KAYAK)
    ana = search(index, RecallQuery("What red kayak did Ana buy for the lake?", k=2))
    ben = search(index, RecallQuery("What red kayak did Ben buy for the lake?", k=2))
    assert [(h.block_id, h.score) for h in ana] == [(h.block_id, h.score) for h in ben]


def test_the_first_named_speaker_is_the_one_asked_about(tmp_path: Path) -> None:
    index = _home(tmp_path, KAYAK)
    ben = search(index, RecallQuery("Which kayak did Ben tell Ana about?", k=2))
    ana = search(index, RecallQuery("Which kayak did Ana tell Ben about?", k=2))
    assert [_speakers(hit)[0] for hit in ben] == ["Ben", "Ben"]
    assert [_speakers(hit)[0] for hit in ana] == ["Ana", "Ana"]


FILLER = [
    ("user", "We should plan the garden party menu soon."),
    ("assistant", "Lemonade and sandwiches would be nice."),
    ("user", "The train to the coast leaves at nine."),
    ("assistant", "Bring a coat, the wind is cold there."),
]


def test_my_puts_the_users_own_turns_first(tmp_path: Path) -> None:
    # The assistant's turn holds more of the query: first without the prior, second when the person asks
    # about theirs.
    turns = [
        *FILLER,
        ("user", "The blue bike has a flat tyre since Sunday."),
        ("assistant", "The blue bike has a flat tyre and a bent wheel since Sunday."),
    ]
    index = _home(tmp_path, turns)
    plain = search(index, RecallQuery("the blue bike flat tyre bent wheel", k=1))
    assert [e.role for e in plain[0].evidence] == ["assistant", "user"]  # without the prior
    for query in ("what is wrong with my blue bike tyre and wheel?", "I forgot what bent the bike wheel"):
        hits = search(index, RecallQuery(query, k=1))
        assert [e.role for e in hits[0].evidence] == ["user", "assistant"]


PAINT = [
    ("user", "Ana: What did you paint last week?"),
    ("assistant", "Ben: A sunset over the harbour, in oils."),
    ("user", "Ana: Lovely. Did you paint it outdoors?"),
    ("assistant", "Ben: Yes, on the pier."),
]


def test_the_record_that_answers_comes_before_the_one_that_only_asks(tmp_path: Path) -> None:
    # Asked about the speaker who asked (a question with a wrong premise), the answer still leads.
    index = _home(tmp_path, PAINT[:2])
    for query in (
        "What did Ana paint last week?",
        "What did Ben paint last week?",
        "what was painted last week",
    ):
        hits = search(index, RecallQuery(query, k=1))
        assert _speakers(hits[0]) == ["Ben", "Ana"]


def test_only_a_record_whose_matching_sentences_are_questions_only_asks() -> None:
    terms = {"paint", "week"}
    assert only_asks("Ana: What did you paint last week?", terms)
    assert only_asks("Wow, lovely! Did you paint it? What week?", terms)
    assert not only_asks("I painted a barn. What did you paint?", terms)  # it says something too
    assert not only_asks("Lovely, enjoy the calm water?", terms)  # it asks about nothing of the query
    assert only_asks("你画了什么画？", {"画了"})  # CJK sentences end with marks of their own
    assert not only_asks("我画了一幅画。你呢？", {"画了"})
    assert only_asks("Did you paint?”", terms)  # a closing quote after the mark


def test_a_name_that_is_no_speaker_changes_nothing(tmp_path: Path) -> None:
    index = _home(tmp_path, KAYAK)
    named = search(index, RecallQuery("What red kayak did Carla buy for the lake?", k=2))
    plain = search(index, RecallQuery("What red kayak did buy for the lake?", k=2))
    assert [h.score for h in named] == pytest.approx([h.score for h in plain], abs=0.05)
    assert [(h.topic, h.block_id, _speakers(h)) for h in named] == [
        (h.topic, h.block_id, _speakers(h)) for h in plain
    ]


def test_a_speakers_name_is_a_label_at_the_start_of_a_record() -> None:
    assert label_of("Caroline: hi there") == "Caroline"
    assert label_of("Mary Ann: hi") == "Mary Ann"
    assert label_of("  José: olá") == "José"
    assert label_of("note: lower case is no name") is None
    assert label_of("Caroline said: hi") is None  # "said" is not capitalised: not a name of three words
    assert label_of("http://example.com") is None
    assert label_of("No colon here") is None


def test_a_label_said_once_is_no_speaker(tmp_path: Path) -> None:
    turns = [
        ("user", "Note: the red kayak is for the lake."),
        ("assistant", "Sure, the red kayak is for the lake then."),
    ]
    index = _home(tmp_path, turns)
    entries = [index.entry(row) for row in range(index.size)]
    assert asked_about("what note about the kayak", entries) is None
    assert asked_about("what did I say about the kayak", entries) == Asked(None)  # the user


def test_the_query_vector_leaves_the_speakers_names_out() -> None:
    assert (
        without_speakers("What instruments does Melanie play?", ["Melanie"]) == "What instruments does play?"
    )
    assert without_speakers("what are melanie's pets' names", ["Melanie"]) == "what are pets' names"
    assert without_speakers("Did Mary Ann meet Jon?", ["Mary Ann", "Jon"]) == "Did meet ?"
    assert without_speakers("Melanies and Melanie-like", ["Melanie"]) == "Melanies and -like"  # whole words
    assert without_speakers("Melanie?", ["Melanie"]) == "Melanie?"  # nothing else left: the whole query
    assert without_speakers("what did Melanie say", []) == "what did Melanie say"


def test_search_embeds_the_query_without_the_speakers_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = [
        ("user", "Melanie: I play the violin every evening."),
        ("assistant", "Caroline: Lovely, how long have you played it?"),
        ("user", "Melanie: Since I was ten, and the clarinet too."),
        ("assistant", "Caroline: I only sing, in a choir."),
    ]
    index = _home(tmp_path, turns)
    entries = [index.entry(row) for row in range(index.size)]
    assert speakers(entries) == ["Melanie", "Caroline"]
    embedded: list[str] = []

    def spy(texts: list[str], workspace: Path | None = None) -> object:
        embedded.extend(texts)
        return embed(texts, workspace)

    monkeypatch.setattr(recall_search, "embed", spy)
    hits = search(index, RecallQuery("What instruments does Melanie play?", k=2))
    assert embedded == ["What instruments does play?"]
    assert hits
    assert "violin" in hits[0].text  # the question is still answered


# -- entity expansion --------------------------------------------------------------------------------


class _EntityPages:
    """A distiller that files each exchange on the page of the entity it is about (`pages`: a word of
    the exchange -> the page's path and title), like a distiller keeping one topic file per entity."""

    name = "entity-pages"

    def __init__(self, pages: Mapping[str, tuple[str, str]]) -> None:
        self.pages = pages

    def distill(self, batch: BatchInput, topics: TopicReader) -> dict[str, str | None]:
        edits: dict[str, TopicEdit] = {}
        records: list[ArchiveRecord] = list(batch.records)
        for i in range(0, len(records), 2):
            exchange = records[i : i + 2]
            said = " ".join(r.content for r in exchange)
            path, title = next(
                (p for word, p in self.pages.items() if word in said), ("topics/notes.md", "Notes")
            )
            edit = edits.get(path) or edits.setdefault(path, TopicEdit(path, topics.read(path), title))
            day = datetime.fromtimestamp(exchange[-1].created_at, UTC).strftime("%Y-%m-%d")
            edit.add(exchange_claim(exchange), [(day, [(r.role, r.source_id) for r in exchange])])
        return {path: edit.render() for path, edit in edits.items()}


def test_a_query_names_an_entity_page_by_its_slug(tmp_path: Path) -> None:
    turns = [
        ("user", "The museum tram in Lisbon was full."),
        ("assistant", "Trams there are always busy."),
        ("user", "Lisbon again: the castle at dusk."),
        ("assistant", "A fine view."),
        ("user", "My sister Mary Ann loves that tram."),
        ("assistant", "She should ride it at dawn."),
    ]
    pages = {
        "museum": ("topics/lisbon.md", "Lisbon"),
        "castle": ("topics/lisbon--2.md", "Lisbon"),  # the page continued in a second part
        "Mary Ann": ("topics/mary-ann.md", "Mary Ann"),
    }
    index = _home(tmp_path, turns, _EntityPages(pages))
    assert entity_pages(index, "What happened in lisbon?") == ["topics/lisbon.md", "topics/lisbon--2.md"]
    assert entity_pages(index, "What does Mary Ann love?") == ["topics/mary-ann.md"]
    assert entity_pages(index, "What does Mary love?") == []
    assert entity_pages(index, "Lisbón or Mary-Ann?") == [
        "topics/lisbon.md",
        "topics/lisbon--2.md",
        "topics/mary-ann.md",
    ]
    assert entity_pages(index, "the core facts") == []  # the core is no entity's page
    assert slug_of(["Belém", "Tower"]) == "belem-tower"


def test_expansion_lifts_the_named_entitys_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    turns = [
        ("user", "The yellow tram climbs the steep hill."),
        ("assistant", "It is slow but lovely."),
        ("user", "A yellow tram climbs a steep hill."),
        ("assistant", "It is slow but lovely, yes."),
    ]
    # The first exchange is on Lisbon's page although it never says "Lisbon"; the second is not.
    index = _home(tmp_path, turns, _EntityPages({"The yellow": ("topics/lisbon.md", "Lisbon")}))
    query = "which yellow tram climbs the steep hill in Lisbon"
    on = search(index, RecallQuery(query, k=2, floor=0.0))
    monkeypatch.setattr(recall_search, "EXPAND", False)
    off = {h.topic: h.score for h in search(index, RecallQuery(query, k=2, floor=0.0))}
    assert on[0].topic == "topics/lisbon.md"
    scores = {h.topic: h.score for h in on}
    assert scores["topics/lisbon.md"] == pytest.approx(off["topics/lisbon.md"] + BONUS)
    assert scores["topics/notes.md"] == pytest.approx(off["topics/notes.md"])
