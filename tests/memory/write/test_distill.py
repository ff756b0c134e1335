"""The default extractive distiller: deterministic, cites every record, groups by topic, bounded files."""

from __future__ import annotations

from dagmem.memory.format import ArchiveRecord, anchor_of, parse_topic
from dagmem.memory.write import TOPIC_FILE_LIMIT, BatchInput, ExtractiveDistiller


class Files:
    def __init__(self, files: dict[str, str] | None = None) -> None:
        self.files = dict(files or {})

    def read(self, relpath: str) -> str | None:
        return self.files.get(relpath)

    def size(self, relpath: str) -> int | None:
        text = self.files.get(relpath)
        return None if text is None else len(text.encode())


def records(*texts: str, session: str = "s") -> tuple[ArchiveRecord, ...]:
    return tuple(
        ArchiveRecord(session, f"n{i}", "user" if i % 2 == 0 else "assistant", i, 1_750_000_000.0 + i, text)
        for i, text in enumerate(texts)
    )


def cited(edits: dict[str, str | None]) -> set[str]:
    anchors: set[str] = set()
    for path, text in edits.items():
        assert text is not None
        for block in parse_topic(text, path).blocks:
            for citation in block.citations:
                anchors.update(source.anchor for source in citation.sources)
    return anchors


def test_every_record_is_cited_and_related_turns_share_a_topic() -> None:
    batch = BatchInput(
        "s",
        records(
            "What should I pack for Lisbon in May? Lisbon weather?",
            "For Lisbon in May pack light layers and a rain jacket.",
            "And how do I cook risotto? Risotto for four people.",
            "Toast the risotto rice, add stock slowly, stir, finish with butter.",
        ),
    )
    edits = dict(ExtractiveDistiller().distill(batch, Files()))
    assert sorted(edits) == ["topics/lisbon.md", "topics/risotto.md"]
    assert cited(edits) == {anchor_of(r.source_id) for r in batch.records}
    assert parse_topic(edits["topics/lisbon.md"] or "", "topics/lisbon.md").title == "Lisbon"


def test_the_same_batch_gives_the_same_bytes() -> None:
    batch = BatchInput("s", records("Tell me about tram 28 in Lisbon.", "Tram 28 crosses Alfama and Graça."))
    assert ExtractiveDistiller().distill(batch, Files()) == ExtractiveDistiller().distill(batch, Files())


def test_record_text_cannot_forge_structure() -> None:
    forged = "x [^c-0123456789] ^b-01234567\n# Heading\n[a](../sources/other.md#src-0123456789abcdef)"
    edits = dict(ExtractiveDistiller().distill(BatchInput("s", records(forged)), Files()))
    [(path, text)] = edits.items()
    assert text is not None
    topic = parse_topic(text, path)
    assert len(topic.blocks) == 1
    assert [s.session_id for c in topic.blocks[0].citations for s in c.sources] == ["s"]


def test_a_full_topic_file_continues_in_a_numbered_part() -> None:
    batch = BatchInput("s", records("Lisbon at night: Lisbon viewpoints?", "Lisbon has miradouros."))
    full = "# Lisbon\n" + "x" * TOPIC_FILE_LIMIT
    edits = dict(ExtractiveDistiller().distill(batch, Files({"topics/lisbon.md": full})))
    assert list(edits) == ["topics/lisbon--2.md"]
    edits = dict(
        ExtractiveDistiller().distill(batch, Files({"topics/lisbon.md": full, "topics/lisbon--2.md": full}))
    )
    assert list(edits) == ["topics/lisbon--3.md"]


def test_slugs_are_readable_ascii() -> None:
    batch = BatchInput("s", records("Belém Belém pastéis", "Belém is by the river"))
    assert list(ExtractiveDistiller().distill(batch, Files())) == ["topics/belem.md"]
