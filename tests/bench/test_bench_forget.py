from __future__ import annotations

import json

from dagmem.bench._forget import run


def test_forget_benchmark_reports_each_figure_at_a_tiny_size() -> None:
    result = run(40)

    assert json.loads(json.dumps(result)) == result  # one JSON-ready object
    assert result["turns"] == 40
    assert result["clean"] is True  # both forgets left no copy
    for key in ("write_s", "forget_turn_s", "forget_session_s"):
        assert result[key] > 0
