from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dagmem.memory import faults
from dagmem.memory.durable import _atomic as durable
from dagmem.memory.errors import ArchiveCorrupt, InvalidInput
from dagmem.memory.format import (
    HEADER,
    ArchiveRecord,
    GitContext,
    ScanResult,
    anchor_of,
    render_frame,
    scan_archive,
)
from dagmem.memory.format import _archive_codec as codec
from dagmem.memory.workspace import SessionArchive
from dagmem.memory.workspace import _archive as appender

SID = "s1"
T0 = 1_700_000_000.5  # 2023-11-14T22:13:20+00:00


def rec(
    node: str, content: str = "hello", *, role: str = "user", seq: int = 0, created_at: float = T0
) -> ArchiveRecord:
    return ArchiveRecord(SID, node, role, seq, created_at, content)


def archive_bytes(*records: ArchiveRecord) -> bytes:
    return HEADER + b"".join(render_frame(r) for r in records)


def meta_token(meta: Any, **dumps: Any) -> bytes:
    text = json.dumps(meta, **dumps)
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=")


def canonical_meta(**meta: Any) -> bytes:
    return meta_token(meta, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def replace_line(frame: bytes, index: int, line: bytes) -> bytes:
    lines = frame.split(b"\n")
    lines[index] = line
    return b"\n".join(lines)


def drop_line(frame: bytes, index: int) -> bytes:
    lines = frame.split(b"\n")
    del lines[index]
    return b"\n".join(lines)


def line_offset(frame: bytes, index: int) -> int:
    return sum(len(line) + 1 for line in frame.split(b"\n")[:index])


def contents(result: ScanResult) -> list[tuple[str, str, int, float, str]]:
    return [(f.source_id, f.role, f.seq, f.created_at, f.content) for f in result.frames]


def as_tuples(records: list[ArchiveRecord]) -> list[tuple[str, str, int, float, str]]:
    return [(r.source_id, r.role, r.seq, r.created_at, r.content) for r in records]


# --- format ---------------------------------------------------------------------------------------------


def test_render_frame_writes_the_documented_bytes() -> None:
    record = ArchiveRecord(SID, "n1", "user", 3, T0, "hi\r\nthere")
    h = hashlib.sha256(b"s1/n1").hexdigest()[:16]
    meta = base64.urlsafe_b64encode(b'{"created_at":1700000000.5,"role":"user","seq":3}').rstrip(b"=")
    assert anchor_of("s1/n1") == f"src-{h}"
    assert record.source_id == "s1/n1"
    assert render_frame(record) == (
        f'<a id="src-{h}"></a>\n<!-- source-id: s1/n1 -->\n'.encode()
        + b"<!-- source-meta: "
        + meta
        + b" -->\n<!-- record-lines: 2 -->\n"
        + b"[2023-11-14T22:13:20+00:00] user: hi\r\nthere\n\n"
    )
    assert HEADER == b"<!-- dagmem-archive:v1 -->\n\n"


def test_round_trip_render_then_scan_gives_the_same_records() -> None:
    records = [
        rec("n1", "hello", seq=1),
        rec("n2", "", role="assistant", seq=2, created_at=T0 + 61.25),
        rec("n3", "trailing newline\n", role="tool", seq=3),
        rec("n4", "\n\n", role="system", seq=4, created_at=0.0),
        rec("n5", "ünïcødé ✓ 中文 \U0001f600\nline two", seq=5, created_at=-12.5),
    ]
    data = archive_bytes(*records)
    result = scan_archive(data, SID)
    assert result.status == "complete"
    assert result.valid_end == len(data)
    assert result.reason is None
    assert result.damage_offset is None
    assert contents(result) == as_tuples(records)
    assert [f.node_id for f in result.frames] == ["n1", "n2", "n3", "n4", "n5"]
    offset = len(HEADER)
    for frame, record in zip(result.frames, records, strict=True):
        assert (frame.offset, frame.end) == (offset, offset + len(render_frame(record)))
        offset = frame.end


def test_cr_and_crlf_content_is_preserved_byte_for_byte() -> None:
    content = "crlf\r\nlone cr\rend cr\r\n\r\r\n"
    data = archive_bytes(rec("n1", content))
    assert content.encode() in data
    assert b"<!-- record-lines: 4 -->" in data  # split on \n only
    (frame,) = scan_archive(data, SID).frames
    assert frame.content == content


def test_content_with_forged_frame_lines_stays_content(tmp_path: Path) -> None:
    forged = render_frame(rec("forged", "I am not a frame")).decode()
    content = f"look:\n{forged}<!-- dagmem-archive:v1 -->\n<!-- record-lines: 1 -->\n{forged}"
    data = archive_bytes(rec("n1", content), rec("n2"))
    result = scan_archive(data, SID)
    assert result.status == "complete"
    assert [f.node_id for f in result.frames] == ["n1", "n2"]
    assert result.frames[0].content == content
    # The quoted id was never archived, so it can be archived for real.
    path = tmp_path / "s1.md"
    path.write_bytes(data)
    assert SessionArchive(path, SID).append([rec("forged", "real")]) == ["s1/forged"]
    assert scan_archive(path.read_bytes(), SID).status == "complete"


# --- invalid frames ---------------------------------------------------------------------------------------

GOOD = render_frame(rec("n2", "two\nlines", seq=2))  # lines: 0 anchor, 1 id, 2 meta, 3 count, 4-5 body, 6 end
META = {"created_at": T0, "role": "user", "seq": 2}


def _other_source(sid: str, node: str) -> bytes:
    frame = replace_line(GOOD, 0, f'<a id="{anchor_of(f"{sid}/{node}")}"></a>'.encode())
    return replace_line(frame, 1, f"<!-- source-id: {sid}/{node} -->".encode())


def _meta(token: bytes) -> bytes:
    return replace_line(GOOD, 2, b"<!-- source-meta: " + token + b" -->")


def _stray_bits(token: bytes) -> bytes:
    """The same bytes with the unused low bits of the last base64 character set."""
    raw = base64.urlsafe_b64decode(token + b"=" * (-len(token) % 4))
    for char in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_":
        other = token[:-1] + bytes([char])
        if other != token and base64.urlsafe_b64decode(other + b"=" * (-len(other) % 4)) == raw:
            return other
    raise AssertionError("token has no spare bits")


def _count(value: bytes) -> bytes:
    return replace_line(GOOD, 3, b"<!-- record-lines: " + value + b" -->")


# (bad frame, damaged line index or None for end of data, reason fragment, ends in a truncation)
INVALID: dict[str, tuple[bytes, int | None, str, bool]] = {
    "bad anchor": (replace_line(GOOD, 0, b'<a id="src-XYZ"></a>'), 0, "anchor line", False),
    "uppercase anchor": (replace_line(GOOD, 0, GOOD.split(b"\n")[0].upper()), 0, "anchor line", False),
    "missing anchor": (drop_line(GOOD, 0), 0, "anchor line", False),
    "anchor of another id": (
        replace_line(GOOD, 0, f'<a id="{anchor_of("s1/n9")}"></a>'.encode()),
        0,
        "does not match",
        False,
    ),
    "missing source id": (drop_line(GOOD, 1), 1, "source-id line", False),
    "another session": (_other_source("s2", "n2"), 1, "another session", False),
    "invalid node id": (_other_source(SID, "-n2"), 1, "invalid node id", False),
    "duplicate in file": (render_frame(rec("n1", "again")), 0, "duplicate", False),
    "missing meta": (drop_line(GOOD, 2), 2, "source-meta line", False),
    "meta not base64url": (_meta(b"ab+/"), 2, "source-meta line", False),
    "meta padded": (_meta(canonical_meta(**META) + b"=="), 2, "source-meta line", False),
    "meta undecodable": (_meta(b"A"), 2, "undecodable", False),
    "meta stray base64 bits": (_meta(_stray_bits(canonical_meta(**META))), 2, "non-canonical", False),
    "meta not utf-8": (_meta(base64.urlsafe_b64encode(b"\xff\xfe").rstrip(b"=")), 2, "undecodable", False),
    "meta not an object": (_meta(meta_token([])), 2, "keys", False),
    "meta extra key": (_meta(canonical_meta(**META, x=1)), 2, "keys", False),
    "meta missing key": (_meta(canonical_meta(created_at=T0, role="user")), 2, "keys", False),
    "meta int time": (_meta(canonical_meta(created_at=1700000000, role="user", seq=2)), 2, "float", False),
    "meta nan time": (_meta(canonical_meta(created_at=float("nan"), role="user", seq=2)), 2, "float", False),
    "meta huge time": (_meta(canonical_meta(created_at=1e20, role="user", seq=2)), 2, "out of range", False),
    "meta bad role": (_meta(canonical_meta(created_at=T0, role="bot", seq=2)), 2, "role", False),
    "meta bool seq": (_meta(canonical_meta(created_at=T0, role="user", seq=True)), 2, "seq", False),
    "meta negative seq": (_meta(canonical_meta(created_at=T0, role="user", seq=-1)), 2, "seq", False),
    "meta spaced json": (_meta(meta_token(META, sort_keys=True)), 2, "non-canonical", False),
    "meta unsorted": (
        _meta(meta_token({"seq": 2, "role": "user", "created_at": T0}, separators=(",", ":"))),
        2,
        "non-canonical",
        False,
    ),
    "meta other float spelling": (
        _meta(base64.urlsafe_b64encode(b'{"created_at":1.7000000005e9,"role":"user","seq":2}').rstrip(b"=")),
        2,
        "non-canonical",
        False,
    ),
    "meta wrong for first line": (
        _meta(canonical_meta(created_at=T0 + 1, role="user", seq=2)),
        4,
        "first record line",
        False,
    ),
    "missing record-lines": (drop_line(GOOD, 3), 3, "record-lines", False),
    "non-numeric record-lines": (_count(b"two"), 3, "record-lines", False),
    "zero record-lines": (_count(b"0"), 3, "record-lines", False),
    "leading-zero record-lines": (_count(b"02"), 3, "record-lines", False),
    "huge record-lines": (_count(b"1000001"), 3, "record-lines", False),
    "enormous record-lines": (_count(b"9" * 200), 3, "record-lines", False),
    "record-lines beyond the data": (_count(b"50"), None, "exceeds the lines left", True),
    "record-lines too small": (_count(b"1"), 5, "terminator", False),
    "first line other time": (
        replace_line(GOOD, 4, b"[2023-11-14T22:13:21+00:00] user: two"),
        4,
        "first record line",
        False,
    ),
    "first line other role": (
        replace_line(GOOD, 4, b"[2023-11-14T22:13:20+00:00] assistant: two"),
        4,
        "first record line",
        False,
    ),
    "first line without prefix": (replace_line(GOOD, 4, b"two"), 4, "first record line", False),
    "content not utf-8": (replace_line(GOOD, 5, b"li\xffnes"), 4, "UTF-8", False),
    "missing terminator": (replace_line(GOOD, 6, b"x"), 6, "terminator", False),
    "truncated before terminator": (GOOD[:-1], None, "truncated", True),
    "truncated in a header line": (GOOD[: line_offset(GOOD, 2) + 5], 2, "truncated", True),
    "over-long header line": (
        replace_line(GOOD, 2, b"<!-- source-meta: " + b"A" * 5000 + b" -->"),
        2,
        "too long",
        False,
    ),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_each_invalid_frame_kind_is_found_at_its_offset(case: str) -> None:
    bad, line, reason, _ = INVALID[case]
    prefix = archive_bytes(rec("n1"))
    result = scan_archive(prefix + bad, SID)
    assert [f.node_id for f in result.frames] == ["n1"]
    assert result.valid_end == len(prefix)
    expected = len(prefix) + (len(bad) if line is None else line_offset(bad, line))
    assert result.damage_offset == expected
    assert result.reason is not None
    assert reason in result.reason
    assert result.status == "torn"  # nothing valid follows


@pytest.mark.parametrize("case", [name for name, spec in INVALID.items() if not spec[3]])
def test_each_invalid_frame_kind_followed_by_a_valid_frame_is_corrupt(case: str) -> None:
    bad = INVALID[case][0]
    prefix = archive_bytes(rec("n1"))
    result = scan_archive(prefix + bad + render_frame(rec("n3")), SID)
    assert [f.node_id for f in result.frames] == ["n1"]
    assert result.valid_end == len(prefix)
    assert result.status == "corrupt"


def test_a_known_id_in_a_scanned_tail_is_a_duplicate() -> None:
    data = archive_bytes(rec("n1"))
    tail = render_frame(rec("n2")) + render_frame(rec("n3"))
    result = scan_archive(data + tail, SID, start=len(data), known_ids={"s1/n2"})
    assert result.frames == []
    assert (result.valid_end, result.damage_offset, result.status) == (len(data), len(data), "corrupt")
    assert result.reason == "duplicate source id"
    alone = scan_archive(
        data + tail[: len(render_frame(rec("n2")))], SID, start=len(data), known_ids={"s1/n2"}
    )
    assert (alone.status, alone.reason) == ("torn", "duplicate source id")
    clean = scan_archive(data + tail, SID, start=len(data), known_ids={"s1/n1"})
    assert clean.status == "complete"
    assert [f.node_id for f in clean.frames] == ["n2", "n3"]


def test_tail_scan_with_base_reports_file_offsets() -> None:
    data = archive_bytes(rec("n1"), rec("n2"))
    cut = len(archive_bytes(rec("n1")))
    result = scan_archive(data[cut:], SID, base=cut, known_ids={"s1/n1"})
    assert result.status == "complete"
    assert [(f.node_id, f.offset, f.end) for f in result.frames] == [("n2", cut, len(data))]
    assert result.valid_end == len(data)


def test_header_damage() -> None:
    for cut in range(len(HEADER)):
        result = scan_archive(HEADER[:cut], SID)
        assert (result.status, result.valid_end, result.reason) == ("torn", 0, "truncated header")
    assert scan_archive(HEADER, SID) == ScanResult([], len(HEADER), "complete", None, None)
    frame = render_frame(rec("n1"))
    for other in (b"<!-- dagmem-archive:v2 -->\n\n", b"# notes\n\n", HEADER[:-1] + b"x"):
        result = scan_archive(other + frame, SID)
        assert (result.status, result.valid_end, result.damage_offset, result.frames) == ("corrupt", 0, 0, [])
    # Garbage after a good header, with nothing valid after it, is a torn tail.
    result = scan_archive(HEADER + b"garbage\n", SID)
    assert (result.status, result.valid_end, result.damage_offset) == ("torn", len(HEADER), len(HEADER))


def test_a_frame_of_another_session_is_not_valid_here() -> None:
    data = HEADER + render_frame(ArchiveRecord("s2", "n1", "user", 0, T0, "x"))
    result = scan_archive(data, SID)
    assert (result.status, result.reason, result.frames) == ("torn", "source id of another session", [])


def test_torn_frame_that_quotes_a_whole_frame_is_conservatively_corrupt() -> None:
    # A valid frame after the damage cannot be told from a real one, so nothing is truncated.
    quoted = render_frame(rec("quoted")).decode()
    frame = render_frame(rec("n2", f"see:\n{quoted}and more"))
    data = archive_bytes(rec("n1")) + frame[:-3]
    assert scan_archive(data, SID).status == "corrupt"


def test_scan_rejects_an_out_of_range_start() -> None:
    with pytest.raises(ValueError, match="out of range"):
        scan_archive(HEADER, SID, start=len(HEADER) + 1)


# --- render refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        ArchiveRecord("bad/sid", "n1", "user", 0, T0, "x"),
        ArchiveRecord("", "n1", "user", 0, T0, "x"),
        ArchiveRecord(SID, "-n1", "user", 0, T0, "x"),
        ArchiveRecord(SID, "n" * 65, "user", 0, T0, "x"),
        ArchiveRecord(SID, "n1", "bot", 0, T0, "x"),
        ArchiveRecord(SID, "n1", "User", 0, T0, "x"),
        ArchiveRecord(SID, "n1", "user", -1, T0, "x"),
        ArchiveRecord(SID, "n1", "user", 2**63, T0, "x"),
        ArchiveRecord(SID, "n1", "user", 0, float("nan"), "x"),
        ArchiveRecord(SID, "n1", "user", 0, float("inf"), "x"),
        ArchiveRecord(SID, "n1", "user", 0, 1e20, "x"),
        ArchiveRecord(SID, "n1", "user", 0, T0, "lone \ud800 surrogate"),
        ArchiveRecord(SID, "n1", "user", 0, T0, "\n" * 1_000_000),
    ],
)
def test_render_frame_refuses_invalid_records(record: ArchiveRecord) -> None:
    with pytest.raises(InvalidInput):
        render_frame(record)
    assert issubclass(InvalidInput, ValueError)


