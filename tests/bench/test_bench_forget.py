"""`dagmem bench forget --quick`, run once through the command at a tiny size (40 turns): each figure, the
report's lines beside them, the documented shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmem.bench import _forget
from dagmem.tests._bench_shape import quick_report


def test_forget_benchmark_reports_each_figure_at_a_tiny_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_forget, "QUICK_TURNS", 40)
    printed = quick_report("forget", tmp_path, capsys)
    result = printed["raw"]["forget"]

    assert result["turns"] == 40
    assert result["clean"] is True  # both forgets left no copy
    for key in ("write_s", "forget_turn_s", "forget_session_s"):
        assert result[key] > 0
    assert len(printed["results"]) == 4  # the write, each forget beside it, and the clean check
