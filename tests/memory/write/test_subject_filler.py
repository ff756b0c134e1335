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


def test_a_name_after_a_filler_adverb_is_spoken_about_and_titles_its_page() -> None:
    """ "Thanks, Sam." and "Hey Mel!" speak to a name; "... was probably Oscar." speaks about one. Only the
    first kind is left out: with every filler word counted as an address, the reply's mentions of Oscar
    were dropped, Oscar looked said in one turn only, and the block went to a word the batch repeats."""
    blocks = [
        [
            _record(0, "user", "The kettle broke again this morning."),
            _record(1, "assistant", "A new kettle is cheap; the old kettle had a good run."),
        ],
        [
            _record(
                2, "user", "Oscar barked all night, so I walked Oscar at dawn. Oscar loves the kettle noise."
            ),
            _record(3, "assistant", "The barking was probably Oscar. The one at the door was always Oscar."),
        ],
        [
            _record(4, "user", "Thanks, Sam. Hey Mel! The kettle is on."),
            _record(5, "assistant", "Enjoy the kettle tea."),
        ],
    ]
    subjects = SubjectPicker(blocks, lambda _slug: False, str.casefold, frozenset()).subjects()
    assert subjects == ["kettle", "Oscar", "kettle"]
