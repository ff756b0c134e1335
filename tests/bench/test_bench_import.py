"""`dagmem bench import --quick`, run once through the command at a smoke size: the bulk import and its
fsync-per-node baseline import the same turns, each round with its CPU time, no round measured after one
that frees inodes (the baseline's, the year's write), the profile names the import's top costs, and the
year is imported and written; the report's lines, in the documented shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmem.bench import _import
from dagmem.tests._bench_shape import quick_report


def test_bench_import_measures_both_imports_and_the_year(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_import, "QUICK_LINES", 120)
    monkeypatch.setattr(_import, "QUICK_YEAR_SESSIONS", 3)
    monkeypatch.setattr(_import, "QUICK_YEAR_TURNS", 60)
    printed = quick_report("import", tmp_path, capsys)
    raw = printed["raw"]["import"]
    names = [r["name"] for r in printed["results"]]
    for prefix in ("import turns/s", "import + write --force of a year"):
        assert any(name.startswith(prefix) for name in names), prefix
    assert raw["bulk"]["turns"] == raw["fsync_per_node"]["turns"] == raw["nodes"] > 0
    rounds = raw["rounds"]["bulk"] + raw["rounds"]["fsync_per_node"]
    assert len(rounds) == _import.BULK_ROUNDS + _import.BASELINE_ROUNDS
    assert all(abs(r["cpu_s"] - r["user_s"] - r["system_s"]) < 0.002 for r in rounds)
    order = raw["order"]
    first_freeing = min(order.index(name) for name in order if name.startswith("baseline"))
    assert all(
        order.index(name) < first_freeing
        for name in order
        if name.startswith("bulk") or name == "year import"
    )
    assert order[-1] == "year write"
    assert set(raw["file_creation_us"]) == {"before_bulk", "before_baseline"}
    assert raw["profile"]
    assert all(row["own_s"] >= 0 for row in raw["profile"])
    year = raw["year"]
    assert year["import"]["turns"] == year["nodes"] > 0
    assert year["written_sessions"] == year["sessions"]
    assert year["failed_sessions"] == 0
    assert year["total_s"] >= year["write_s"] > 0
