"""What `dagmem bench --json --out DIR` prints and saves, in its documented shape (`bench/_report.py`): the
object also in `DIR/bench.json`; each result `{"name", "value", "unit", "baseline", "ratio", "goal",
"met"}`, its ratio value / baseline, `met` judged exactly when there is a goal and a value; the count of
judged goals; the plot there exactly when the object names it. Checked by `tests/bench/test_bench_report.py`
for each benchmark, and by the tests that run a benchmark's whole `--quick` run through the command for
figures of their own (`dagmem bench cold`, `dagmem bench hooks`): each benchmark's run is made once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

__all__ = ["KEYS", "assert_documented_shape"]

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
