"""A turn longer than `READ_CHARS` (a pasted document or log) is read for facts only in its first part;
all of it is still archived, cited and recalled."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmem import Runtime
from dagmem.memory.format import scan_archive
from dagmem.memory.write._slots import READ_CHARS

pytestmark = pytest.mark.anyio


async def test_a_long_turn_states_facts_only_in_its_first_part_and_is_kept_whole(tmp_path: Path) -> None:
    paste = "".join(f"2026-11-30 12:00:{i % 60:02d} worker {i} flushed its queue\n" for i in range(700))
    text = f"I live in Paris.\n{paste}I work as a nurse."
    assert text.index("nurse") > READ_CHARS > text.index("Paris")
    async with Runtime.open(tmp_path) as rt:
        big = await rt.append("s", "user", text)
        await rt.append("s", "assistant", "That is a long log.")
        await rt.flush(force=True)
        core = await rt.core_async() or ""
        hits = await rt.recall("nurse", k=5)
    assert "I live in Paris" in core
    assert "nurse" not in core  # said past the part read for facts: in the paste, not a statement
    # The whole turn is archived, and recall finds its end (the index holds the whole text).
    frames = scan_archive((tmp_path / "memory" / "sources" / "s.md").read_bytes(), "s").frames
    assert [f.content for f in frames if f.role == "user"] == [text]
    assert any(e.node == big for hit in hits if hit.topic != "topics/core.md" for e in hit.evidence)
