"""`dagmem bench beam`: a tiny chat in BEAM's format (its dates, sessions and plan marks), each form of
evidence a question may give, the scoring on hand-made rankings (all@k / any@k at a turn budget,
stale-first against current@1), and one run through the command (its report's shape, not its figures)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from dagmem.bench import _beam as beam
from dagmem.bench import _beam_data as data
from dagmem.cli import main
from dagmem.memory.errors import InvalidInput
from dagmem.tests._bench_shape import assert_documented_shape


def _turn(ident: int, role: str, content: str, **extra: str) -> dict[str, Any]:
    return {"role": role, "id": ident, "content": content, **extra}


CHAT = [
    {"batch_number": 1, "time_anchor": None, "turns": [
        [_turn(0, "user", "I live in Paris and I work as a baker at Le Petit Four. ->-> 1,1",
               time_anchor="March-03-2024", index="1,1"),
         _turn(1, "assistant", "Paris is a fine city for a baker.")],
        [_turn(2, "user", "My sister Anna plays the cello in the Lyon orchestra. ->-> 1,2", index="1,2"),
         _turn(3, "assistant", "A cellist in the family, wonderful.")],
    ]},
    {"batch_number": 2, "time_anchor": None, "turns": [
        [_turn(4, "user", "I moved to Berlin last month, and now I bake sourdough at Brotzeit. ->-> 2,1",
               time_anchor="May-02-2024", index="2,1"),
         _turn(5, "assistant", "Berlin has a great sourdough scene.")],
        [_turn(6, "user", "Planning a weekend trip to Hamburg with my sister Anna ->-> 2,N/A", index="2,N/A"),
         _turn(7, "assistant", "Hamburg's harbour is worth a morning.")],
    ]},
]  # fmt: skip

QUESTIONS = {
    "knowledge_update": [{"question": "Where do I live now?", "answer": "Berlin",
                          "source_chat_ids": {"original_info": [0], "updated_info": [4]}}],
    "information_extraction": [{"question": "Which instrument does Anna play?", "source_chat_ids": [2]}],
    "temporal_reasoning": [{"question": "When did I move to Berlin?",
                            "conversation_references": ["Information Update: I moved to Berlin last month"]}],
    "event_ordering": [{"question": "In what order did I mention Anna and Hamburg?",
                        "source_chat_ids": [[2], [6]]}],
    "abstention": [{"question": "What is my dog's name?", "plan_reference": "Batch 1, Bullet 3"}],
}  # fmt: skip


def _write(root: Path) -> Path:
    chat = root / "500K" / "7"
    (chat / "probing_questions").mkdir(parents=True)
    (chat / "chat.json").write_text(json.dumps(CHAT), encoding="utf-8")
    (chat / "probing_questions" / "probing_questions.json").write_text(
        json.dumps(QUESTIONS), encoding="utf-8"
    )
    return chat


def _day(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()


def test_a_chat_loads_with_its_dates_sessions_and_without_the_plan_marks(tmp_path: Path) -> None:
    directory = _write(tmp_path)
    assert data.chat_dirs(tmp_path) == [directory]
    chat = data.load_chat(directory, tmp_path)
    assert chat.name == "500K-7"
    assert [t.node for t in chat.turns] == [f"t{i}" for i in range(8)]
    assert [t.session for t in chat.turns] == ["500K-7-01"] * 4 + ["500K-7-02"] * 4
    assert [t.when for t in chat.turns] == [_day("2024-03-03")] * 4 + [_day("2024-05-02")] * 4
    assert chat.turns[0].text == "I live in Paris and I work as a baker at Le Petit Four."
    assert chat.turns[6].text == "Planning a weekend trip to Hamburg with my sister Anna"
    assert (chat.turns[0].index, chat.turns[1].index) == ("1,1", None)
    assert [q.category for q in chat.questions] == list(QUESTIONS)
    with pytest.raises(InvalidInput, match="DAGMEM_BEAM"):
        data.beam_root(None, {"DAGMEM_BEAM": str(tmp_path / "missing")})
    assert data.beam_root(None, {"DAGMEM_BEAM": str(tmp_path)}) == tmp_path


@pytest.fixture
def turns(tmp_path: Path) -> tuple[data.Turn, ...]:
    return data.load_chat(_write(tmp_path / "beam"), tmp_path / "beam").turns


def _map(turns: tuple[data.Turn, ...], category: str, **entry: Any) -> data.Question:
    return data.map_evidence(category, {"question": "?", **entry}, turns)


def test_each_form_of_evidence_maps_to_turns(turns: tuple[data.Turn, ...]) -> None:
    ids = _map(turns, "information_extraction", source_chat_ids=[2, [4, [6]], 99])  # nested; 99 is no turn
    assert (ids.groups, ids.form) == ((frozenset({"t2"}), frozenset({"t4"}), frozenset({"t6"})), "ids")
    assert _map(turns, "x", index="1,2").groups == (frozenset({"t2"}),)
    refs = _map(
        turns, "x", conversation_references=["Batch 2, Turn 1", "1,2", "Session 4: moved to Berlin", "0, 6"]
    )
    assert refs.groups == tuple(frozenset({n}) for n in ("t4", "t2", "t0", "t6"))
    assert refs.form == "index+references"
    # "Session 1" names an id whose turn does not hold its description: no evidence, not a quote either.
    assert _map(turns, "x", conversation_references=["Session 1: moved to Berlin"]).form == "none"
    quote = _map(
        turns, "x", conversation_reference="Turn 3: I moved to Berlin last month, and now I bake sourdough"
    )
    assert (quote.groups, quote.form) == ((frozenset({"t4"}),), "quotes")
    assert (
        _map(turns, "x", conversation_references=["something nobody said about volcanoes here"]).groups == ()
    )
    assert _map(turns, "abstention", plan_reference="Batch 1, Bullet 3").form == "none"


def test_an_update_in_two_parts_has_an_older_and_a_newer_statement_by_position(
    turns: tuple[data.Turn, ...],
) -> None:
    update = _map(turns, "knowledge_update", source_chat_ids={"original_info": [0], "updated_info": [4]})
    assert (update.old, update.new) == (frozenset({"t0"}), frozenset({"t4"}))
    # BEAM's contradictions name the later statement first at times: the older is the one said first.
    flipped = _map(
        turns, "contradiction_resolution", source_chat_ids={"first_statement": [4], "second_statement": [0]}
    )
    assert (flipped.old, flipped.new) == (frozenset({"t0"}), frozenset({"t4"}))
    one = _map(turns, "knowledge_update", source_chat_ids={"original_info": [0], "updated_info": []})
    assert (one.groups, one.old) == ((frozenset({"t0"}),), None)
    same = _map(turns, "knowledge_update", source_chat_ids={"original_info": [0], "updated_info": [0]})
    assert same.old is None
    assert _map(turns, "information_extraction", source_chat_ids={"a": [0], "b": [4]}).old is None
    agreeing = _map(
        turns,
        "knowledge_update",
        source_chat_ids=[4],
        conversation_references=["I moved to Berlin last month"],
    )
    assert agreeing.agrees is True


def test_the_turn_budget_the_hits_and_stale_first_on_hand_made_rankings() -> None:
    question = data.Question("knowledge_update", "?", (frozenset({"a"}), frozenset({"b"})), "ids",
                             old=frozenset({"a"}), new=frozenset({"b"}))  # fmt: skip
    hits = [["x"], ["a", "y"], ["b"]]  # the turns, in order: x, a, y, b
    asked = beam.ask("c", question, hits, ["b", "z", "a"], (True, False))
    assert asked.every == (False, True, True)  # all@1 / all@5 / all@10 at a turn budget
    assert asked.some == (False, True, True)
    assert asked.hits_every == (False, True, True)  # the first 5 hits hold both
    assert (asked.base_every, asked.base_some) == ((False, True, True), (True, True, True))
    assert asked.stale == "stale"  # the first hit citing either statement cites only the older one
    assert asked.base_stale == "current"
    assert (asked.old_superseded, asked.old_superseded_by_new) == (True, False)
    both = beam.ask("c", question, [["a", "b"]], [], None)
    assert (both.stale, both.base_stale, both.old_superseded) == ("current", "miss", None)
    rows = [asked, both]
    out = beam.summarise(rows, [question, data.Question("abstention", "?", (), "none")])
    assert (out["all@1"], out["all@5"], out["any@1"], out["baseline_any@1"]) == (0.0, 1.0, 0.5, 0.5)
    assert (out["stale_first"], out["current_at_1"], out["old_superseded"]) == (0.5, 0.5, 0.5)
    assert out["unmapped"] == {"abstention": 1}


def test_dagmem_bench_beam_writes_a_chat_and_reports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path / "beam")
    out = tmp_path / "out"
    assert main(["bench", "beam", "--data", str(tmp_path / "beam"), "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert_documented_shape(printed, out)
    raw = printed["raw"]["beam"]
    assert (raw["questions_total"], raw["questions"], raw["unmapped"]) == (5, 4, {"abstention": 1})
    assert raw["forms"] == {"ids": 3, "none": 1, "quotes": 1}
    assert set(raw["per_category"]) == set(QUESTIONS) - {"abstention"}
    assert raw["per_category"]["knowledge_update"]["judged"] == 1
    assert raw["chats"]["500K-7"]["turns"] == 8
    assert raw["chats"]["500K-7"]["sessions"] == 2
    first = printed["results"][0]
    assert (first["value"], first["baseline"], first["goal"]) == (
        raw["all@10"],
        raw["baseline_all@10"],
        "ratio >= 1",
    )
    assert main(["bench", "beam", "runtime"]) != 0  # beam runs on its own
