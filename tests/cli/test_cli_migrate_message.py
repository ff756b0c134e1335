"""`dagmem migrate` with nothing to migrate says why without naming a file that does not exist as if it
did: a home with no cursor file is told so; a cursor file without cursors is named as one."""

from __future__ import annotations

import json
from pathlib import Path

from dagmem.tests._cli import dagmem_run


def test_nothing_to_migrate_names_the_cursor_file_only_as_what_it_is(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    none = dagmem_run("migrate", "--home", str(home))
    assert none.returncode == 0, none.stderr
    assert "has no memory/.dagmem/runtime.json" in none.stdout
    assert f"{home}/memory/.dagmem/runtime.json" not in none.stdout  # never as if it existed
    assert not (home / "memory").exists()  # and nothing created
    cursors = home / "memory" / ".dagmem" / "runtime.json"
    cursors.parent.mkdir(parents=True)
    cursors.write_text(json.dumps({"version": 1}))
    empty = dagmem_run("migrate", "--home", str(home))
    assert empty.returncode == 0, empty.stderr
    assert f"{cursors} holds no cursors" in empty.stdout
