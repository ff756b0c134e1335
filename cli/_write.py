"""The `dagmem write` command."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path

from ..memory.store import FileSessionStore
from ..memory.write import SessionResult, distiller_named
from ..memory.writing import write_home
from ._errors import EXIT_FAILED, EXIT_OK, EXIT_RETRY
from ._words import plural

__all__ = ["exit_status", "owed_lines", "write_command"]


def exit_status(results: Iterable[SessionResult]) -> int:
    """0 when every session is fine; 1 for any permanent failure or invalid session; 75 when only
    retryable failures remain."""
    status = EXIT_OK
    for result in results:
        if result.outcome == "invalid" or (result.outcome == "failed" and not result.retryable):
            return EXIT_FAILED
        if result.outcome == "failed":
            status = EXIT_RETRY
    return status


def write_command(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    from ._console import console as human_console

    home: Path = args.home
    distiller = distiller_named(args.distiller, home)  # a missing model setting: one line, nothing written
    store = FileSessionStore(home)
    named: list[str] | None = args.session or None  # None: every session (a pass that can clear a failure)
    sessions = named if named is not None else store.session_ids()
    console = human_console(stderr=True)
    results: list[SessionResult] = []
    with Progress(console=console, transient=True, disable=args.json or not console.is_terminal) as progress:
        task = progress.add_task("writing", total=len(sessions))

        def done(result: SessionResult) -> None:
            progress.advance(task)
            if not args.json and result.outcome in ("failed", "invalid"):
                progress.console.print(f"[red]{result.session}: {result.reason_code}[/red] {result.detail}")

        results = write_home(
            home,
            sessions=named,
            force=args.force,
            distiller=distiller,
            threshold=args.threshold,
            idle_after=args.idle_after,
            on_session=done,
        )
    status = exit_status(results)
    if args.json:
        print(json.dumps({"home": str(home), "exit": status, "sessions": [r.as_json() for r in results]}))
        return status
    written = [r for r in results if r.outcome == "written"]
    failed = [r for r in results if r.outcome in ("failed", "invalid")]
    for result in written:
        print(
            f"{result.session}: wrote {plural(result.records, 'record')} in {plural(result.batches, 'batch')}"
        )
    print(f"{plural(len(results), 'session')}: {len(written)} written, {len(failed)} failed")
    for line in owed_lines(results):
        print(line)
    return status


def owed_lines(results: Iterable[SessionResult]) -> list[str]:
    """What is still owed and why: records a failure left (by reason, and when they are tried again) are
    never called "not yet due"; those that are not due yet are."""
    after: dict[tuple[str, bool], int] = {}  # (reason code, retryable) -> records a failure left owed
    not_due = 0
    for r in results:
        if r.outcome in ("failed", "invalid") and r.pending:
            key = (str(r.reason_code or r.outcome.upper()), bool(r.retryable))
            after[key] = after.get(key, 0) + r.pending
        else:
            not_due += r.pending
    lines = []
    for (code, retryable), count in sorted(after.items()):
        when = (
            "tried again by the next `dagmem write` (a running dagmem or the hooks' worker retries on its own)"
            if retryable
            else "each `dagmem write` tries them again, failing the same way until the cause named above is fixed"
        )
        lines.append(f"{plural(count, 'record')} owed after a failure ({code}): {when}")
    if not_due or not after:
        lines.append(
            f"{plural(not_due, 'record')} owed but not yet due"
            + (" (use --force to write them)" if not_due else "")
        )
    return lines
