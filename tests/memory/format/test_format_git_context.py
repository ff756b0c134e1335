"""The git context in the archive frame's `source-meta` (docs/formats.md, "Git context"): written only
when known, read back, bounded, and kept by a tombstone."""

from __future__ import annotations

import base64
import json

import pytest

from dagmem.memory.errors import InvalidInput
from dagmem.memory.format import (
    HEADER,
    ArchiveRecord,
    GitContext,
    frame_git,
    git_context_of,
    render_frame,
    render_tombstone,
    scan_archive,
)

GIT = GitContext("/src/app/.git", "feature/x", "ab" * 20, "lib/app.ex", "2:0badc0de:0123456789abcdef")


def _meta(frame: bytes) -> dict[str, object]:
    token = frame.split(b"\n")[2].removeprefix(b"<!-- source-meta: ").removesuffix(b" -->")
    found: dict[str, object] = json.loads(base64.urlsafe_b64decode(token + b"=" * (-len(token) % 4)))
    return found


def test_a_frame_with_a_git_context_reads_back_with_it() -> None:
    frame = render_frame(ArchiveRecord("s1", "n1", "user", 1, 1.5, "use Oban", git=GIT))
    assert _meta(frame)["git"] == {
        "branch": "feature/x",
        "cited": "2:0badc0de:0123456789abcdef",
        "commit": "ab" * 20,
        "path": "lib/app.ex",
        "repo": "/src/app/.git",
    }
    scan = scan_archive(HEADER + frame, "s1")
    assert scan.status == "complete"
    assert scan.frames[0].git == GIT
    assert frame_git(frame) == GIT


def test_a_frame_without_one_has_no_git_key_and_reads_as_none() -> None:
    frame = render_frame(ArchiveRecord("s1", "n1", "user", 1, 1.5, "hello"))
    assert "git" not in _meta(frame)
    assert scan_archive(HEADER + frame, "s1").frames[0].git is None
    assert frame_git(frame) is None


def test_a_long_repository_path_and_odd_branch_characters_stay_one_canonical_header_line() -> None:
    git = GitContext("/" + "é" * 1000, 'we"ird\\branch', None, None, None)
    assert git_context_of(git) == git
    frame = render_frame(ArchiveRecord("s1", "n1", "user", 1, 1.5, "x", git=git))
    assert scan_archive(HEADER + frame, "s1").frames[0].git == git


@pytest.mark.parametrize(
    "value",
    [
        {"branch": "main"},  # no repository
        {"repo": ""},
        {"repo": "/r", "commit": "xyz"},
        {"repo": "/r", "path": "/etc/passwd"},
        {"repo": "/r", "path": "../up.py"},
        {"repo": "/r", "branch": "a\nb"},
        {"repo": "/r", "cited": "bad"},
        {"repo": "/r", "other": "key"},
        {"repo": "/" + "x" * 1100},
        "not an object",
    ],
)
def test_what_is_no_git_context_is_refused(value: object) -> None:
    assert git_context_of(value) is None


def test_render_frame_refuses_a_context_out_of_its_bounds() -> None:
    with pytest.raises(InvalidInput, match="git context"):
        render_frame(ArchiveRecord("s1", "n1", "user", 1, 1.5, "x", git=GitContext("/r", "a\nb")))


def test_a_source_meta_whose_git_is_no_context_is_damage() -> None:
    frame = render_frame(ArchiveRecord("s1", "n1", "user", 1, 1.5, "x"))
    bad = json.dumps(
        {"created_at": 1.5, "git": {"branch": "main"}, "role": "user", "seq": 1}, separators=(",", ":")
    ).encode()
    token = base64.urlsafe_b64encode(bad).rstrip(b"=")
    lines = frame.split(b"\n")
    lines[2] = b"<!-- source-meta: " + token + b" -->"
    scan = scan_archive(HEADER + b"\n".join(lines), "s1")
    assert scan.frames == []
    assert scan.reason == "source-meta git is not a git context"


def test_a_tombstone_keeps_the_git_context_of_its_frame() -> None:
    tomb = render_tombstone("s1", "n1", role="user", seq=1, created_at=1.5, forgotten_at=9.0, git=GIT)
    frame = scan_archive(HEADER + tomb, "s1").frames[0]
    assert frame.forgotten
    assert frame.git == GIT
