"""`dagmem reorganise --backfill [--threshold N] [--distiller NAME]`: distil the archived turns that no
block cites (those a migration adopted, whose memory the old system wrote), in batches of `--threshold`
tokens, through the writer: each lands in one transaction and is then cited, so a second run (or a run
after a crash) finds nothing more to do. A progress bar runs on stderr on a terminal."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..memory.format import HomePaths
from ..memory.write import backfill, distiller_named
from ..memory.writing import open_for_writing
from ._errors import CommandError
from ._words import plural

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    from ._console import console as human_console

    home: Path = args.home
    layout = HomePaths(home)
    if not layout.workspace.state.is_dir():
        raise CommandError(f"--home {home}: no memory/ workspace yet, so nothing to backfill")
    distiller = distiller_named(args.distiller, home)  # a missing model setting: one line, nothing written
    console = human_console(stderr=True)
    with (
        open_for_writing(home) as workspace,
        Progress(console=console, transient=True, disable=args.json or not console.is_terminal) as progress,
    ):
        task = progress.add_task("backfilling", total=None)
        result = backfill(
            workspace,
            distiller,
            threshold=args.threshold,
            on_start=lambda total: progress.update(task, total=total),
            on_batch=lambda records: progress.advance(task, records),
        )
    if args.json:
        print(
            json.dumps(
                {
                    "home": str(home),
                    "records": result.records,
                    "batches": result.batches,
                    "txs": list(result.txs),
                }
            )
        )
        return 0
    if not result.records:
        print("nothing to backfill: every archived turn a transaction consumed is cited")
        return 0
    print(
        f"backfilled {plural(result.records, 'record')} in {plural(result.batches, 'batch')} "
        f"({plural(result.batches, 'transaction')})"
    )
    return 0
