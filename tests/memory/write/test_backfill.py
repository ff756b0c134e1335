"""`dagmem reorganise --backfill`: the archived evidence that no block cites (a migration's) is distilled
through the writer, in batches of the token threshold, each record once; `dagmem verify` lists it until
then (a count and the first ids, not a violation), and a second backfill finds nothing to do."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from dagmem import FileSessionStore
from dagmem.memory.adopt import migrate_home
from dagmem.memory.format import anchor_of, parse_topic, parse_topic_index
from dagmem.tests._cli import dagmem_run
from dagmem.tests.memory.adopt.test_migrate import chain, frame, txlog, write_archive, write_cursors

TURNS = [
    ("m1", "user", "How long should sourdough proof?"),
    ("m2", "assistant", "Four to six hours at room temperature."),
    ("m3", "user", "And in the fridge?"),
    ("m4", "assistant", "Overnight, twelve to sixteen hours."),
]


def dagmem(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return dagmem_run(*args, "--home", str(home))


def migrated_home(home: Path) -> None:
    """A home adopted from a position-cursor system: every turn archived and consumed, none cited."""
    store = FileSessionStore(home)
    nodes = chain(store, "s", TURNS)
    write_archive(home, "s", [frame("s", node) for node in nodes])
    write_cursors(home, ["s"])
    assert migrate_home(FileSessionStore(home), home / "memory").ok


def verify(home: Path, *extra: str) -> dict[str, Any]:
    run = dagmem("verify", "--json", *extra, home=home)
    assert run.returncode == 0, run.stdout + run.stderr
    report: dict[str, Any] = json.loads(run.stdout)
    return report


def citations(home: Path) -> Counter[str]:
    """How many citations name each archived anchor, over every topic file."""
    counts: Counter[str] = Counter()
    for path in sorted((home / "memory" / "topics").glob("*.md")):
        if path.name == "index.md":
            continue
        topic = parse_topic(path.read_text("utf-8"), f"topics/{path.name}")
        counts.update(s.anchor for b in topic.blocks for c in b.citations for s in c.sources)
    return counts


def test_backfill_cites_each_migrated_record_once_and_verify_lists_them_until_then(tmp_path: Path) -> None:
    migrated_home(tmp_path)
    before = verify(tmp_path)
    assert before["ok"]  # migrated records need not be cited: listed, not violations
    assert before["uncited"] == {"count": 4, "first": ["s/m1", "s/m2", "s/m3", "s/m4"]}
    human = dagmem("verify", home=tmp_path)
    assert "4 consumed records no block cites" in human.stdout
    assert "s/m1, s/m2, s/m3, s/m4" in human.stdout
    lines = len(txlog(tmp_path))

    run = dagmem("reorganise", "--backfill", "--json", home=tmp_path)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert (result["records"], result["batches"]) == (4, 1)
    log = txlog(tmp_path)
    assert len(log) == lines + 1
    assert log[-1]["tx"] == result["txs"][0]
    assert log[-1]["consumed"] == []  # consumed already, by the migration: never twice
    assert "topics/index.md" in log[-1]["files"]  # the map, in the same transaction as its topics
    assert citations(tmp_path) == Counter({anchor_of(f"s/{node}"): 1 for node, _, _ in TURNS})
    index = parse_topic_index((tmp_path / "memory" / "topics" / "index.md").read_text("utf-8"))
    assert sum(entry.blocks for entry in index.entries) >= 1

    after = verify(tmp_path, "--strict")
    assert after["ok"], after["violations"]
    assert after["uncited"] == {"count": 0, "first": []}

    again = dagmem("reorganise", "--backfill", home=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "nothing to backfill" in again.stdout
    assert len(txlog(tmp_path)) == lines + 1  # nothing committed: each record is cited once
    assert citations(tmp_path) == Counter({anchor_of(f"s/{node}"): 1 for node, _, _ in TURNS})


def test_backfill_goes_in_batches_of_the_token_threshold(tmp_path: Path) -> None:
    migrated_home(tmp_path)
    run = dagmem("reorganise", "--backfill", "--threshold", "1", "--json", home=tmp_path)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert (result["records"], result["batches"]) == (4, 4)  # every turn reaches one token on its own
    assert [line["consumed"] for line in txlog(tmp_path)[-4:]] == [[], [], [], []]
    assert len(set(result["txs"])) == 4
    assert verify(tmp_path, "--strict")["uncited"]["count"] == 0


def test_verify_counts_uncited_records_past_the_first_few(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    turns = [
        (f"m{i}", "user" if i % 2 else "assistant", f"Turn number {i} of a long talk.") for i in range(1, 9)
    ]
    nodes = chain(store, "s", turns)
    write_archive(tmp_path, "s", [frame("s", node) for node in nodes])
    write_cursors(tmp_path, ["s"])
    assert migrate_home(FileSessionStore(tmp_path), tmp_path / "memory").ok
    report = verify(tmp_path)
    assert report["uncited"]["count"] == 8
    assert len(report["uncited"]["first"]) == 5
    assert "and 3 more" in dagmem("verify", home=tmp_path).stdout


def test_backfill_without_a_workspace_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    FileSessionStore(tmp_path).append("s", "user", "hello")
    run = dagmem("reorganise", "--backfill", home=tmp_path)
    assert run.returncode == 2
    assert "nothing to backfill" in run.stderr
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "memory").exists()


def test_a_written_home_has_nothing_to_backfill(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    chain(store, "s", TURNS)
    assert dagmem("write", "--force", home=tmp_path).returncode == 0
    lines = len(txlog(tmp_path))
    run = dagmem("reorganise", "--backfill", "--json", home=tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["records"] == 0
    assert len(txlog(tmp_path)) == lines
