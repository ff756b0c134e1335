"""`dagmem bench write --quick`, run once through the command at a tiny size (10 and 50 topic files): every
figure, the report's lines beside them, the documented shape; and the benchmarks' filler states no core
fact."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from dagmem.bench import _kit as kit
from dagmem.bench import _write
from dagmem.bench._write import SETUPS
from dagmem.memory.format import ArchiveRecord
from dagmem.memory.write._core_facts import core_facts
from dagmem.tests._bench_shape import quick_report, run_tiny


def test_write_benchmark_reports_every_figure_at_a_tiny_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    left = run_tiny(monkeypatch, _write, 10, 50, 3, 2, 1)  # small, large, reps, cold_reps, profile_reps
    printed = quick_report("write", tmp_path, capsys)
    result = printed["raw"]["write"]

    assert left == [[]]  # the scratch directory is removed
    names = {r["name"] for r in printed["results"]}
    for prefix in ("one write", "archive"):
        assert any(name.startswith(prefix) for name in names), prefix
    assert (result["benchmark"], result["small"], result["large"]) == ("write", 10, 50)
    assert result["fsync"] is True
    assert result["reps"] == {"warmup": 2, "warm": 3, "cold": 2, "profiled": 1}
    assert result["batch"]["records"] == 8
    assert set(result["setups"]) == set(SETUPS)

    topics = {"small": 10, "large_workspace": 50, "long_archive": 10}
    for name, setup in result["setups"].items():
        # The fixtures are what they claim, and the measured writes never add a topic file.
        assert setup["before"]["topic_files"] == topics[name]
        assert setup["after"]["topic_files"] == topics[name]
        assert setup["after"]["txlog_lines"] > setup["before"]["txlog_lines"]
        for key in ("total", "write_batch", "mark"):
            figures = setup["warm"][key]
            assert figures["n"] == 3
            assert 0 < figures["median"] <= figures["p90"]
        for key in ("open", "write_batch", "mark", "open_and_write", "store_first_touch"):
            figures = setup["cold"][key]
            assert figures["n"] == 2
            assert 0 < figures["median"] <= figures["p90"]
        assert len(setup["warm_ms_each"]) == 3
        assert setup["drift"]["last"]["touched_kib"] > 0
        for kind in ("warm", "cold_open", "cold_write"):
            assert setup["steps"][kind]["total (profiled)"] > 0
        assert setup["steps"]["warm"]["distil"] > 0
        assert setup["steps"]["cold_open"]["SQLite index open"] > 0
    # Each measured write of (a) and the baseline appends to a 10-turn archive; (b) to one of 50+ turns.
    assert result["setups"]["small"]["archive_turns_at_writes"] == [10, 10]
    assert result["setups"]["large_workspace"]["archive_turns_at_writes"] == [10, 10]
    assert result["setups"]["long_archive"]["archive_turns_at_writes"][0] == 50

    for key in ("a_workspace", "b_archive"):
        ratios = result["ratios"][key]
        for figure in ("warm_median", "warm_p90", "warm_paired_median", "cold_open_and_write_median"):
            assert ratios[figure] > 0
        assert isinstance(result["goals"][key], bool)
        assert ratios["growth"]
    assert result["goal_met"] == all(result["goals"].values())
    # The independent oracle finds every home consistent: archived, consumed once, cited, marked.
    assert {name: o["ok"] for name, o in result["oracle"].items()} == dict.fromkeys(SETUPS, True)
    assert result["wall_seconds"] > 0


def test_benchmark_filler_never_states_a_core_fact() -> None:
    # "I" (capitalised) was once left in the filler: "I always ..." made 8 in 20,000 turns a core fact,
    # and the full benchmark's 1,250-batch fixture stopped at batch 357 for touching topics/core.md.
    assert not {word.casefold() for word in kit.FILLER} & {"i", "my", "call", "topic"}
    rng = random.Random(1)
    turns = [kit.topic_text(rng, "zuzuzuzu", 2, numbers=True) for _ in range(20_000)]
    assert not [t for t in turns if core_facts([ArchiveRecord("s", "n1", "user", 1, 0.0, t)])]
