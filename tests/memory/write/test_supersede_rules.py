"""The supersession rule on the cases the issue names: cues, slots, whole blocks, the reason."""

from __future__ import annotations

import pytest

from dagmem.memory.format import ArchiveRecord
from dagmem.memory.text import user_text
from dagmem.memory.write._core_facts import read_core_facts
from dagmem.memory.write._slots import Fact, facts_of
from dagmem.memory.write._supersede import cue_of, supersession


def test_the_issue_example_moves_the_user_to_berlin_and_retracts_vegetarian() -> None:
    move = "Update: I moved to Berlin last month, I no longer live in Paris."
    assert supersession("I live in Paris", move) == "update"
    assert (
        supersession("I am vegetarian.", "Sorry, scratch that: I am not vegetarian, I eat fish.")
        == "retraction"
    )


def test_a_block_of_two_facts_is_not_hidden_by_a_change_of_one() -> None:
    move = "Update: I moved to Berlin last month, I no longer live in Paris."
    assert supersession("I live in Paris and I work as a nurse.", move) is None


def test_a_sentence_of_two_facts_is_filed_as_one_core_fact_per_clause() -> None:
    record = ArchiveRecord("s1", "n1", "user", 1, 1_750_000_000.0, "I live in Paris and I work as a nurse.")
    facts, whole = read_core_facts([record])
    assert [f.text for f in facts] == ["I live in Paris", "I work as a nurse."]
    move = ArchiveRecord(
        "s2", "n1", "user", 1, 1_750_000_001.0, "Update: I moved to Berlin, I no longer live in Paris."
    )
    assert [f.text for f in read_core_facts([move])[0]] == ["I moved to Berlin"]  # the negation only retracts
    assert whole == {record.source_id}


def test_a_turn_with_more_than_facts_is_not_wholly_core() -> None:
    record = ArchiveRecord("s1", "n1", "user", 1, 1_750_000_000.0, "I live in Porto. What should I cook?")
    facts, whole = read_core_facts([record])
    assert [f.text for f in facts] == ["I live in Porto."]
    assert whole == set()


@pytest.mark.parametrize(
    ("sentence", "cue"),
    [
        ("I now live in Berlin.", "update"),
        ("I don't eat meat any more.", "update"),
        ("We switched to tea instead.", "update"),
        ("Correction: it is Tuesday.", "retraction"),
        ("I was wrong, it is Tuesday.", "retraction"),
        ("我现在住在柏林。", "update"),
        ("其实我叫李明。", "retraction"),
        ("I haven't moved to Berlin.", None),
        ("I live in Berlin.", None),
    ],
)
def test_cues_in_english_and_chinese(sentence: str, cue: str | None) -> None:
    assert cue_of(sentence) == cue


def test_slots_read_first_person_only() -> None:
    assert facts_of("I live in Paris") == [Fact("residence", "paris")]
    assert facts_of("我搬到柏林了") == [Fact("residence", "柏林")]
    assert facts_of("My friend moved to Berlin") == []
    assert facts_of("我的朋友搬到柏林了") == []


def test_a_new_number_for_a_slot_is_a_cue_of_its_own_but_not_within_a_topic() -> None:
    assert supersession("I am 30 years old.", "I am 31 years old.") == "update"
    # within a topic a number alone is no cue (two notes, two rooms); said with a cue it is a change
    note, later = "Note 3: the kettle needs descaling.", "Note 9: the kettle needs descaling."
    assert supersession(note, later, same_topic=True) is None
    pass_, dearer = "The tram pass costs 40 euros.", "The tram pass costs 45 euros now."
    assert supersession(pass_, dearer, same_topic=True) == "update"
    # across topics a lexical match is not enough: only a slot says it is the same fact
    assert supersession(pass_, dearer) is None


def test_the_user_words_of_a_claim() -> None:
    assert user_text("User: “I live in Paris\\.” Assistant: “Nice\\!”") == "I live in Paris."
    assert user_text("Assistant: “I live in Paris.”") == ""
    assert user_text("The user lives in Paris.") == "The user lives in Paris."
