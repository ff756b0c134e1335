"""`dagmem reorganise [--distiller NAME]`: merge duplicate blocks and mark superseded ones, in one transaction.

Identical claims merge deterministically, and a block a newer block of its file updates or retracts is
marked superseded (the write's rules); `--distiller openai` also merges the blocks the model judges to
say the same thing and marks the supersessions it finds (checked by the same rules: never between
alternatives of one fork), two calls per topic file with two or more blocks. It reports the files it changed;
a pass that changes nothing says so and commits nothing."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..memory.format import HomePaths
from ..memory.store import FileSessionStore
from ..memory.write import distiller_named, one_path_in, reorganise
from ..memory.writing import open_for_writing
from ._errors import CommandError
from ._words import plural

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    home: Path = args.home
    layout = HomePaths(home)
    if not layout.workspace.state.is_dir():
        raise CommandError(f"--home {home}: no memory/ workspace yet, so nothing to reorganise")
    judge = distiller_named(args.distiller, home)
    store = FileSessionStore(home, read_only=True) if layout.sessions.is_dir() else None
    with open_for_writing(home) as workspace:
        result = reorganise(workspace, judge=judge, one_path=None if store is None else one_path_in(store))
    if args.json:
        print(
            json.dumps(
                {
                    "home": str(home),
                    "tx": result.tx,
                    "merged": result.merged,
                    "superseded": result.superseded,
                    "regrouped": result.regrouped,
                    "changed": list(result.changed),
                }
            )
        )
        return 0
    if result.tx is None:
        print("nothing to reorganise: no duplicate blocks, nothing superseded, no file changed")
        return 0
    print(
        f"merged {plural(result.merged, 'duplicate block')}, marked "
        f"{plural(result.superseded, 'block')} superseded and moved {plural(result.regrouped, 'block')} "
        f"to the page of its subject in one transaction ({result.tx}); changed:"
    )
    for path in result.changed:
        print(f"  {path}")
    return 0
