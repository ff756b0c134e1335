"""`dagmem bench locomo` on a small LoCoMo-format file: every recall figure for memory and for rank-bm25,
and each again by halves of the conversations (the first half and the rest), whose questions add up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dagmem.tests._cli import dagmem_run

pytest.importorskip("rank_bm25")


def conversation(n: int) -> dict[str, Any]:
    turns = [
        {"speaker": "Ana", "dia_id": "D1:1", "text": f"I adopted a cat named Miso{n} last week."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! Does she get along with your dog?"},
        {"speaker": "Ana", "dia_id": "D1:3", "text": f"Yes, and I started pottery classes on Tuesday{n}."},
    ]
    qa = [
        {"question": "What is the name of Ana's cat?", "category": 4, "evidence": ["D1:1"]},
        {"question": "What pet and what class did Ana start?", "category": 1, "evidence": ["D1:1", "D1:3"]},
    ]
    conv = {"speaker_a": "Ana", "speaker_b": "Ben", "session_1_date_time": "1:56 pm on 8 May, 2023"}
    return {"sample_id": f"conv-{n}", "conversation": {**conv, "session_1": turns}, "qa": qa}


def test_each_figure_is_given_for_both_halves_of_the_conversations(tmp_path: Path) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([conversation(n) for n in range(3)]))
    result = dagmem_run("bench", "locomo", "--data", str(data), "--json", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stdout + result.stderr
    printed = json.loads(result.stdout)
    for method in ("memory", "baseline"):
        first, second = printed[method]["halves"]
        assert (first["questions"], second["questions"]) == (4, 2)  # conversations 1-2, then 3
        assert first["questions"] + second["questions"] == printed[method]["questions"] == 6
        assert set(first["per_category"]) == {"1", "4"}
        assert 0.0 <= first["recall_all@10"] <= 1.0
    text = dagmem_run("bench", "locomo", "--data", str(data), "--out", str(tmp_path / "out2"))
    assert "by halves of the conversations" in text.stdout
