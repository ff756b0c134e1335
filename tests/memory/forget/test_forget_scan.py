"""The scan behind `verify --forgotten` finds a forgotten text wherever a copy is under the home, in any
of its forms, knowing only hashes: in a plain file at any offset (a chunk boundary included), in a zip
member, in a git object (compressed on disk), in a file's name; and never reports what is not there."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

from dagmem.memory.forget._forms import hashes
from dagmem.memory.forget._scan import _CHUNK, Needles, scan_home

SECRET = "correct horse battery staple 4471"


def test_each_kind_of_copy_is_found_and_a_clean_home_is_clean(tmp_path: Path) -> None:
    needles = Needles(hashes([SECRET]))
    home = tmp_path / "home"
    home.mkdir()
    (home / "clean.txt").write_text("nothing to see " * 1000)
    assert scan_home(home, needles) == []

    padding = b"x" * (_CHUNK - 10)
    (home / "boundary.bin").write_bytes(padding + SECRET.encode())  # across the first chunk's end
    (home / "escaped.json").write_text('{"content": "' + SECRET.replace(" ", "\\u0020") + '"}')  # no form
    (home / "inert.md").write_text("User: “Correct horse battery staple 4471”")  # capitalised
    with zipfile.ZipFile(home / "arrays.npz", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("doc.npy", "row " + SECRET)
    repo = home / "sessions/s/.git"
    subprocess.run(["git", "init", "-q", str(repo.parent)], check=True)
    subprocess.run(
        ["git", "-C", str(repo.parent), "hash-object", "-w", "--stdin"], input=SECRET.encode(), check=True
    )
    (home / SECRET.replace(" ", "-")).write_text("")  # not a form: hyphens are not what was said
    (home / SECRET.casefold()).write_text("")  # a file named after it

    found = {copy.where.split(" object ")[0] for copy in scan_home(home, needles)}

    assert found == {
        "boundary.bin",
        "inert.md",
        "arrays.npz:doc.npy",
        "sessions/s/.git",
        f"{SECRET.casefold()} (its name)",
    }
    found_at = {c.where: c.offset for c in scan_home(home, needles)}
    assert found_at["boundary.bin"] == len(padding)


def test_a_short_text_is_not_scanned_for() -> None:
    assert hashes(["hi all"]) == []  # under 8 bytes in every form: no hash, nothing to tell apart
