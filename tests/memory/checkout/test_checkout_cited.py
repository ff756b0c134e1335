"""Checked against the code (`memory.checkout.cited_of` and `check`): what an edit wrote is found again in
its file whatever the indentation and blank lines, and a file rewritten or gone says so."""

from __future__ import annotations

import os
from pathlib import Path

from dagmem.memory.checkout import READ_BYTES, check, cited_of

NEW = "def run(job):\n    return job.perform()\n"


def test_the_cited_text_holds_in_a_file_that_still_has_it_reindented(tmp_path: Path) -> None:
    cited = cited_of(NEW)
    assert cited is not None
    assert cited.startswith("2:")
    (tmp_path / "app.py").write_text(
        "import x\n\nclass A:\n    def run(job):\n\n        return job.perform()\n"
    )
    assert check(str(tmp_path), "app.py", cited).state == "holds"


def test_a_rewritten_file_changed_with_its_date_and_a_missing_one_is_gone(tmp_path: Path) -> None:
    cited = cited_of(NEW)
    (tmp_path / "app.py").write_text("def run(job):\n    return None\n")
    os.utime(tmp_path / "app.py", (1_790_000_000, 1_790_000_000))
    found = check(str(tmp_path), "app.py", cited)
    assert (found.state, found.since, found.path) == ("changed", "2026-09-21", "app.py")
    assert check(str(tmp_path), "moved.py", cited).state == "gone"


def test_a_deletion_cites_nothing_and_a_huge_file_is_not_read(tmp_path: Path) -> None:
    assert cited_of("\n  \n") is None
    (tmp_path / "big.py").write_bytes(b"x = 1\n" * (READ_BYTES // 6 + 10))
    assert check(str(tmp_path), "big.py", cited_of(NEW)).state == "holds"  # not checked: a stat only
    assert check(str(tmp_path), "big.py", None).state == "holds"
