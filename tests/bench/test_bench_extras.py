"""A benchmark that needs an optional extra (`currency` and `locomo`: rank-bm25, the `bench` extra;
`cluster`: Ray) names the extra in one line and exits 2 when it is named and the extra is missing, before
anything runs or is written; in a run of several, it is left out (`skipped`), the others measured."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from dagmem.bench import report
from dagmem.tests._bench_shape import stub_runner
from dagmem.tests._cli import dagmem_run


@pytest.mark.parametrize("name", sorted(report.EXTRAS))
def test_a_named_benchmark_without_its_extra_is_one_line_and_exit_2(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra, module = report.EXTRAS[name]
    monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed: its import fails
    out = tmp_path / "out"
    argv = ["bench", name, "--quick", "--out", str(out)]
    if name == "locomo":
        argv += ["--data", str(tmp_path / "locomo.json")]
    result = dagmem_run(*argv)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert f"dagmem[{extra}]" in result.stderr
    assert not out.exists()
    refused = dagmem_run(*argv, "--json")
    assert refused.returncode == 2
    assert json.loads(refused.stdout)["code"] == "EXTRA_MISSING"


def test_a_run_of_several_leaves_out_the_one_without_its_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "rank_bm25", None)
    monkeypatch.setattr(report, "BENCHMARKS", ("walk", "currency"))  # "all", kept small
    monkeypatch.setitem(report._RUNNERS, "walk", stub_runner("walk"))  # its one run: test_bench_report.py
    result = dagmem_run("bench", "--quick", "--json", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stdout + result.stderr
    printed = json.loads(result.stdout)
    assert printed["benchmarks"] == ["walk"]
    assert "dagmem[bench]" in printed["skipped"]["currency"]
    assert printed["errors"] == {}
    assert "Traceback" not in result.stderr
    assert "currency" in result.stderr