def test_render_frame_accepts_an_int_time_and_writes_it_as_a_float() -> None:
    (frame,) = scan_archive(HEADER + render_frame(rec("n1", created_at=1_700_000_000)), SID).frames
    assert frame.created_at == 1_700_000_000.0
    assert type(frame.created_at) is float


# --- SessionArchive ---------------------------------------------------------------------------------------


def test_missing_file_is_created_with_the_header(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    store = SessionArchive(path, SID)
    assert store.ids() == {}
    assert store.valid_end == 0
    assert not path.exists()
    records = [rec("n1"), rec("n2", "b")]
    assert store.append(records) == ["s1/n1", "s1/n2"]
    data = path.read_bytes()
    assert data == archive_bytes(*records)
    assert dict(store.ids()) == {"s1/n1": len(HEADER), "s1/n2": len(archive_bytes(records[0]))}
    assert store.valid_end == len(data)


def test_empty_batch_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    assert SessionArchive(path, SID).append([]) == []
    assert not path.exists()


def test_append_refuses_a_record_of_another_session_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    with pytest.raises(InvalidInput, match="not of session"):
        SessionArchive(path, SID).append([rec("n1"), ArchiveRecord("s2", "n1", "user", 0, T0, "x")])
    with pytest.raises(InvalidInput):
        SessionArchive(path, SID).append([rec("n1"), rec("n2", role="bot")])
    assert not path.exists()


def test_archiving_the_same_batch_twice_is_byte_identical_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s1.md"
    batch = [rec("n1"), rec("n2", "x"), rec("n1", "repeat in batch is skipped")]
    store = SessionArchive(path, SID)
    assert store.append(batch) == ["s1/n1", "s1/n2"]
    first = path.read_bytes()
    assert first == archive_bytes(batch[0], batch[1])

    writes: list[Path] = []
    real_append = durable.append_bytes

    def spy(p: Path, data: bytes, **kwargs: Any) -> int:
        writes.append(p)
        return real_append(p, data, **kwargs)

    monkeypatch.setattr(appender, "append_bytes", spy)
    assert store.append(batch) == []
    assert SessionArchive(path, SID).append(batch) == []  # a fresh process, too
    assert writes == []
    assert path.read_bytes() == first


def test_a_source_id_is_never_archived_twice_across_writers_and_from_state(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    a = SessionArchive(path, SID)
    b = SessionArchive(path, SID)
    assert a.append([rec("n1")]) == ["s1/n1"]
    state = (a.valid_end, dict(a.ids()))
    assert b.append([rec("n1"), rec("n2")]) == ["s1/n2"]  # b loads the file first
    # a's state is stale: it adopts b's tail and skips n2.
    assert a.append([rec("n2"), rec("n3")]) == ["s1/n3"]
    resumed = SessionArchive.from_state(path, SID, valid_end=state[0], ids=state[1])
    assert resumed.append([rec("n1"), rec("n2"), rec("n3"), rec("n4")]) == ["s1/n4"]
    result = scan_archive(path.read_bytes(), SID)
    assert result.status == "complete"
    assert [f.node_id for f in result.frames] == ["n1", "n2", "n3", "n4"]
    assert dict(resumed.ids()) == {f.source_id: f.offset for f in result.frames}


def test_take_changes_reports_what_was_adopted_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    store = SessionArchive(path, SID)
    assert store.append([rec("n1")]) == ["s1/n1"]
    assert store.take_changes() == ([], True)  # the first load was a full scan (of nothing)
    assert store.append([rec("n2")]) == ["s1/n2"]
    assert store.take_changes() == ([], False)  # its own appends are not "adopted"

    SessionArchive(path, SID).append([rec("n3"), rec("n4")])  # another writer
    assert store.append([rec("n3"), rec("n5")]) == ["s1/n5"]
    assert store.take_changes() == (["s1/n3", "s1/n4"], False)
    assert store.take_changes() == ([], False)  # taken once

    path.write_bytes(archive_bytes(rec("n1"), rec("n9")))  # shrunk: a full rescan replaces the map
    assert store.append([rec("n2")]) == ["s1/n2"]
    assert store.take_changes() == (["s1/n1", "s1/n9"], True)

    fresh = SessionArchive(path, SID)
    assert set(fresh.ids()) == {"s1/n1", "s1/n9", "s1/n2"}
    assert fresh.take_changes() == (["s1/n1", "s1/n9", "s1/n2"], True)


def test_from_state_appends_without_a_full_rescan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s1.md"
    writer = SessionArchive(path, SID, fsync=False)
    writer.append([rec(f"n{i}", f"turn {i}") for i in range(50)])
    state = (writer.valid_end, dict(writer.ids()))

    calls: list[tuple[int, int, int]] = []  # (start, base, bytes scanned)
    real_scan = scan_archive

    def spy(data: bytes, session_id: str, **kwargs: Any) -> ScanResult:
        calls.append((kwargs.get("start", 0), kwargs.get("base", 0), len(data)))
        return real_scan(data, session_id, **kwargs)

    monkeypatch.setattr(appender, "scan_archive", spy)
    resumed = SessionArchive.from_state(path, SID, valid_end=state[0], ids=state[1], fsync=False)
    assert resumed.append([rec("n50")]) == ["s1/n50"]
    assert calls == []  # size == valid_end: nothing read

    # Another writer appends; a second resumed archive scans only that tail.
    tail_start = path.stat().st_size
    other = SessionArchive.from_state(path, SID, valid_end=tail_start, ids={**state[1], "s1/n50": 0})
    other.append([rec("n51"), rec("n52")])
    tail = path.stat().st_size - tail_start
    calls.clear()
    late = SessionArchive.from_state(path, SID, valid_end=tail_start, ids=resumed.ids(), fsync=False)
    assert late.append([rec("n51"), rec("n53")]) == ["s1/n53"]
    assert calls == [(0, tail_start, tail)]
    assert scan_archive(path.read_bytes(), SID).status == "complete"


def test_a_smaller_file_or_a_missing_header_forces_a_full_rescan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s1.md"
    store = SessionArchive(path, SID)
    store.append([rec("n1"), rec("n2")])
    calls: list[int] = []
    real_scan = scan_archive

    def spy(data: bytes, session_id: str, **kwargs: Any) -> ScanResult:
        calls.append(kwargs.get("base", 0) + kwargs.get("start", 0))
        return real_scan(data, session_id, **kwargs)

    monkeypatch.setattr(appender, "scan_archive", spy)
    view = store.ids()
    path.write_bytes(archive_bytes(rec("n1")))  # replaced by a shorter archive
    assert store.append([rec("n2"), rec("n3")]) == ["s1/n2", "s1/n3"]
    assert calls == [0]
    assert path.read_bytes() == archive_bytes(rec("n1"), rec("n2"), rec("n3"))
    offsets = {f.source_id: f.offset for f in scan_archive(path.read_bytes(), SID).frames}
    assert dict(view) == offsets  # the earlier view follows the rescan

    # Same size, header gone: rescanned from 0, found corrupt, nothing written.
    calls.clear()
    data = path.read_bytes()
    damaged = b"<!-- dagmem-archive:v9 -->\n\n" + data[len(HEADER) :]
    path.write_bytes(damaged)
    with pytest.raises(ArchiveCorrupt):
        store.append([rec("n4")])
    assert calls == [0]
    assert path.read_bytes() == damaged


def test_a_deleted_file_resets_a_stale_state(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    store = SessionArchive.from_state(path, SID, valid_end=500, ids={"s1/n1": 28})
    assert store.append([rec("n1")]) == ["s1/n1"]
    assert path.read_bytes() == archive_bytes(rec("n1"))


def test_torn_tail_at_every_cut_is_torn_truncated_and_healed(tmp_path: Path) -> None:
    records = [
        rec("n1", "one"),
        rec("n2", "two\r\n", role="assistant"),
        rec("n3", "three\nlines\r\nhere", seq=3),
    ]
    clean = archive_bytes(*records)
    last = len(archive_bytes(*records[:2]))
    path = tmp_path / "s1.md"
    assert scan_archive(clean[:last], SID).status == "complete"
    for cut in range(last + 1, len(clean)):
        torn = clean[:cut]
        result = scan_archive(torn, SID)
        assert (result.status, result.valid_end, len(result.frames)) == ("torn", last, 2), cut
        path.write_bytes(torn)
        store = SessionArchive(path, SID)
        # Whole but for the final newline: the newline is put back (exactly the clean bytes), not re-appended.
        assert store.append(records) == ([] if cut == len(clean) - 1 else ["s1/n3"]), cut
        assert path.read_bytes() == clean, cut
        assert store.valid_end == len(clean)


def test_torn_header_at_every_cut_is_healed(tmp_path: Path) -> None:
    records = [rec("n1", "one")]
    clean = archive_bytes(*records)
    path = tmp_path / "s1.md"
    for cut in range(len(clean)):
        path.write_bytes(clean[:cut])
        assert scan_archive(clean[:cut], SID).status == ("complete" if cut == len(HEADER) else "torn"), cut
        restored = cut == len(clean) - 1  # whole but for the final newline, which is put back
        assert SessionArchive(path, SID).append(records) == ([] if restored else ["s1/n1"]), cut
        assert path.read_bytes() == clean, cut


def test_a_torn_append_is_healed_by_the_same_archive_object(tmp_path: Path) -> None:
    first, batch = [rec("n1")], [rec("n2", "two\nlines"), rec("n3")]
    payload = len(archive_bytes(*first, *batch)) - len(archive_bytes(*first))
    n2_len = len(render_frame(batch[0]))
    for keep in range(payload):
        path = tmp_path / f"s1-{keep}.md"
        store = SessionArchive(path, SID)
        store.append(first)

        def tear(site: str, keep: int = keep) -> None:
            if site == "archive:write":
                raise faults.Tear(site, keep)

        with faults.armed(tear), pytest.raises(faults.Tear):
            store.append(batch)
        assert scan_archive(path.read_bytes(), SID).status == ("complete" if keep in {0, n2_len} else "torn")
        # A frame that landed whole (or whole but for its final newline, which is put back) is adopted,
        # not written again.
        expected = [] if keep == payload - 1 else ["s1/n3"] if keep >= n2_len - 1 else ["s1/n2", "s1/n3"]
        assert store.append(batch) == expected, keep
        assert path.read_bytes() == archive_bytes(*first, *batch), keep
        assert scan_archive(path.read_bytes(), SID).status == "complete"


def test_truncation_passes_its_fault_site_first(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    SessionArchive(path, SID).append([rec("n1")])
    torn = archive_bytes(rec("n1")) + render_frame(rec("n2"))[:20]
    path.write_bytes(torn)

    def crash(site: str) -> None:
        if site == "archive:truncate":
            raise faults.InjectedCrash(site)

    store = SessionArchive(path, SID)
    with faults.armed(crash), pytest.raises(faults.InjectedCrash):
        store.append([rec("n2")])
    assert path.read_bytes() == torn  # the crash came before the truncation

    sites: list[str] = []
    with faults.armed(sites.append):
        assert store.append([rec("n2")]) == ["s1/n2"]
    assert sites == ["archive:truncate", "archive:write", "archive:fsync"]
    assert path.read_bytes() == archive_bytes(rec("n1"), rec("n2"))


def test_creating_the_file_syncs_its_directory(tmp_path: Path) -> None:
    sites: list[str] = []
    with faults.armed(sites.append):
        SessionArchive(tmp_path / "s1.md", SID).append([rec("n1")])
    assert sites == ["archive:write", "archive:fsync", "archive:dirsync"]


def test_corrupt_archive_refuses_appends_and_keeps_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    prefix = archive_bytes(rec("n1"))
    data = prefix + b'<a id="src-0000"></a>\nscribble\n\n' + render_frame(rec("n2"))
    path.write_bytes(data)
    result = scan_archive(data, SID)
    assert (result.status, result.valid_end, result.damage_offset) == ("corrupt", len(prefix), len(prefix))

    store = SessionArchive(path, SID)
    with pytest.raises(ArchiveCorrupt) as caught:
        store.append([rec("n3")])
    assert (caught.value.path, caught.value.offset) == (path, len(prefix))
    assert path.read_bytes() == data
    assert dict(store.ids()) == {"s1/n1": len(HEADER)}  # the valid prefix is still readable
    path.write_bytes(prefix)  # even once repaired, this object stays refused
    with pytest.raises(ArchiveCorrupt):
        store.append([rec("n3")])
    assert path.read_bytes() == prefix


def test_corruption_in_a_tail_is_found_by_from_state(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    prefix = archive_bytes(rec("n1"))
    data = prefix + b"junk\n" + render_frame(rec("n2"))
    path.write_bytes(data)
    store = SessionArchive.from_state(path, SID, valid_end=len(prefix), ids={"s1/n1": len(HEADER)})
    with pytest.raises(ArchiveCorrupt) as caught:
        store.append([rec("n3")])
    assert caught.value.offset == len(prefix)
    assert path.read_bytes() == data
    with pytest.raises(ArchiveCorrupt):
        store.append([rec("n4")])


def test_a_tail_repeating_an_archived_frame_is_truncated_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "s1.md"
    store = SessionArchive(path, SID)
    store.append([rec("n1")])
    with path.open("ab") as f:  # a writer that ignored the protocol
        f.write(render_frame(rec("n1")))
    assert store.append([rec("n2")]) == ["s1/n2"]
    assert path.read_bytes() == archive_bytes(rec("n1"), rec("n2"))


# --- properties -----------------------------------------------------------------------------------------

_node_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,12}", fullmatch=True)
_text = st.text(
    st.one_of(
        st.sampled_from(["\n", "\r", "<", ">", "-", " ", "!", "["]), st.characters(exclude_categories=["Cs"])
    )
)
_records = st.lists(
    st.builds(
        lambda node, content, role, seq, created_at: ArchiveRecord(SID, node, role, seq, created_at, content),
        _node_ids,
        _text,
        st.sampled_from(["user", "assistant", "tool", "system"]),
        st.integers(0, 2**63 - 1),
        st.floats(-1e9, 1e10, allow_nan=False),
    ),
    max_size=6,
    unique_by=lambda r: r.node_id,
)


def _check_shape(result: ScanResult, data: bytes) -> None:
    assert 0 <= result.valid_end <= len(data)
    assert (result.status == "complete") == (result.damage_offset is None)
    if result.status == "complete":
        assert result.valid_end == len(data)
    else:
        assert result.damage_offset is not None
        assert result.valid_end <= result.damage_offset <= len(data)
    ends = [len(HEADER)] + [f.end for f in result.frames]
    assert [f.offset for f in result.frames] == ends[:-1]
    if result.frames:
        assert result.frames[-1].end == result.valid_end


@given(st.binary(max_size=2000), st.sets(st.text(max_size=5), max_size=3))
def test_scanning_arbitrary_bytes_never_raises(data: bytes, known: set[str]) -> None:
    for blob in (data, HEADER + data):
        result = scan_archive(blob, SID, known_ids=known)
        assert result.status in {"complete", "torn", "corrupt"}
        assert 0 <= result.valid_end <= len(blob)


@given(_records, st.data())
def test_mutated_archives_never_raise(records: list[ArchiveRecord], data: st.DataObject) -> None:
    blob = bytearray(archive_bytes(*records))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(blob)))
        op = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        byte = data.draw(st.integers(0, 255))
        if op == "insert":
            blob[at:at] = bytes([byte])
        elif at < len(blob):
            if op == "flip":
                blob[at] = byte
            else:
                del blob[at]
    result = scan_archive(bytes(blob), SID)
    _check_shape(result, bytes(blob))


@given(_records)
def test_round_trip_property(records: list[ArchiveRecord]) -> None:
    data = archive_bytes(*records)
    result = scan_archive(data, SID)
    assert result.status == "complete"
    assert contents(result) == as_tuples(records)


@settings(max_examples=50)
@given(_records, st.data())
def test_every_prefix_of_a_valid_archive_is_complete_or_torn(
    records: list[ArchiveRecord], data: st.DataObject
) -> None:
    full = archive_bytes(*records)
    boundaries = {len(archive_bytes(*records[:i])) for i in range(len(records) + 1)}
    cut = data.draw(st.integers(0, len(full)))
    result = scan_archive(full[:cut], SID)
    _check_shape(result, full[:cut])
    assert result.status == ("complete" if cut in boundaries else "torn")
    assert contents(result) == as_tuples(records[: len(result.frames)])


_git_text = st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=40)
_gits = st.none() | st.builds(
    GitContext,
    _git_text,
    st.none() | _git_text,
    st.none() | st.sampled_from(["0" * 40, "ab" * 32]),
    st.none() | st.sampled_from(["src/a.py", 'lib/\u00e9t\u00e9 "q".ex']),
    st.none() | st.just("3:0badc0de:0123456789abcdef"),
)


@given(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(sorted(codec.ROLES)),
    st.integers(0, codec.MAX_SEQ),
    st.none() | st.sampled_from(sorted(codec.ORIGINS)),
    _gits,
)
def test_meta_encoding_is_exactly_the_specified_json_dumps(
    created_at: float, role: str, seq: int, origin: str | None, git: GitContext | None
) -> None:
    meta: dict[str, Any] = {"created_at": created_at, "role": role, "seq": seq}
    if origin is not None and origin != role:
        meta["origin"] = origin
    if git is not None:
        meta["git"] = git.to_json()
    spec = json.dumps(meta, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert codec._meta_json(created_at, role, seq, origin, git) == spec.encode()


def test_every_prefix_exhaustively() -> None:
    records = [rec("a", "x\r\ny"), rec("b", "", role="tool"), rec("c", "<!-- record-lines: 9 -->\n")]
    full = archive_bytes(*records)
    for cut in range(len(full) + 1):
        assert scan_archive(full[:cut], SID).status in {"complete", "torn"}, cut
