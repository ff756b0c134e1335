"""`dagmem bench`: one report of every figure, each beside its baseline, its goal and whether it is met.

Each benchmark runs once in the suite, through the command (`quick_report`, `tests/_bench_shape.py`) at the
tiny size its test sets: in the test of its own figures where it has one (`OWN_TEST`), else here. The
report's numbers are not judged, only that every benchmark runs and that every result has the documented
shape. Without a NAME the command runs every benchmark, in order, into one report: that, several names,
and a benchmark that breaks are checked with the benchmarks' work stubbed (`stub_runner`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmem.bench import _cluster, _recall
from dagmem.bench import _report as report
from dagmem.cli import main
from dagmem.tests._bench_shape import assert_documented_shape, quick_report, run_tiny, stub_runner

# The benchmarks whose one run is made by the test of their own figures, through `quick_report` too.
OWN_TEST = {
    "runtime": "bench/test_bench_runtime.py",
    "store": "bench/test_bench_store.py",
    "import": "bench/test_bench_import.py",
    "write": "bench/test_bench_write.py",
    "cold": "package/test_cold_start.py",
    "currency": "bench/test_bench_currency.py",
    "hooks": "hooks/test_hooks_cold.py",
    "forget": "bench/test_bench_forget.py",
}

# What the report of each benchmark run here holds: whole names, and names' beginnings.
NAMES = {"walk": ("'anything owed?' walk vs a full-branch scan, 1,000 turns",)}
PREFIXES = {
    "tokens": ("token counting",),
    "recall": ("recall",),
    "sim": ("simulator turns/s", "simulator peak RSS"),
    "cluster": ("cluster turns/s", "append latency through the cluster"),
}


def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmarks run here at a smoke size (a few seconds each): recall at 300 and 1,000 blocks, its
    largest delta before a compaction 1 MiB (not 8), the cluster through 1 and 2 home actors (not 4 too),
    the simulator's homes at most 2."""
    monkeypatch.setattr(_cluster, "QUICK_TURNS", 24)
    monkeypatch.setattr(_cluster, "QUICK_POOL_HOMES", 6)
    monkeypatch.setattr(_cluster, "QUICK_COLD_HOMES", 2)
    monkeypatch.setattr(_cluster, "QUICK_POOL_KILLS", 1)
    monkeypatch.setattr(_cluster, "QUICK_LATENCY_TURNS", 10)
    monkeypatch.setattr(_cluster, "HOME_COUNTS", (1, 2))
    run_tiny(monkeypatch, _recall, (300, 1_000))
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
@pytest.mark.parametrize("name", [name for name in report.BENCHMARKS if name not in OWN_TEST])
def test_quick_bench_reports_results_in_the_documented_shape(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny(monkeypatch)
    printed = quick_report(name, tmp_path, capsys)
    names = {r["name"] for r in printed["results"]}
    assert names >= set(NAMES.get(name, ()))
    for prefix in PREFIXES.get(name, ()):
        assert any(n.startswith(prefix) for n in names), prefix


def test_every_benchmark_not_run_here_is_run_once_by_the_test_of_its_own_figures() -> None:
    tests = Path(__file__).parent.parent
    found: dict[str, list[str]] = {}
    for path in sorted(tests.rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        for name in report.BENCHMARKS:
            if f'quick_report("{name}", ' in text:
                found.setdefault(name, []).append(path.relative_to(tests).as_posix())
    assert found == {name: [test] for name, test in OWN_TEST.items()}


def test_bench_without_a_name_runs_every_benchmark_in_order_into_one_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    for name in report.BENCHMARKS:
        monkeypatch.setitem(report._RUNNERS, name, stub_runner(name, ran))
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
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    for name in report.BENCHMARKS:
        monkeypatch.setitem(report._RUNNERS, name, stub_runner(name, ran))
    assert main(["bench", "tokens", "walk", "--quick", "--json", "--out", str(tmp_path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["benchmarks"] == ran == ["walk", "tokens"]  # in the report's order
    assert all(r["name"].startswith(("walk: ", "tokens: ")) for r in printed["results"])
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
    monkeypatch.setitem(report._RUNNERS, "tokens", stub_runner("tokens"))
    assert main(["bench", "walk", "tokens", "--quick", "--json", "--out", str(tmp_path)]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["errors"] == {"walk": "RuntimeError: fixture batch 357 touched topics/core.md"}
    assert printed["results"]
    assert all(r["name"].startswith("tokens: ") for r in printed["results"])
    assert "bench walk failed (no figures): RuntimeError" in (tmp_path / "bench.md").read_text()
