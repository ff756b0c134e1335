"""The tombstone frame `dagmem forget` writes: the strict scanner reads it as a whole frame that keeps its
source id and holds no content, and tells it from damage (a part of one is damage like any partial frame)
and from record text (a turn that quotes a tombstone stays content)."""

from __future__ import annotations

from dagmem.memory.format import HEADER, ArchiveRecord, render_frame, render_tombstone, scan_archive

T0 = 1_700_000_000.0


def _record(node: str, content: str, seq: int) -> bytes:
    return render_frame(ArchiveRecord("s1", node, "user", seq, T0 + seq, content))


def _tomb(node: str, seq: int) -> bytes:
    return render_tombstone("s1", node, role="user", seq=seq, created_at=T0 + seq, forgotten_at=T0 + 500)


def test_a_tombstone_is_a_whole_frame_with_its_source_id_and_no_content() -> None:
    data = HEADER + _record("n1", "kept", 1) + _tomb("n2", 2) + _record("n3", "also kept", 3)
    scan = scan_archive(data, "s1")
    assert scan.status == "complete"
    assert [(f.source_id, f.forgotten, f.content) for f in scan.frames] == [
        ("s1/n1", False, "kept"),
        ("s1/n2", True, ""),
        ("s1/n3", False, "also kept"),
    ]
    assert scan.frames[1].seq == 2
    assert scan.frames[1].created_at == T0 + 2


def test_every_part_of_a_tombstone_at_the_end_is_a_torn_tail_and_in_the_middle_corruption() -> None:
    head = HEADER + _record("n1", "kept", 1)
    tomb = _tomb("n2", 2)
    for cut in range(1, len(tomb)):
        assert scan_archive(head + tomb[:cut], "s1").status == "torn", cut
        if tomb[:cut].endswith(b"\n"):  # a whole frame on the next line: damage no crash explains
            assert scan_archive(head + tomb[:cut] + _record("n3", "x", 3), "s1").status == "corrupt", cut


def test_record_text_that_quotes_a_tombstone_stays_content() -> None:
    quoted = _tomb("n9", 9).decode()
    data = HEADER + _record("n1", quoted, 1)
    scan = scan_archive(data, "s1")
    assert scan.status == "complete"
    assert [(f.source_id, f.forgotten) for f in scan.frames] == [("s1/n1", False)]
    assert scan.frames[0].content == quoted


def test_a_non_canonical_forgotten_line_is_damage() -> None:
    tomb = _tomb("n2", 2)
    for bad in (
        tomb.replace(b"+00:00 -->", b"Z -->"),
        tomb.replace(b"<!-- forgotten: ", b"<!-- forgotten:  "),
        tomb.replace(b"T", b" ", 1),
        tomb[:-1],  # no terminator
    ):
        assert scan_archive(HEADER + bad, "s1").status != "complete"
