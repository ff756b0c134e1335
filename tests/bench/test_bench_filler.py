"""The benchmarks' filler text states nothing about the user: no fact a later turn could supersede."""

from __future__ import annotations

import random

from dagmem.bench import _kit
from dagmem.memory.write._fact_keys import keys_of


def test_filler_turns_with_numbers_state_no_fact_a_later_turn_could_supersede() -> None:
    # "budget 80946" in one turn and "budget 32745" in a later one is a changed quantity: currency would
    # supersede the older block, and `bench write`'s fixture writes would touch older topic files.
    rng = random.Random(7)
    stated = [
        keys for _ in range(3_000) if (keys := keys_of(_kit.topic_text(rng, "Bavoku", 3, numbers=True)))
    ]
    assert stated == []
