"""Fact keys (`_fact_keys`): which subject and attribute a user's sentence states, never its value."""

from __future__ import annotations

import pytest

from dagmem.memory.write._fact_keys import keys_of


def _keys(text: str) -> set[str]:
    return {fact.key for fact in keys_of(text)}


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("I live in Paris.", "user/residence"),
        ("We left Paris and settled in Lisbon.", "user/residence"),
        ("Home for me is Oslo.", "user/residence"),
        ("I'm a lawyer by trade.", "user/job"),
        ("I switched careers, I'm a chef now.", "user/job"),
        ("Got a new car: a Tesla.", "user/car"),
        ("The landlord raised it: 900 euros a month.", "user/rent"),
        ("我住在北京。", "user/residence"),
        ("现在通勤只要55分钟。", "user/commute"),
        ("My sister Maya moved to Lisbon.", "maya/residence"),
        ("Maya lives in Porto.", "maya/residence"),
        ("My sister no longer lives in Paris.", "sister/residence"),
        ("我表妹小美是会计。", "小美/job"),
    ],
)
def test_a_sentence_states_its_subjects_attribute(text: str, key: str) -> None:
    assert key in _keys(text)


@pytest.mark.parametrize(
    "text",
    [
        "Where do I live?",  # a question states nothing
        "If I moved to Berlin I would cycle more.",  # a hypothetical
        "She moved to Rome.",  # whose fact, the sentence does not say
        "Tesla raised its prices.",  # about a company, not the user
    ],
)
def test_questions_hypotheticals_and_others_state_no_user_key(text: str) -> None:
    assert not {k for k in _keys(text) if k.startswith("user/")}


def test_a_quantity_needs_a_number_and_a_change_its_cue() -> None:
    (rent,) = keys_of("My rent went up to 950 euros.")
    assert rent.key == "user/rent"
    assert rent.numbers == {"950"}
    assert rent.cue
    assert not keys_of("I hate paying rent.")  # no number: no quantity stated
    (plain,) = keys_of("I live in Paris.")
    assert not plain.cue


def test_an_addition_or_a_still_is_no_change() -> None:
    assert not any(fact.cue for fact in keys_of("I now also drink green tea."))
    assert not any(fact.cue for fact in keys_of("I am still vegetarian, actually."))
