"""`dagmem bench runtime --quick`, run once through the command at a tiny size (both modes, two
thresholds): every figure, the report's lines beside them, the documented shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmem.bench import _runtime
from dagmem.bench._runtime import MODES, PROFILE_STARTS, SETUPS
from dagmem.tests._bench_shape import quick_report, run_tiny


def test_runtime_benchmark_reports_every_figure_at_a_tiny_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    left = run_tiny(
        monkeypatch,
        _runtime,
        small_live=3,
        large_live=12,
        short_turns=3,
        long_turns=20,
        samples=5,
        warmup=1,
        profile_appends=2,
        start_samples=2,
        throughput_sessions=2,
        throughput_turns=6,
        thresholds=(16_000, 200),
        modes=MODES,
    )
    printed = quick_report("runtime", tmp_path, capsys)
    result = printed["raw"]["runtime"]

    assert left == [[]]  # the scratch directory is removed
    names = {r["name"] for r in printed["results"]}
    assert "writer throughput at threshold 16,000 (fsync on; baseline: durable replaces/s here)" in names
    for prefix in ("append p50", "append p99", "writer throughput"):
        assert any(name.startswith(prefix) for name in names), prefix
    assert (result["benchmark"], result["backend"], result["fsync"]) == ("runtime", "asyncio", True)
    assert (result["small_live"], result["large_live"], result["long_turns"]) == (3, 12, 20)
    assert set(result["modes"]) == set(MODES)

    for mode, entry in result["modes"].items():
        assert set(entry["setups"]) == set(SETUPS)
        for setup in entry["setups"].values():
            figures = setup["append_ms"]
            assert figures["n"] == 5
            assert 0 < figures["p50"] <= figures["p99"] <= figures["max"]
            assert len(setup["append_ms_each"]) == 5
            assert setup["first_ms"] > 0
            assert setup["start_ms"]["n"] == 2
            assert setup["start_ms"]["p50"] > 0
            assert setup["tracked_objects"] > 0
            stats = setup["stats"]
            assert stats["peak_rss_mib"] > 0
            # The measured session, the others made live, the extra ones started (and profiled): none retired.
            profiled = PROFILE_STARTS if mode == "appends_only" else 0
            assert stats["live_sessions"] == setup["live_sessions"] + 2 + profiled
            assert stats["failed_batches"] == 0
            if mode == "appends_only":
                assert stats["batches"] == 0
                assert stats["pending_turns"] > 0
                assert setup["profiled_ms_per_append"] > 0
                assert setup["profiled_ms_per_start"] > 0
            else:
                assert "overlapped_ms" in setup
        assert entry["setups"]["many"]["live_sessions"] == 12
        assert entry["setups"]["long"]["turns_before"] == 20
        for key in ("a_sessions", "b_length"):
            ratios = entry["ratios"][key]
            for figure in ("p50", "p99", "mean", "first", "start_p50"):
                assert ratios[figure] > 0
            assert 0 < ratios["p99_ci95"][0] <= ratios["p99_ci95"][1]
            assert isinstance(entry["goals"][key], bool)
        assert entry["ratios"]["control"]["p50"] > 0
        assert set(entry["goals"]) == {"a_sessions", "b_length"}
        if mode == "appends_only":
            assert entry["ratios"]["a_sessions"]["growth"]
            assert entry["ratios"]["a_sessions"]["start_growth"]
    assert result["goal_met"] == all(result["goals"].values())

    runs = result["throughput"]["runs"]
    assert [r["threshold"] for r in runs] == [16_000, 200]
    for r in runs:
        # Every owed turn is written and marked, once, and the independent oracle agrees.
        assert r["records_written"] == r["turns"] == 12
        assert r["batches"] >= 2
        assert r["records_per_s"] > 0
        assert r["pending_after"] == 0
        assert r["oracle"]["ok"]
    assert runs[1]["batches"] > runs[0]["batches"]  # a small threshold makes more, smaller batches
    assert all(value > 0 for value in result["peak_rss_mib"].values())
    assert result["wall_seconds"] > 0
