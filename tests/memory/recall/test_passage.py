"""A hit quotes the passage of its text that answers the query, not the first few hundred characters of a
long turn; a short text is quoted whole; windows keep their order and say where text was left out."""

from __future__ import annotations

from pathlib import Path

from dagmem import FileSessionStore, render_context
from dagmem.memory.recall import RecallIndex, RecallQuery, find_hits
from dagmem.memory.recall._passage import PASSAGE_CHARS, passage
from dagmem.memory.writing import write_home

FILLER = "The session went through the modules one by one and looked at each of them in turn. " * 30


def test_the_passage_is_where_the_query_terms_are() -> None:
    text = FILLER + "The review session passes SPOTTER_REVIEW_TOKEN and SPOTTER_PORT to Claude. " + FILLER
    found = passage(text, {"spotter_review_token": 5.0, "spotter_port": 4.0, "review": 1.0})
    assert "SPOTTER_REVIEW_TOKEN and SPOTTER_PORT" in found
    assert found.startswith("… ")
    assert found.endswith(" …")
    assert len(found) <= PASSAGE_CHARS + 10


def test_two_places_of_an_answer_are_both_quoted_in_order() -> None:
    text = "We run mix credo --strict first. " + FILLER + "Then mix compile --warnings-as-errors must pass."
    found = passage(text, {"credo": 3.0, "compil": 3.0, "warn": 2.0})
    assert found.index("credo") < found.index("warnings-as-errors")
    assert " … " in found


def test_a_short_text_is_quoted_whole_and_no_match_gives_its_start() -> None:
    assert passage("Short answer.", {"answer": 1.0}) == "Short answer."
    found = passage(FILLER, {"nothing": 1.0})
    assert FILLER.startswith(found.removesuffix(" …"))


def test_the_injected_context_quotes_the_answer_deep_in_a_long_turn(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    store.append("s", "user", "Summarise what the session did.")
    store.append(
        "s",
        "assistant",
        FILLER + "The test endpoint needs port: 4002 and server: false in config/test.exs. " + FILLER,
    )
    assert [r.outcome for r in write_home(tmp_path, force=True)] == ["written"]
    hits = find_hits(
        RecallIndex.open(tmp_path / "memory"),
        RecallQuery("Which endpoint settings does config/test.exs need?"),
    )
    block = render_context(hits)
    assert "port: 4002 and server: false" in block
