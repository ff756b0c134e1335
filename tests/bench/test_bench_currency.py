"""`dagmem bench currency`: the generator's truth, the metrics on hand-checked rankings, and a tiny real run
through the command (its figures are not judged here, only their shape and that they add up)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmem.bench import _currency as currency
from dagmem.bench import _currency_data as data
from dagmem.tests._bench_shape import quick_report


def _fork_workload() -> data.Workload:
    """Paris (s1), then Berlin (s2), then in s3 an edited prompt: "Lisbon" edited to "Kyoto"."""
    w = data.Workload("hand")
    w.slots["user:city"] = data.Slot("user:city", "city", "update", True, "en", ("where do I live?",))
    add = w.turns.append
    add(
        data.Turn(
            "s1", "a", "user", "I live in Paris.", None, states=(("user:city", "Paris"),), event="first"
        )
    )
    add(
        data.Turn(
            "s2", "b", "user", "I moved to Berlin.", None, states=(("user:city", "Berlin"),), event="update"
        )
    )
    add(data.Turn("s3", "c", "user", "Plan a trip.", None))
    add(
        data.Turn(
            "s3",
            "d",
            "user",
            "Lisbon, I live there now.",
            "c",
            states=(("user:city", "Lisbon"),),
            event="edited",
        )
    )
    add(data.Turn("s3", "e", "assistant", "Lisbon it is.", "d"))
    add(
        data.Turn(
            "s3",
            "f",
            "user",
            "Kyoto, I live there now.",
            "c",
            states=(("user:city", "Kyoto"),),
            event="edited",
        )
    )
    add(data.Turn("s3", "g", "user", "Side task.", "c", spawned=True))
    w.forks["s3"] = [(("d", "f"), 1)]
    return w  # fmt: skip


def test_the_truth_follows_the_head_except_for_a_reader_inside_the_left_branch() -> None:
    w = _fork_workload()
    everyone = w.truth("user:city", (None, None))
    assert everyone.current == {("s3", "f")}
    assert everyone.stale == {("s1", "a"), ("s2", "b"), ("s3", "d")}
    assert everyone.event == "edited"
    assert w.truth("user:city", ("s1", "a")) == everyone  # another session's tip: the head's view
    assert w.truth("user:city", ("s3", "g")).current == {("s3", "f")}  # a side branch is no alternative
    inside = w.truth("user:city", ("s3", "e"))  # the edited-away branch's own tip: Lisbon is its value
    assert inside.current == {("s3", "d")}
    assert inside.stale == {("s1", "a"), ("s2", "b"), ("s3", "f")}
    assert [w.reader_kind(r) for r in [(None, None), ("probe", None), ("s3", "f"), ("s3", "e")]] == [
        "nobody", "another session", "a tip", "a left tip"
    ]  # fmt: skip
    assert set(w.leaves("s3")) == {"e", "f", "g"}


def test_first_citing_judges_the_first_hit_that_cites_any_statement_of_the_fact() -> None:
    truth = data.Truth(frozenset({("s3", "f")}), frozenset({("s1", "a"), ("s2", "b")}), "update")
    noise = {("s9", "x")}
    assert currency.first_citing([noise, {("s1", "a")}, {("s3", "f")}], truth) == "stale"
    assert currency.first_citing([noise, {("s3", "f"), ("s1", "a")}, {("s1", "a")}], truth) == "current"
    assert currency.first_citing([noise, set()], truth) == "miss"
    assert currency.first_citing([], truth) == "miss"


def test_summarise_counts_rates_on_a_hand_checked_case() -> None:
    def q(
        memory: currency.Outcome, baseline: currency.Outcome, wrong: bool | None, reader: str
    ) -> currency.Question:
        return currency.Question("user:city", "city", "update", reader, memory, baseline, wrong)

    rows = [
        q("current", "stale", False, "nobody"),
        q("current", "current", None, "nobody"),
        q("stale", "stale", True, "a tip"),
        q("miss", "current", False, "a tip"),
    ]
    out = currency.summarise(rows, {"stale": 1, "covered": 1, "facts": 4})
    assert out["questions"] == 4
    assert (out["current_at_1"], out["stale_first"], out["miss"]) == (0.5, 0.25, 0.25)
    assert (out["baseline_current_at_1"], out["baseline_stale_first"]) == (0.5, 0.5)
    assert (out["wrongly_superseded"], out["labelled_questions"]) == (pytest.approx(1 / 3, abs=1e-4), 3)
    assert (out["core_stale"], out["core_coverage"]) == (1, 0.25)
    assert out["by_reader"]["a tip"]["current_at_1"] == 0.0
    assert out["by_reader"]["nobody"]["current_at_1"] == 1.0


def test_core_citations_reads_the_turns_each_core_block_links() -> None:
    core = (
        "# Core\n\nUser: “I live in Paris.” [^c-1] ^b-00000001\n"
        "[^c-1]: Time: `2026-01-02`; Sources: [user s1/a](sources/s1.md#src-0000000000000001)\n\n"
        "User: “I am vegan.” [^c-2] ^b-00000002\n"
        "[^c-2]: Time: `2026-01-03`; Sources: [user s2/b](sources/s2.md#src-0000000000000002), "
        "[user s2/x](sources/s2.md#src-00000000000000ff)\n"
    )
    anchors = {"src-0000000000000001": ("s1", "a"), "src-0000000000000002": ("s2", "b")}
    assert currency.core_citations(core, anchors) == [{("s1", "a")}, {("s2", "b")}]


def test_the_generator_is_seeded_varied_and_covers_every_kind_of_change() -> None:
    assert data.generate(7, 0) == data.generate(7, 0)
    assert data.generate(7, 0) != data.generate(7, 1)
    homes = [data.generate(7, i) for i in range(8)]
    events = {t.event for w in homes for t in w.turns}
    assert {"first", "update", "numeric", "retraction", "edited", "retry", "spawned", "child"} <= events
    assert {s.lang for w in homes for s in w.slots.values()} == {"en", "zh"}
    assert any(not s.first_person for w in homes for s in w.slots.values())  # distractors
    updates = {t.text for w in homes for t in w.turns if t.event == "update"}
    assert len(updates) > 20
    for w in homes:  # every slot has a current value for every one of its readers
        for key in w.slots:
            for reader in w.readers(key):
                truth = w.truth(key, reader)
                assert truth.current
                assert not truth.current & truth.stale


def test_dagmem_bench_currency_runs_a_tiny_home_through_the_runtime(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(currency, "QUICK_HOMES", 1)
    monkeypatch.setattr(currency, "SESSIONS", 3)
    printed = quick_report("currency", tmp_path, capsys)
    raw = printed["raw"]["currency"]
    assert raw["homes"] == 1
    assert raw["questions"] > 10
    assert raw["current_at_1"] + raw["stale_first"] + raw["miss"] == pytest.approx(1.0, abs=1e-3)
    assert sum(row["questions"] for row in raw["by_reader"].values()) == raw["questions"]
    assert sum(row["questions"] for row in raw["by_event"].values()) == raw["questions"]
    names = [r["name"] for r in printed["results"]]
    for prefix in ("currency: current@1 (", "currency: stale-first rate", "currency: current facts labelled",
                   "currency: stale facts in core.md", "currency: core coverage"):  # fmt: skip
        assert any(name.startswith(prefix) for name in names), prefix
    first = printed["results"][0]
    assert (first["value"], first["baseline"]) == (raw["current_at_1"], raw["baseline_current_at_1"])
    assert first["goal"] == "value >= 0.9"


def _core_of(*blocks: tuple[str, str]) -> str:
    """core.md with one block per (claim, anchor)."""
    body = "".join(
        f"User: “{claim}” [^c-{n}] ^b-0000000{n}\n"
        f"[^c-{n}]: Time: `2026-01-02`; Sources: [user s1/x](sources/s1.md#{anchor})\n\n"
        for n, (claim, anchor) in enumerate(blocks, 1)
    )
    return "# Core\n\n" + body


def test_core_staleness_counts_a_block_stale_only_for_the_slot_whose_old_value_it_says() -> None:
    from dagmem.memory.format import anchor_of

    turns = [
        data.Turn(
            "s1",
            "a",
            "user",
            "I drive a Volvo and I'm vegetarian.",
            None,
            states=(("user:car", "Volvo"), ("user:diet", "vegetarian")),
            event="first",
        ),
        data.Turn(
            "s1",
            "b",
            "user",
            "I sold the Volvo and bought a Kia.",
            "a",
            states=(("user:car", "Kia"),),
            event="update",
        ),
    ]
    slots = {
        key: data.Slot(key, key.split(":")[1], "update", True, "en", ("?",))
        for key in ("user:car", "user:diet")
    }
    workload = data.Workload("w", turns=turns, slots=slots)
    a, b = anchor_of("s1/a"), anchor_of("s1/b")
    # The diet clause of the two-slot turn is current; the new car is cited: nothing stale.
    fresh = currency.core_counts(workload, _core_of(("I'm vegetarian.", a), ("I bought a Kia.", b)))
    assert fresh == {"stale": 0, "covered": 2, "facts": 2}
    # The car clause of the same turn says the old car: stale for the car.
    stale = currency.core_counts(workload, _core_of(("I drive a Volvo", a), ("I'm vegetarian.", a)))
    assert stale == {"stale": 1, "covered": 1, "facts": 2}
