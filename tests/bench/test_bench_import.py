"""`dagmem bench import` at a smoke size: the bulk import and its fsync-per-node baseline import the same
turns, the profile names the import's top costs, and the year is imported and written."""

from __future__ import annotations

from pathlib import Path

from dagmem.bench import _import


def test_bench_import_measures_both_imports_and_the_year(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(_import, "QUICK_LINES", 150)
    monkeypatch.setattr(_import, "QUICK_YEAR_SESSIONS", 3)
    monkeypatch.setattr(_import, "QUICK_YEAR_TURNS", 90)
    raw = _import.run(True, tmp_path)
    assert raw["bulk"]["turns"] == raw["fsync_per_node"]["turns"] == raw["nodes"] > 0
    assert raw["profile"]
    assert all(row["own_s"] >= 0 for row in raw["profile"])
    year = raw["year"]
    assert year["import"]["turns"] == year["nodes"] > 0
    assert year["written_sessions"] == year["sessions"]
    assert year["failed_sessions"] == 0
    assert year["total_s"] >= year["write_s"] > 0
