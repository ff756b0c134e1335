"""A word that names nothing never titles a page, however often an exchange says it ("now" was one a
LoCoMo write picked as a topic: said twice in one turn and again in the reply)."""

from __future__ import annotations

from dagmem.memory.format import ArchiveRecord
from dagmem.memory.write import FILLER_WORDS
from dagmem.memory.write._subjects import SubjectPicker


def _record(n: int, role: str, text: str) -> ArchiveRecord:
    return ArchiveRecord("chat", f"t{n}", role, n, 1_750_000_000.0 + n, text)


def test_now_is_filler_and_titles_no_page() -> None:
    assert "now" in FILLER_WORDS
    block = [
        _record(0, "user", "Right now the garden is my focus, now more than ever."),
        _record(1, "assistant", "Why the garden now?"),
    ]
    subjects = SubjectPicker([block], lambda _slug: False, str.casefold, frozenset()).subjects()
    assert subjects == ["garden"]
