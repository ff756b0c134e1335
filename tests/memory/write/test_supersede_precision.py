"""The supersession rule measured on a labelled corpus: a wrong supersession hides a true fact, so its
precision is the figure that must hold (≥ 0.95), and recall is printed beside it.

`data/supersession_pairs.jsonl`: an older user statement, a newer one, and the truth — "update",
"retraction" or null — with the hard negatives that make precision mean something (the same subject
without a cue, a cue about another subject, additions, other people, questions, hypotheticals, negated
cues), in English and Chinese. "dev" was written with the rules; "held-out" was written before the
rules were run on it and left as first measured (precision 1.000, recall 0.930); "adversarial" (same
values restated, numbers added beside others, diets contradicted by what the user eats) was written
after, first measured at precision 0.875, recall 0.778, and the two rules it showed missing were added
(an added number is no changed number; eating meat ends a vegetarian diet), so it is a dev set now.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from dagmem.memory.write._supersede import supersession

DATA = Path(__file__).parent / "data" / "supersession_pairs.jsonl"
PAIRS = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def _measure(rows: list[dict[str, object]]) -> tuple[float, float, Counter[str]]:
    counts: Counter[str] = Counter()
    for row in rows:
        got = supersession(str(row["old"]), str(row["new"]), same_topic=bool(row["same_topic"]))
        truth = row["label"]
        if got is not None and truth is not None:
            counts["tp"] += 1
            counts["reason right"] += got == truth
        elif got is not None:
            counts["fp"] += 1
        elif truth is not None:
            counts["fn"] += 1
        else:
            counts["tn"] += 1
    precision = counts["tp"] / max(1, counts["tp"] + counts["fp"])
    recall = counts["tp"] / max(1, counts["tp"] + counts["fn"])
    return precision, recall, counts


def test_the_corpus_is_large_bilingual_and_mostly_hard_negatives_and_true_changes() -> None:
    kinds = Counter(str(row["kind"]) for row in PAIRS)
    assert len(PAIRS) >= 150
    assert sum(any("\u4e00" <= ch <= "\u9fff" for ch in str(row["new"])) for row in PAIRS) >= 30
    for kind in (
        "nocue",
        "othersubject",
        "addition",
        "thirdperson",
        "question",
        "hypothetical",
        "negatedcue",
    ):
        assert kinds[kind] >= 4, kind
    assert sum(row["label"] == "retraction" for row in PAIRS) >= 20
    assert sum(row["label"] == "update" for row in PAIRS) >= 40


@pytest.mark.parametrize("split", ["dev", "held-out", "adversarial", None])
def test_the_rule_is_precise_on_the_labelled_corpus(
    split: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [row for row in PAIRS if split is None or row["split"] == split]
    precision, recall, counts = _measure(rows)
    with capsys.disabled():
        print(
            f"\nsupersession rule, {split or 'all'} ({len(rows)} pairs): precision {precision:.3f} "
            f"recall {recall:.3f} (tp {counts['tp']} fp {counts['fp']} fn {counts['fn']} tn {counts['tn']}; "
            f"reason right {counts['reason right']}/{counts['tp']})"
        )
    assert precision >= 0.95
    assert recall >= 0.80  # a rule that never fires would be "precise"


def test_every_false_positive_kind_is_refused() -> None:
    """Each hard-negative kind on its own: none of them may ever supersede."""
    wrong = [
        row
        for row in PAIRS
        if row["label"] is None
        and supersession(str(row["old"]), str(row["new"]), same_topic=bool(row["same_topic"])) is not None
    ]
    assert [(row["kind"], row["new"]) for row in wrong] == []
