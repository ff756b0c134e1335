"""Supersession across topic files (`_across`): the rule on pairs, and through a home's writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmem.memory.format import parse_topic
from dagmem.memory.write._across import replaces_keys

DATA = Path(__file__).parent / "data" / "supersession_pairs.jsonl"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Paris.", "We left Paris and settled in Lisbon."),
        ("I live in Paris.", "Since the move I live in Berlin."),
        ("I drive a Kia Niro.", "Got a new car: a Tesla."),
        ("My rent is 800 euros a month.", "The landlord raised it: 900 euros a month."),
        ("Maya lives in Porto.", "My sister Maya moved to Lisbon."),
        ("I moved to Berlin.", "I moved back to Paris."),
        ("我上班通勤要45分钟。", "现在通勤只要55分钟。"),
        ("我表妹小美是会计。", "我表妹小美现在当厨师了。"),
        ("I work at Microsoft.", "I switched jobs and now work at Google."),
        ("I drive an old Honda Civic.", "I replaced my Civic with a Mazda 3."),
        ("I earn 52k a year.", "After the promotion my salary is 61k."),
    ],
)
def test_a_newer_value_of_the_same_fact_supersedes(old: str, new: str) -> None:
    assert replaces_keys(old, new) is not None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Paris.", "My sister Maya moved to Lisbon."),  # another subject
        ("Maya lives in Porto.", "I moved to Lisbon."),  # the user, not Maya
        ("Tom lives in Madrid.", "Anna moved to Madrid."),  # two other people
        ("I live in Paris.", "I switched to green tea."),  # another attribute
        ("I live in Paris.", "I love living in Berlin for the weekend."),  # no cue
        ("I like coffee.", "I now also like tea."),  # an addition
        ("I work as a nurse.", "Now I work as a nurse at a bigger hospital."),  # the same value
        ("I moved to Berlin last month.", "Big news, we just moved to Berlin!"),  # said again
        ("My rent is 800 euros.", "My rent is 800 euros, still."),  # the same number
        ("I live in Paris and I work as a nurse.", "I moved to Berlin."),  # the job is still true
        ("I live in Paris.", "Do I still live in Paris?"),  # a question
        ("I live in Paris.", "I might move to Berlin next year."),  # a plan
        ("I'm a lawyer.", "My wife now works as a chef."),  # the wife's job
        ("I weigh 82 kg.", "My dog weighs 12 kg now."),  # the dog's weight
        ("I run 20 km a week.", "I ran 5 km today."),  # one run, not the weekly distance
        ("I drive a Honda Civic.", "I rented a Mazda for the weekend."),  # no change of car
    ],
)
def test_no_supersession_between_different_facts_or_without_a_change(old: str, new: str) -> None:
    assert replaces_keys(old, new) is None


def test_the_rule_across_files_is_precise_on_the_labelled_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    """The labelled pairs of the rule within a file (`data/supersession_pairs.jsonl`), read by the rule
    across files: it must never fire on a hard negative; its recall is printed (the lexical same-topic
    changes are the other rule's)."""
    rows = [json.loads(line) for line in DATA.read_text("utf-8").splitlines() if line.strip()]
    fired = [(replaces_keys(str(r["old"]), str(r["new"])) is not None, r["label"] is not None) for r in rows]
    tp = sum(got and truth for got, truth in fired)
    fp = sum(got and not truth for got, truth in fired)
    fn = sum(truth and not got for got, truth in fired)
    with capsys.disabled():
        print(
            f"\nrule across files ({len(rows)} pairs): precision {tp / max(1, tp + fp):.3f} recall {tp / max(1, tp + fn):.3f}"
        )
    assert fp <= 0.05 * max(1, tp + fp)
    assert tp >= 40  # a rule that never fires would be "precise"


pytestmark = pytest.mark.anyio


def _blocks(home: Path) -> dict[str, tuple[str, bool]]:
    """claim -> (its topic file, superseded?) over every topic file of the home."""
    out: dict[str, tuple[str, bool]] = {}
    for path in sorted((home / "memory" / "topics").glob("*.md")):
        if path.name == "index.md":
            continue
        for block in parse_topic(path.read_text("utf-8"), f"topics/{path.name}").blocks:
            out[block.claim] = (path.name, block.superseded is not None)
    return out


def _state(blocks: dict[str, tuple[str, bool]], words: str) -> list[bool]:
    return [sup for claim, (_, sup) in blocks.items() if words in claim]


async def test_a_newer_value_supersedes_the_older_block_in_another_topic_file(tmp_path: Path) -> None:
    import dagmem

    async with dagmem.Runtime.open(tmp_path, token_threshold=40) as rt:
        await rt.append("s1", "user", "My sister Maya lives in Porto, near the river.")
        await rt.append("s1", "assistant", "Porto is lovely.")
        await rt.end_session("s1")
        await rt.flush(force=True)
        await rt.append("s2", "user", "My sister Maya moved to Lisbon last month.")
        await rt.append("s2", "assistant", "Lisbon, how exciting.")
        await rt.append("s2", "user", "I drive a Volvo to work.")
        await rt.append("s2", "assistant", "Noted.")
        await rt.end_session("s2")
        await rt.flush(force=True)
    blocks = _blocks(tmp_path)
    porto = [where for claim, (where, _) in blocks.items() if "Porto" in claim]
    lisbon = [where for claim, (where, _) in blocks.items() if "Lisbon" in claim]
    assert porto
    assert lisbon
    assert set(porto).isdisjoint(lisbon)
    assert _state(blocks, "Porto") == [True]
    assert _state(blocks, "Lisbon") == [False]
    assert _state(blocks, "Volvo")
    assert not any(_state(blocks, "Volvo"))


async def test_moving_back_the_latest_value_wins(tmp_path: Path) -> None:
    import dagmem

    async with dagmem.Runtime.open(tmp_path, token_threshold=30) as rt:
        for session, text in (
            ("s1", "I live in Paris with my cat."),
            ("s2", "Update: I relocated to Berlin for work."),
            ("s3", "I moved back to Paris in May."),
        ):
            await rt.append(session, "user", text)
            await rt.append(session, "assistant", "Got it.")
            await rt.end_session(session)
            await rt.flush(force=True)
        core = await rt.core_async()
    blocks = _blocks(tmp_path)
    assert _state(blocks, "Berlin")
    assert all(_state(blocks, "Berlin"))
    assert _state(blocks, "moved back to Paris")
    assert not any(_state(blocks, "moved back to Paris"))
    assert "Berlin" not in core


async def test_the_slot_index_is_a_cache_deleting_it_changes_nothing(tmp_path: Path) -> None:
    import dagmem

    async with dagmem.Runtime.open(tmp_path, token_threshold=30) as rt:
        await rt.append("s1", "user", "I work as a nurse in the city clinic.")
        await rt.append("s1", "assistant", "Thanks.")
        await rt.end_session("s1")
        await rt.flush(force=True)
    slots = tmp_path / "memory" / ".dagmem" / "slots.sqlite3"
    assert slots.is_file()
    slots.unlink()
    async with dagmem.Runtime.open(tmp_path, token_threshold=30) as rt:
        await rt.append("s2", "user", "I changed jobs, these days I'm a teacher.")
        await rt.append("s2", "assistant", "Congratulations.")
        await rt.end_session("s2")
        await rt.flush(force=True)
    blocks = _blocks(tmp_path)
    assert _state(blocks, "nurse")
    assert all(_state(blocks, "nurse"))
    assert _state(blocks, "teacher")
    assert not any(_state(blocks, "teacher"))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Anna's rent is 2270 euros now.", "Omar's rent is 1670 euros now."),  # two people
        ("我表妹小美搬到厦门了。", "我表妹小美现在当律师了。"),  # one person, two facts
    ],
)
def test_within_a_topic_two_facts_of_different_keys_are_never_one_changed(old: str, new: str) -> None:
    from dagmem.memory.write._supersede import supersession

    assert supersession(old, new, same_topic=True) is None


