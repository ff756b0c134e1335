"""`dagmem bench`: one report of every figure, each beside its baseline, its goal and whether it is met.

The whole `--quick` run goes through the command once, every benchmark in it shrunk to the tiny size its
own smoke test (`test_bench_<name>.py`) checks its figures at: the `--quick` sizes themselves take minutes
and would run the same code again. The report's numbers are not judged here, only that every benchmark
runs and that every result has the documented shape."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dagmem.bench import _cluster, _currency, _import, _runtime, _store, _write
from dagmem.bench import _report as report
from dagmem.cli import main

KEYS = {"name", "value", "unit", "baseline", "ratio", "goal", "met"}


def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every benchmark of `--quick` at the size of its smoke test (a few seconds each); recall keeps its
    `--quick` sizes (1k and 10k blocks, about ten seconds): it has no smaller one that runs."""

    def sized(real: Callable[..., Any], **sizes: Any) -> Callable[..., Any]:
        return lambda *args, **kwargs: real(*args, **{**kwargs, **sizes})

    monkeypatch.setattr(
        _runtime,
        "run",
        sized(_runtime.run, small_live=3, large_live=12, short_turns=3, long_turns=20, samples=5, warmup=1,
              profile_appends=2, start_samples=2, throughput_sessions=2, throughput_turns=6),
    )  # fmt: skip
    real_store, real_write = _store.run, _write.run
    monkeypatch.setattr(_store, "run", lambda _turns, **kw: real_store(60, window=5, early=20, **kw))
    monkeypatch.setattr(_write, "run", lambda *_sizes, **kw: real_write(10, 50, 3, 2, 1, **kw))
    monkeypatch.setattr(_import, "QUICK_LINES", 120)
    monkeypatch.setattr(_import, "QUICK_YEAR_SESSIONS", 3)
    monkeypatch.setattr(_import, "QUICK_YEAR_TURNS", 60)
    monkeypatch.setattr(_cluster, "QUICK_TURNS", 24)
    monkeypatch.setattr(_cluster, "QUICK_POOL_HOMES", 6)
    monkeypatch.setattr(_cluster, "QUICK_COLD_HOMES", 2)
    monkeypatch.setattr(_cluster, "QUICK_POOL_KILLS", 1)
    monkeypatch.setattr(_cluster, "QUICK_LATENCY_TURNS", 10)
    monkeypatch.setattr(_currency, "QUICK_HOMES", 1)
    real_sim = report._sim_run
    monkeypatch.setattr(
        report,
        "_sim_run",
        lambda sessions, homes, git, scratch: real_sim(max(homes, sessions // 10), homes, git, scratch),
    )


@pytest.mark.timeout(900)  # a few seconds per benchmark alone; the suite may share the machine
def test_quick_bench_of_everything_reports_results_in_the_documented_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny(monkeypatch)
    assert main(["bench", "--quick", "--json", "--out", str(tmp_path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["benchmarks"] == list(report.BENCHMARKS)  # no NAME: every benchmark
    assert json.loads((tmp_path / "bench.json").read_text()) == printed
    results = printed["results"]
    assert {r["name"] for r in results} >= {
        "'anything owed?' walk vs a full-branch scan, 1,000 turns",
        "writer throughput at threshold 16,000 (fsync on; baseline: durable replaces/s here)",
    }
    prefixes = ("append p50", "append p99", "git bytes per turn", "git ms per turn", "one write", "archive",
                "writer throughput", "token counting", "recall", "simulator turns/s", "simulator peak RSS")  # fmt: skip
    for prefix in prefixes:
        assert any(r["name"].startswith(prefix) for r in results), prefix
    for r in results:
        assert set(r) == KEYS, r
        assert isinstance(r["name"], str)
        assert isinstance(r["unit"], str)
        assert r["met"] in (True, False, None)
        if r["value"] is not None and r["baseline"]:
            assert r["ratio"] == pytest.approx(r["value"] / r["baseline"], rel=0.01)
        if r["goal"] is None or r["value"] is None:
            assert r["met"] is None
        else:
            assert r["met"] is not None
    assert printed["goals"]["judged"] == sum(1 for r in results if r["met"] is not None)
    assert (tmp_path / "bench.png").exists() == (printed["plot_path"] is not None)


def test_bench_takes_several_names_and_runs_only_those(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "tokens", "walk", "--quick", "--json", "--out", str(tmp_path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["benchmarks"] == ["walk", "tokens"]
    assert all(r["name"].startswith(("'anything owed?'", "token counting")) for r in printed["results"])
    # The Markdown table (what the README's figures are pasted from): a header, then a row per result.
    rows = [line for line in (tmp_path / "bench.md").read_text().splitlines() if line.startswith("| ")]
    assert rows[0] == "| figure | value | baseline | ratio | goal | met |"
    assert [row.split(" | ")[0][2:] for row in rows[1:]] == [r["name"] for r in printed["results"]]


def test_an_unknown_benchmark_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "nope", "--json", "--out", str(tmp_path)]) == 2
    assert json.loads(capsys.readouterr().out)["code"] == "INVALID_INPUT"


def test_a_result_judges_its_goal() -> None:
    assert report.result("x", 3.0, "ms", 2.0, "ratio <= 1.5")["met"] is True
    assert report.result("x", 4.0, "ms", 2.0, "ratio <= 1.5")["met"] is False
    assert report.result("x", 1400.0, "turns/s", 2300.0, "value >= 1500")["met"] is False
    assert report.result("x", None, "ms", None, None) == {
        "name": "x", "value": None, "unit": "ms", "baseline": None, "ratio": None, "goal": None, "met": None
    }  # fmt: skip


def test_a_benchmark_that_breaks_costs_only_its_own_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(quick: bool, say: object, scratch: Path) -> object:
        raise RuntimeError("fixture batch 357 touched topics/core.md")

    monkeypatch.setitem(report._RUNNERS, "walk", broken)
    assert main(["bench", "walk", "tokens", "--quick", "--json", "--out", str(tmp_path)]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["errors"] == {"walk": "RuntimeError: fixture batch 357 touched topics/core.md"}
    assert printed["results"]
    assert all(r["name"].startswith("token counting") for r in printed["results"])
    assert "bench walk failed (no figures): RuntimeError" in (tmp_path / "bench.md").read_text()
