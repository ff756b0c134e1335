"""A chat written as one session in two parts, the second two days after the first: what the topic-shape
tests read back (a question and its answer in one block, no block across a session, pages per entity)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dagmem.memory.format import anchor_of
from dagmem.memory.store import FakeClock, FileSessionStore
from dagmem.memory.write import ExtractiveDistiller
from dagmem.memory.writing import write_home

DAY = 86_400.0

Turns = Sequence[tuple[str, str]]


def write_two_parts(
    home: Path, first: Turns, second: Turns, distiller: ExtractiveDistiller
) -> dict[str, str]:
    """Append `first`, then `second` two days later, to session "chat" and write it all (`write --force`);
    returns each turn's anchor -> the part ("1" or "2") it was said in."""
    clock = FakeClock(step=0)
    store = FileSessionStore(home, fsync=False, clock=clock)
    part: dict[str, str] = {}
    for number, turns in (("1", first), ("2", second)):
        for n, (role, text) in enumerate(turns):
            clock.now += 1.0
            node = f"p{number}t{n}"
            store.append("chat", role, text, node_id=node)
            part[anchor_of(f"chat/{node}")] = number
        clock.now += 2 * DAY
    write_home(home, force=True, distiller=distiller)
    return part
