"""`dagmem migrate`: adopt a home written by a position-cursor system (DESIGN §4)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..memory.adopt import RUNTIME_FILE, migrate_home, read_cursors
from ..memory.format import HomePaths
from ..memory.store import FileSessionStore
from ._errors import CommandError
from ._words import plural

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    home: Path = args.home
    if not home.is_dir():
        raise CommandError(f"--home {home}: no such directory")
    memory = HomePaths(home).memory
    if read_cursors(memory) is None:  # nothing to adopt: create nothing (not even the workspace)
        if args.json:
            print(json.dumps({"home": str(home), "found": False, "ok": True, "sessions": []}))
        else:
            path = memory / RUNTIME_FILE
            # Name the file only as what it is: one that exists but holds no cursors, or none at all.
            if path.exists():
                print(f"nothing to migrate: {path} holds no cursors")
            else:
                print(
                    f"nothing to migrate: {home} has no memory/{RUNTIME_FILE} (no position cursors to adopt)"
                )
        return 0
    report = migrate_home(FileSessionStore(home), memory)
    if args.json:
        print(json.dumps({"home": str(home), **report.as_json()}))
        return 0 if report.ok else 1
    for s in report.sessions:
        if s.outcome == "failed":
            print(f"{s.session}: FAILED {s.reason_code}: {s.detail}")
            continue
        note = f" ({s.detail})" if s.detail else ""
        print(
            f"{s.session}: {plural(s.kept, 'record')} verified in the archive ({s.archive}); "
            f"{s.consumed} consumed now, {s.marked} marked now{note}"
        )
    if report.ok:
        print("cursors removed from runtime.json: every session was migrated")
        return 0
    print("cursors kept in runtime.json: run `dagmem migrate` again once the failures are fixed")
    return 1
