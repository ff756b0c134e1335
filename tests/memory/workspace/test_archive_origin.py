"""Every archived source records its origin (who wrote the text): `source-meta` carries `origin` only when
it is not the role's default, so a frame of a default origin is byte for byte what it was before origins
existed, and such old frames read as their role's default."""

from __future__ import annotations

import base64
import json

import pytest

from dagmem import InvalidInput
from dagmem.memory.format import ArchiveRecord, render_frame, scan_archive
from dagmem.memory.format._archive_codec import HEADER


def _frame(origin: str | None, role: str = "user") -> bytes:
    return render_frame(ArchiveRecord("s1", "n1", role, 1, 1_700_000_000.0, "I live in Berlin.", origin))


def _meta(frame: bytes) -> dict[str, object]:
    token = frame.split(b"<!-- source-meta: ")[1].split(b" -->")[0]
    return dict(json.loads(base64.urlsafe_b64decode(token + b"=" * (-len(token) % 4))))


def test_a_default_origin_is_not_written_and_reads_as_the_role() -> None:
    plain, said = _frame(None), _frame("user")
    assert plain == said  # the role's default is never spelled out
    assert set(_meta(plain)) == {"created_at", "role", "seq"}  # as every frame before origins
    (frame,) = scan_archive(HEADER + plain, "s1").frames
    assert frame.origin == "user"
    (answer,) = scan_archive(HEADER + _frame(None, "assistant"), "s1").frames
    assert answer.origin == "assistant"


@pytest.mark.parametrize("origin", ["tool", "imported", "system", "assistant"])
def test_another_origin_is_written_and_read_back(origin: str) -> None:
    frame = _frame(origin)
    assert _meta(frame)["origin"] == origin
    (scanned,) = scan_archive(HEADER + frame, "s1").frames
    assert scanned.origin == origin
    assert scanned.role == "user"
    assert scanned.content == "I live in Berlin."


def _with_meta(meta: dict[str, object]) -> bytes:
    raw = json.dumps(meta, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    token = base64.urlsafe_b64encode(raw).rstrip(b"=")
    good = _frame("tool")
    before, rest = good.split(b"<!-- source-meta: ")
    return before + b"<!-- source-meta: " + token + b" -->" + rest.split(b" -->", 1)[1]


@pytest.mark.parametrize(
    ("origin", "why"),
    [
        ("user", "non-canonical"),  # the role's default spelled out: not what render_frame writes
        ("web", "origin"),
        (3, "origin"),
    ],
)
def test_a_forged_or_unknown_origin_is_damage(origin: object, why: str) -> None:
    frame = _with_meta({"created_at": 1_700_000_000.0, "origin": origin, "role": "user", "seq": 1})
    scan = scan_archive(HEADER + frame, "s1")
    assert scan.frames == []
    assert why in (scan.reason or "")


def test_render_refuses_an_unknown_origin() -> None:
    with pytest.raises(InvalidInput, match="origin"):
        _frame("website")