async def test_a_correction_in_the_same_batch_supersedes_the_exchange_filed_after_it(tmp_path: Path) -> None:
    import dagmem

    async with dagmem.Runtime.open(tmp_path, token_threshold=10_000) as rt:  # one batch: the boundary write
        await rt.append("s", "user", "I am vegetarian.")
        await rt.append("s", "assistant", "Okay.")
        await rt.append("s", "user", "Sorry, scratch that: I am not vegetarian, I eat fish.")
        await rt.end_session("s")
        await rt.flush(force=True)
        hits = await rt.recall("am I vegetarian?", k=5)
    blocks = _blocks(tmp_path)
    assert _state(blocks, "I am vegetarian.")  # its core fact and its exchange
    assert all(_state(blocks, "I am vegetarian."))
    assert "fish" in hits[0].text
    assert all(h.status == "superseded" for h in hits if "I am vegetarian." in h.text)


async def test_two_facts_answered_in_one_exchange_are_two_blocks(tmp_path: Path) -> None:
    import dagmem

    async with dagmem.Runtime.open(tmp_path, token_threshold=10_000) as rt:
        await rt.append("s1", "user", "My sister Anna pays 1500 euros rent.")
        await rt.append("s1", "assistant", "That is a lot. And what do you drink in the morning?")
        await rt.append("s1", "user", "I drink green tea every morning.")
        await rt.end_session("s1")
        await rt.append("s2", "user", "Anna's rent is 2270 euros now.")
        await rt.append("s2", "assistant", "Understood.")
        await rt.end_session("s2")
        await rt.flush(force=True)
    blocks = _blocks(tmp_path)
    assert not [c for c in blocks if "1500" in c and "green tea" in c]  # each fact's turn in its own block
    assert _state(blocks, "1500 euros") == [True]  # the older rent, superseded whole
    assert _state(blocks, "green tea")
    assert not any(_state(blocks, "green tea"))  # the drink is still true
