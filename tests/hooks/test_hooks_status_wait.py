"""`dagmem status --wait` after a real hook: the detached worker it started marks itself in the lock file,
status sees it run, and `--wait` returns 0 once the worker has imported and written the transcript (the
session owes nothing then); a script can rely on it instead of polling files."""

from __future__ import annotations

import json
from pathlib import Path

from dagmem.tests._cli import dagmem_run
from dagmem.tests.hooks._claude import Transcript, hook


def test_status_wait_returns_when_the_hooks_worker_has_written_the_session(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "t" / "s.jsonl")
    u = t.user(None, "Our wifi password is on the fridge, under the magnet.")
    t.assistant(u, "Noted: on the fridge, under the magnet.")
    end = hook("SessionEnd", t.payload("SessionEnd"), project=tmp_path)
    assert end.returncode == 0, end.stderr
    home = tmp_path / ".dagmem"
    waited = dagmem_run("status", "--json", "--wait", "120", "--home", str(home))
    assert waited.returncode == 0, waited.stdout + waited.stderr
    report = json.loads(waited.stdout)
    assert report["hooks"]["queued"] == 0
    assert report["hooks"]["worker_running"] is False
    assert report["waited"]["done"] is True
    assert report["pending_turns"] == 0
    assert report["sessions"] == {t.session: 0}  # the transcript was imported ...
    assert "fridge" in (home / "memory" / "sources" / f"{t.session}.md").read_text()  # ... and written
