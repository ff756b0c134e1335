"""The topic-file bound holds per block appended: one large batch rolls over into numbered parts exactly as
many small batches do (checked once per batch, one batch grew a file to 68 KB)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from dagmem.memory.format import ArchiveRecord, anchor_of, parse_topic
from dagmem.memory.write import TOPIC_FILE_LIMIT, BatchInput, ExtractiveDistiller
from dagmem.memory.write._llm_wire import apply_answer, parse_answer


class Files:
    def __init__(self, files: dict[str, str] | None = None) -> None:
        self.files = dict(files or {})

    def read(self, relpath: str) -> str | None:
        return self.files.get(relpath)

    def size(self, relpath: str) -> int | None:
        text = self.files.get(relpath)
        return None if text is None else len(text.encode())


def lisbon_records(n: int) -> tuple[ArchiveRecord, ...]:
    # Every turn is about Lisbon (the topic word) and long: its block is ~450 bytes.
    return tuple(
        ArchiveRecord(
            "s",
            f"n{i}",
            "user",
            i,
            1_750_000_000.0 + i,
            f"Lisbon Lisbon note {i}: " + " ".join(f"word{i}x{j}" for j in range(45)),
        )
        for i in range(n)
    )


def _bounded(edits: Mapping[str, str | None], block_max: int) -> None:
    for path, text in edits.items():
        assert text is not None
        assert len(text.encode()) < TOPIC_FILE_LIMIT + block_max, (path, len(text.encode()))


def _cited(edits: dict[str, str | None]) -> set[str]:
    return {
        s.anchor
        for path, text in edits.items()
        for b in parse_topic(text or "", path).blocks
        for c in b.citations
        for s in c.sources
    }


def test_one_large_extractive_batch_rolls_over_per_block() -> None:
    batch = BatchInput("s", lisbon_records(150))  # ~67 KB of blocks, all one topic word
    edits = dict(ExtractiveDistiller().distill(batch, Files()))
    assert len(edits) >= 4
    assert set(edits) >= {"topics/lisbon.md", "topics/lisbon--2.md", "topics/lisbon--3.md"}
    _bounded(edits, 1024)
    assert _cited(edits) == {anchor_of(r.source_id) for r in batch.records}  # nothing dropped


def test_a_batch_continues_a_nearly_full_part_then_rolls_over() -> None:
    start = dict(ExtractiveDistiller().distill(BatchInput("s", lisbon_records(30)), Files()))
    assert list(start) == ["topics/lisbon.md"]
    size = len((start["topics/lisbon.md"] or "").encode())
    assert size < TOPIC_FILE_LIMIT
    files = Files({k: v for k, v in start.items() if v is not None})
    more = lisbon_records(120)[30:]
    edits = dict(ExtractiveDistiller().distill(BatchInput("s", more), files))
    assert "topics/lisbon.md" in edits
    assert "topics/lisbon--2.md" in edits
    _bounded(edits, 1024)


def test_one_large_llm_answer_rolls_over_per_block() -> None:
    from dagmem.memory.write._llm import open_part_in

    records = lisbon_records(150)
    blocks = [
        {
            "claim": f"Note {i}: " + " ".join(f"word{i}x{j}" for j in range(45)),
            "refs": [f"r{i + 1}"],
            "replaces": None,
        }
        for i in range(len(records))
    ]
    answer = parse_answer(
        json.dumps(
            {"topics": [{"path": "topics/lisbon.md", "title": "Lisbon", "blocks": blocks}], "core": []}
        )
    )
    files = Files()
    result = apply_answer(
        answer, records, files, session_id="s", on_path=lambda _anchor: True, open_part=open_part_in(files)
    )
    edits = dict(result.edits)
    assert len(edits) >= 4
    _bounded(edits, 1024)
