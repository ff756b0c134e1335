"""`dagmem bench currency --blind`: the scoring on hand-made homes (a superseded block counts, a negative
that got superseded counts against precision, stale-first against current@1, a stale core fact), the
development sets' loading, and a tiny run through the command (its figures are not judged here, only the
report's shape and that its counts add up)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dagmem.bench import _blind as blind
from dagmem.bench import _blind_data as data
from dagmem.bench import _blind_score as score
from dagmem.bench import _labels as labels
from dagmem.cli import main
from dagmem.memory.format import anchor_of
from dagmem.tests._bench_shape import assert_documented_shape

NODES = {(0, 0): ("s1", "n1"), (0, 1): ("s1", "n2"), (1, 0): ("s2", "n1"), (1, 1): ("s2", "n2")}
PARIS, BERLIN = NODES[(0, 0)], NODES[(1, 0)]


def _item(kind: data.Kind, ident: str = "en-x-1", category: str = "city") -> data.Item:
    turns = (
        (data.Turn("user", "I live in Paris.", "user"), data.Turn("assistant", "Nice.")),
        (data.Turn("user", "I moved to Berlin.", "user"), data.Turn("assistant", "Welcome.")),
    )
    return data.Item(ident, "dev", "en", kind, category, turns, (0, 0), (1, 0), "where do I live?",
                     ("Berlin",) if kind == "update" else ("Paris",), ("Paris",) if kind == "update" else ("Berlin",))  # fmt: skip


def _memory(tmp_path: Path, *, paris_superseded: bool) -> Path:
    """A workspace whose one topic holds the Paris block (superseded by Berlin's, or not) and Berlin's."""
    topics = tmp_path / "memory" / "topics"
    topics.mkdir(parents=True)
    status = "**Superseded** on `2026-01-02` by [b-00000002](home.md#^b-00000002) (update):\n"
    (topics / "home.md").write_text(
        "# Home\n\n"
        + (status if paris_superseded else "")
        + "User: “I live in Paris.” [^c-0000000001] ^b-00000001\n"
        f"[^c-0000000001]: Time: `2026-01-01`; Sources: [user s1/n1](../sources/s1.md#{anchor_of('s1/n1')})\n\n"
        "User: “I moved to Berlin.” [^c-0000000002] ^b-00000002\n"
        f"[^c-0000000002]: Time: `2026-01-02`; Sources: [user s2/n1](../sources/s2.md#{anchor_of('s2/n1')})\n",
        encoding="utf-8",
    )
    (topics / "index.md").write_text("# Topic index\n\nnot a topic file: never parsed\n", encoding="utf-8")
    return tmp_path / "memory"


def _hit(*nodes: tuple[str, str]) -> Any:
    return SimpleNamespace(evidence=[SimpleNamespace(session=s, node=n) for s, n in nodes])


def _core(*nodes: tuple[str, str]) -> str:
    return "# Core\n\n" + "".join(
        f"User: “fact {i}” [^c-{i}] ^b-0000000{i}\n"
        f"[^c-{i}]: Time: `2026-01-01`; Sources: [user {s}/{n}](sources/{s}.md#{anchor_of(f'{s}/{n}')})\n\n"
        for i, (s, n) in enumerate(nodes, 1)
    )


def test_the_labels_are_read_from_the_topic_files(tmp_path: Path) -> None:
    blocks = labels.read_blocks(_memory(tmp_path, paris_superseded=True), NODES.values())
    assert [(b.block, b.nodes, b.successor) for b in blocks] == [
        ("b-00000001", frozenset({PARIS}), ("topics/home.md", "b-00000002")),
        ("b-00000002", frozenset({BERLIN}), None),
    ]
    assert labels.superseded(blocks, {PARIS})
    assert labels.superseded_by(blocks, {PARIS}, {BERLIN})
    assert not labels.superseded_by(blocks, {PARIS}, {NODES[(1, 1)]})  # superseded, but not by that turn
    assert not labels.superseded(blocks, {BERLIN})
    assert labels.filed(blocks, {BERLIN})
    assert not labels.filed(blocks, {NODES[(0, 1)]})


def test_an_update_whose_old_block_is_superseded_counts_and_the_first_citing_hit_decides(
    tmp_path: Path,
) -> None:
    memory = _memory(tmp_path, paris_superseded=True)
    stale = blind.score_item(
        _item("update"), NODES, [_hit(NODES[(0, 1)]), _hit(PARIS), _hit(BERLIN)], "", memory
    )
    assert (stale.superseded, stale.by_second, stale.filed) == (True, True, True)
    assert stale.memory == "stale"  # the first hit citing either statement cites only the old one
    assert stale.current_in_k  # ... though the new one is in the k hits
    current = blind.score_item(_item("update"), NODES, [_hit(BERLIN, PARIS), _hit(PARIS)], "", memory)
    assert current.memory == "current"  # a hit citing both is current
    missed = blind.score_item(_item("update"), NODES, [_hit(NODES[(1, 1)])], "", memory)
    assert (missed.memory, missed.current_in_k) == ("miss", False)
    # rank-bm25 over the raw turns: "live" is in the Paris turn only, so it comes first, and is stale.
    assert stale.baseline == "stale"


def test_a_stale_core_fact_is_one_that_cites_the_old_statement_without_the_new(tmp_path: Path) -> None:
    memory = _memory(tmp_path, paris_superseded=True)
    item = _item("update")
    assert blind.score_item(item, NODES, [], _core(PARIS), memory).core_stale
    assert not blind.score_item(item, NODES, [], _core(BERLIN), memory).core_stale
    both = blind.score_item(item, NODES, [], _core(BERLIN, PARIS), memory)
    assert (both.core_stale, both.core_current) == (True, True)  # two blocks: the old one is still there


def test_a_negative_that_got_superseded_counts_against_precision(tmp_path: Path) -> None:
    marked = _memory(tmp_path / "a", paris_superseded=True)
    clean = _memory(tmp_path / "b", paris_superseded=False)
    negative = blind.score_item(_item("negative", "en-n-1", "other-person"), NODES, [_hit(PARIS)], "", marked)
    assert negative.superseded  # the first statement was meant to stay current
    assert negative.memory == "current"  # for a negative, the first statement is the current one
    rows = [
        blind.score_item(_item("update", "en-u-1"), NODES, [], "", marked),  # a true positive
        blind.score_item(_item("update", "en-u-2"), NODES, [], "", clean),  # a miss
        negative,  # a false positive
        blind.score_item(_item("negative", "en-n-2", "pet"), NODES, [], "", clean),  # a true negative
    ]
    sup = score.supersession(rows)
    assert (sup["true_positives"], sup["false_positives"], sup["updates"], sup["negatives"]) == (1, 1, 2, 2)
    assert (sup["recall"], sup["precision"], sup["false_positive_rate"]) == (0.5, 0.5, 0.5)
    out = score.summarise(rows)
    assert out["by_kind"]["negative"]["superseded"] == 0.5
    assert set(out["by_category"]) == {"update/city", "negative/other-person", "negative/pet"}
    lines = blind.results(out)
    recall = next(r for r in lines if "supersession recall" in r["name"])
    precision = next(r for r in lines if "supersession precision" in r["name"])
    assert (recall["value"], recall["goal"], recall["met"]) == (0.5, "value >= 0.7", False)
    assert (precision["value"], precision["goal"]) == (0.5, "value >= 0.95")


def test_the_development_sets_load_whole(tmp_path: Path) -> None:
    items = data.load(data.SETS)
    assert {i.set for i in items} == {"dev", "unseen"}
    assert {i.lang for i in items} == {"en", "de", "es", "zh", "fr", "ja"}
    assert {i.kind for i in items} == {"update", "negative"}
    picked = data.quick_pick(items)
    assert len(picked) == len({(i.set, i.lang, i.kind) for i in items})
    bad = tmp_path / "xx-dev.json"
    bad.write_text(json.dumps([{"id": "x-1", "kind": "maybe"}]), encoding="utf-8")
    with pytest.raises(ValueError, match="x-1"):
        data.load(["dev"], tmp_path)


def _file_item(ident: str, kind: str, lang: str) -> dict[str, Any]:
    second = "Update: I moved to Berlin last month." if kind == "update" else "My brother lives in Berlin."
    return {
        "id": ident, "lang": lang, "kind": kind, "category": "city",
        "sessions": [[{"role": "user", "content": "I live in Paris, near the canal.", "origin": "user"},
                      {"role": "assistant", "content": "Lovely area."}],
                     [{"role": "user", "content": second, "origin": "user"},
                      {"role": "user", "content": "Paste: Berlin Mitte, 10115", "origin": "tool"},
                      {"role": "assistant", "content": "Noted."}]],
        "first": [0, 0], "second": [1, 0], "question": "Where do I live?",
        "current": ["Berlin" if kind == "update" else "Paris"], "stale": ["Paris" if kind == "update" else "Berlin"],
    }  # fmt: skip


def test_dagmem_bench_currency_blind_runs_through_the_runtime_and_reports_each_set_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    devsets = tmp_path / "devsets"
    devsets.mkdir()
    (devsets / "en-dev.json").write_text(json.dumps([_file_item("en-u-1", "update", "en"),
                                                     _file_item("en-n-1", "negative", "en")]), encoding="utf-8")  # fmt: skip
    (devsets / "en-unseen.json").write_text(
        json.dumps([_file_item("en-u-2", "update", "en")]), encoding="utf-8"
    )
    monkeypatch.setattr(data, "DEVSETS", devsets)
    out = tmp_path / "out"
    assert main(["bench", "currency", "--blind", "--set", "all", "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert_documented_shape(printed, out)
    assert printed["benchmarks"] == ["currency-blind"]
    raw = printed["raw"]["currency-blind"]
    assert raw["items"] == 3
    assert set(raw["by_set"]) == {"dev", "unseen"}
    assert raw["by_set"]["unseen"]["items"] == 1
    assert raw["current_at_1"] + raw["stale_first"] + raw["miss"] == pytest.approx(1.0, abs=1e-3)
    assert raw["supersession"]["first_unfiled"] == 0  # each first statement was written
    names = [r["name"] for r in printed["results"]]
    for prefix in ("currency --blind dev: supersession recall", "currency --blind unseen: supersession precision",
                   "currency --blind dev: stale-first rate", "currency --blind unseen: updates whose stale"):  # fmt: skip
        assert any(name.startswith(prefix) for name in names), prefix
    stale_first = next(
        r for r in printed["results"] if r["name"].startswith("currency --blind dev: stale-first")
    )
    assert (stale_first["value"], stale_first["baseline"]) == (
        raw["by_set"]["dev"]["stale_first"],
        raw["by_set"]["dev"]["baseline_stale_first"],
    )
    assert {row["id"] for row in raw["rows"]} == {"en-u-1", "en-n-1", "en-u-2"}


def test_blind_is_for_currency_alone() -> None:
    assert main(["bench", "runtime", "--blind"]) != 0
