"""`dagmem recall` and currency: `--json` carries each hit's status, superseded_by and superseded_on;
`--history` ranks superseded and left blocks by relevance; the plain listing labels them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmem.tests._cli import dagmem_run
from dagmem.tests._hand_home import MOVED, HandHome


@pytest.fixture
def hand(tmp_path: Path) -> HandHome:
    return HandHome(tmp_path / "home")


def test_the_command_line_passes_status_and_history_through(hand: HandHome) -> None:
    query = "do I live in Paris near the canal"
    found = dagmem_run("recall", query, "--home", str(hand.root), "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert [h["block_id"] for h in hits[:2]] == [hand.berlin_id, hand.paris_id]
    assert (hits[1]["status"], hits[1]["superseded_by"], hits[1]["superseded_on"]) == (
        "superseded",
        hand.berlin_id,
        MOVED,
    )
    assert hits[0]["status"] == "current"
    history = dagmem_run("recall", query, "--home", str(hand.root), "--json", "--history")
    assert [h["block_id"] for h in json.loads(history.stdout)["hits"][:2]] == [hand.paris_id, hand.berlin_id]
    shown = dagmem_run("recall", query, "--home", str(hand.root), "--history")
    assert f"[superseded {MOVED} by {hand.berlin_id}]" in shown.stdout.splitlines()[0]


def test_history_with_a_session_and_its_left_tip(hand: HandHome) -> None:
    query = "which conference city Lisbon hall"
    other = dagmem_run("recall", query, "--home", str(hand.root), "--session", "s1", "--json")
    hits = json.loads(other.stdout)["hits"]
    assert [(h["block_id"], h["status"]) for h in hits[:2]] == [
        (hand.kyoto_id, "current"),
        (hand.lisbon_id, "left"),
    ]
    own = dagmem_run(
        "recall", query, "--home", str(hand.root), "--session", "s3", "--tip", hand.lisbon, "--json"
    )
    first = json.loads(own.stdout)["hits"][0]
    assert (first["block_id"], first["status"], first["branch"]) == (hand.lisbon_id, "current", "on")
    listed = dagmem_run("recall", query, "--home", str(hand.root), "--history")
    assert "[left branch" in listed.stdout.splitlines()[0]
