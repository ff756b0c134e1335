"""`dagmem bench`: one report of every figure, each beside its baseline, its goal and whether it is met.

Each benchmark of `--quick` goes through the command once, in a test of its own (so that the suite's
workers share them out), shrunk to the tiny size its own smoke test (`test_bench_<name>.py`) checks its
figures at: the `--quick` sizes themselves take minutes and would run the same code again. The report's
numbers are not judged here, only that every benchmark runs and that every result has the documented
shape (`tests/_bench_shape.py`). `cold` and `hooks` are run through the command, at their `--quick`
sizes, by the tests of their own figures, which check that shape too: each run is made once. Without a
NAME the command runs every benchmark, in order, into one report (checked with each benchmark's work
stubbed: each is run for real by its own test)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dagmem.bench import _cluster, _currency, _forget, _import, _recall, _runtime, _store, _write
from dagmem.bench import _report as report
from dagmem.cli import main
from dagmem.tests._bench_shape import assert_documented_shape

# Benchmarks whose `--quick` run through the command another test makes, checking this shape as well.
ELSEWHERE = {"cold": "package/test_cold_start.py", "hooks": "hooks/test_hooks_cold.py"}

# What the report of each benchmark holds: whole names, and names' beginnings.
NAMES = {
    "walk": ("'anything owed?' walk vs a full-branch scan, 1,000 turns",),
    "runtime": ("writer throughput at threshold 16,000 (fsync on; baseline: durable replaces/s here)",),
}
PREFIXES = {
    "runtime": ("append p50", "append p99", "writer throughput"),
    "store": ("git bytes per turn", "git ms per turn"),
    "write": ("one write", "archive"),
    "tokens": ("token counting",),
    "recall": ("recall",),
    "sim": ("simulator turns/s", "simulator peak RSS"),
}


def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every benchmark of `--quick` at the size of its smoke test (a few seconds each); recall at 300 and
    1,000 blocks, its largest delta before a compaction 1 MiB (not 8), the cluster through 1 and 2 home
    actors (not 4 too), the simulator's homes at most 2."""

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
    monkeypatch.setattr(_cluster, "HOME_COUNTS", (1, 2))
    monkeypatch.setattr(_currency, "QUICK_HOMES", 1)
    monkeypatch.setattr(_forget, "QUICK_TURNS", 40)
    real_recall = _recall.run
    monkeypatch.setattr(_recall, "run", lambda _sizes, progress: real_recall((300, 1_000), progress))
    monkeypatch.setattr(_recall, "delta_limit", lambda _snapshot: 1 << 20)
    real_sim = report._sim_run
    monkeypatch.setattr(
        report,
        "_sim_run",
        lambda sessions, homes, git, scratch: real_sim(
            max(homes, sessions // 10), min(homes, 2), git, scratch
        ),
    )


@pytest.mark.timeout(900)  # a few seconds per benchmark alone; the suite may share the machine
@pytest.mark.parametrize("name", [name for name in report.BENCHMARKS if name not in ELSEWHERE])
def test_quick_bench_reports_results_in_the_documented_shape(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny(monkeypatch)
    assert main(["bench", name, "--quick", "--json", "--out", str(tmp_path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["benchmarks"] == [name]
    assert not printed["errors"]
    assert_documented_shape(printed, tmp_path)
    names = {r["name"] for r in printed["results"]}
    assert names >= set(NAMES.get(name, ()))
    for prefix in PREFIXES.get(name, ()):
        assert any(n.startswith(prefix) for n in names), prefix


def test_the_tests_of_cold_and_hooks_check_the_shape_of_their_run() -> None:
    """The benchmarks not run above are run, and their shape checked, by the tests that ELSEWHERE names."""
    tests = Path(__file__).parent.parent
    for name, test in ELSEWHERE.items():
        text = (tests / test).read_text()
        assert f'main(["bench", "{name}", "--quick", "--json", "--out", str(tmp_path)])' in text, test
        assert "assert_documented_shape(printed, tmp_path)" in text, test


def test_bench_without_a_name_runs_every_benchmark_in_order_into_one_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []

    def stub(name: str) -> Callable[[bool, object, Path], tuple[list[dict[str, Any]], dict[str, Any]]]:
        def run(quick: bool, say: object, scratch: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
            assert quick
            assert scratch.is_dir()
            ran.append(name)
            lines = [
                report.result(f"{name}: a figure", 3.0, "ms", 2.0, "ratio <= 1.5"),
                report.result(f"{name}: another", 1400.0, "turns/s", None, "value >= 1500"),
                report.result(f"{name}: for comparison", None, "ms", None, None),
            ]
            return lines, {"ran": name}

        return run

    for name in report.BENCHMARKS:
        monkeypatch.setitem(report._RUNNERS, name, stub(name))
    assert main(["bench", "--quick", "--json", "--out", str(tmp_path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["benchmarks"] == list(report.BENCHMARKS)  # no NAME: every benchmark
    assert ran == list(report.BENCHMARKS)
    assert [r["name"] for r in printed["results"]] == [
        f"{name}: {what}" for name in report.BENCHMARKS for what in ("a figure", "another", "for comparison")
    ]
    assert printed["raw"] == {name: {"ran": name} for name in report.BENCHMARKS}
    assert set(printed["seconds"]) == set(report.BENCHMARKS)
    assert printed["goals"] == {"judged": 2 * len(report.BENCHMARKS), "met": len(report.BENCHMARKS)}
    assert_documented_shape(printed, tmp_path)


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
