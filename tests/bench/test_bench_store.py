"""`dagmem bench store --quick`, run once through the command at a tiny size (60 turns): every figure, the
report's lines beside them, the documented shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmem.bench import _store
from dagmem.bench._store import COMPONENTS
from dagmem.tests._bench_shape import quick_report, run_tiny


def test_store_benchmark_reports_every_figure_at_a_tiny_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    left = run_tiny(monkeypatch, _store, 60, window=5, early=20)
    printed = quick_report("store", tmp_path, capsys)
    result = printed["raw"]["store"]

    assert left == [[]]  # the scratch directory is removed
    names = {r["name"] for r in printed["results"]}
    for prefix in ("git bytes per turn", "git ms per turn"):
        assert any(name.startswith(prefix) for name in names), prefix
    assert result["turns"] == 60
    assert result["window"] == 5
    assert isinstance(result["git_version"], str)
    assert result["git_version"]
    assert isinstance(result["goal_met"], bool)
    for subject in ("sharded", "nogit", "flat"):
        figures = result[subject]
        assert figures["ratio_ms_median"] > 0
        for point, span in (("early", [18, 22]), ("late", [56, 60])):
            window = figures[point]
            assert window["turns"] == span
            assert window["ms_median"] > 0
            assert window["ms_p90"] >= window["ms_median"]
            if subject == "nogit":
                assert "bytes_per_turn" not in window
                continue
            assert window["bytes_per_turn"] > 0
            # The commit alone, timed around the call: a part of the append it belongs to.
            assert 0 < window["commit_ms_median"] <= window["commit_ms_p90"]
            assert window["commit_ms_mean"] < window["ms_mean"]
            assert len(window["bytes_each"]) == 5
            assert all(size > 0 for size in window["bytes_each"])
            assert set(window["bytes_per_turn_by_component"]) == set(COMPONENTS)
            # Every new object is one of the named kinds, and every turn adds a blob, trees and a commit.
            parts = window["bytes_per_turn_by_component"]
            assert parts["other"] == 0
            for kind in ("node blob", "meta.json blob", "history/ tree", "root tree", "commit"):
                assert parts[kind] > 0
            assert (parts["shard tree"] > 0) == (subject == "sharded")
            assert all(len(sizes) == 5 for sizes in window["tree_shape"].values())
        if subject != "nogit":
            assert figures["ratio_bytes_per_turn"] > 0
            assert figures["repository_at_end"]["packs"] == 0
            assert figures["repository_at_end"]["gc_auto"] == "0"
    estimate = result["sharded"]["full_shard_estimate"]
    assert estimate["bytes_per_turn"] >= result["sharded"]["late"]["bytes_per_turn"]
    assert estimate["ratio_to_early"] > 0
    # Only the flat control's tree grows with the session: 20 -> 60 entries in one directory.
    assert result["flat"]["late"]["bytes_per_turn"] > result["flat"]["early"]["bytes_per_turn"]
    assert result["flat"]["history_build"]["bulk_commits"] >= 1
