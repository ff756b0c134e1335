"""`dagmem bench`: one report of every figure, each beside its baseline, its goal and whether it is met.

The whole `--quick` run is exercised once (it is what the suite can afford); its numbers are not judged
here, only that it runs and that every result has the documented shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmem.bench import _report as report
from dagmem.cli import main

KEYS = {"name", "value", "unit", "baseline", "ratio", "goal", "met"}


@pytest.mark.timeout(900)  # the quick run is under 2 minutes alone; the suite may share the machine
def test_quick_bench_of_everything_reports_results_in_the_documented_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
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
