"""What `dagmem bench --json --out DIR` prints and saves, in its documented shape (`bench/_report.py`): the
object also in `DIR/bench.json`; each result `{"name", "value", "unit", "baseline", "ratio", "goal",
"met"}`, its ratio value / baseline, `met` judged exactly when there is a goal and a value; the count of
judged goals; the plot there exactly when the object names it. Each benchmark of `dagmem bench` runs once
in the suite, through the command (`quick_report`), at the tiny size its test sets (`run_tiny`): in the
test of its own figures, else in `tests/bench/test_bench_report.py`, which checks that each is run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from dagmem.bench import _report as report
from dagmem.cli import main

__all__ = ["KEYS", "assert_documented_shape", "quick_report", "run_tiny", "stub_runner"]

KEYS = {"name", "value", "unit", "baseline", "ratio", "goal", "met"}


def assert_documented_shape(printed: dict[str, Any], out: Path) -> None:
    assert json.loads((out / "bench.json").read_text()) == printed
    results = printed["results"]
    assert results
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
    assert (out / "bench.png").exists() == (printed["plot_path"] is not None)


def quick_report(name: str, out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """`dagmem bench NAME --quick --json --out OUT` run once, in this process: it succeeds, measures NAME
    alone, with no error, in the documented shape. Returns the object it printed."""
    assert main(["bench", name, "--quick", "--json", "--out", str(out)]) == 0
    printed: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert printed["benchmarks"] == [name]
    assert not printed["errors"]
    assert_documented_shape(printed, out)
    return printed


def run_tiny(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, *args: Any, **sizes: Any
) -> list[list[str]]:
    """Make `module.run` run at the tiny size `args` (its first positional arguments) and `sizes` give,
    whatever the command passes (its `--quick` size would take minutes). Returns, per call, what the call
    left in the scratch directory it was given: a benchmark removes what it made there."""
    real = module.run
    left: list[list[str]] = []

    def tiny(*given: Any, **kwargs: Any) -> Any:
        result = real(*args, *given[len(args) :], **{**kwargs, **sizes})
        if isinstance(kwargs.get("scratch"), Path):
            left.append(sorted(path.name for path in kwargs["scratch"].iterdir()))
        return result

    monkeypatch.setattr(module, "run", tiny)
    return left


Runner = Callable[[bool, object, Path], tuple[list[dict[str, Any]], dict[str, Any]]]


def stub_runner(name: str, ran: list[str] | None = None) -> Runner:
    """A stand-in for benchmark `name`'s runner (`bench/_report.py`'s `_RUNNERS`), for the tests of the
    report's assembly: three lines (a goal met, one missed, one without a goal) and its raw `{"ran":
    name}`, at once; appends `name` to `ran`. Each benchmark runs for real once, in a test of its own."""

    def run(quick: bool, say: object, scratch: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        assert quick
        assert scratch.is_dir()
        if ran is not None:
            ran.append(name)
        lines = [
            report.result(f"{name}: a figure", 3.0, "ms", 2.0, "ratio <= 1.5"),
            report.result(f"{name}: another", 1400.0, "turns/s", None, "value >= 1500"),
            report.result(f"{name}: for comparison", None, "ms", None, None),
        ]
        return lines, {"ran": name}

    return run
