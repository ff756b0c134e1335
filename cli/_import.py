"""`dagmem import FORMAT PATH... [--session ID] [--follow]`: agent transcripts into sessions (DESIGN §10).

Without `--follow`, the files are read to their end and their new turns appended through the file store
(a progress bar on stderr while it runs). With `--follow`, a `dagmem.Runtime` is started on the home and
fed every new line as the files grow (polled), so memory is written as the conversation goes; Ctrl-C (or
SIGTERM) stops it cleanly with a boundary write of every session followed.

A plain import into a home a runtime is serving is refused: that runtime keeps its own view of the
sessions and would not see the turns appended beside it (feed it with `--follow`, which goes through it,
or stop it first). The import holds the serving lock while it runs, so no runtime opens mid-import.

Exit 0 when any turn was imported (or was there already); 1 when lines were read but nothing of them could
be imported; 2 (a mistake) when no line of any file looked like the format."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

import anyio

from ..memory.adopt import Follower, Importer, ImportReport, SourceClock, import_into_store
from ..memory.format import HomePaths
from ..memory.store import FileSessionStore
from ..memory.workspace import HomeBusy, ServingLock
from ._errors import EXIT_FAILED, CommandError
from ._words import plural

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    home: Path = args.home
    if home.exists() and not home.is_dir():
        raise CommandError(f"--home {home}: not a directory")
    importer = Importer(args.format, args.paths, session=args.session)  # bad paths raise before any write
    if not importer.sources:
        raise CommandError(f"no {args.format} transcript files under {' '.join(map(str, args.paths))}")
    clock = SourceClock()
    store = FileSessionStore(home, clock=clock)
    if args.follow:
        report, shown = anyio.run(_follow, args, importer, store, clock)
        _print(args, report, shown)
        return 0
    serving = _serving_lock(home)
    try:
        report = _import(args, importer, store, clock)
    finally:
        if serving is not None:
            serving.release()
    unrecognised = importer.unrecognised()
    if unrecognised and len(unrecognised) == len(importer.sources):
        # Every file is of another format: a mistake on the command line, and nothing was written.
        if not args.json:  # what was wrong with the lines, before the one-line verdict
            for problem in report.problems:
                if problem.line:
                    print(f"warning: {problem}", file=sys.stderr)
        files = unrecognised[0] if len(unrecognised) == 1 else f"the {len(unrecognised)} files"
        raise CommandError(f"no line of {files} looked like the {args.format} format; nothing imported")
    _print(args, report, 0)
    if not any(c.added or c.present for c in report.sessions.values()):
        if not args.json:
            print("error: nothing imported", file=sys.stderr)
        return EXIT_FAILED
    return 0


def _serving_lock(home: Path) -> ServingLock | None:
    """The home's serving lock, held for the import; a one-line refusal when a runtime serves it. A home
    with no workspace state has no runtime (a runtime creates it before it takes the lock)."""
    paths = HomePaths(home).workspace
    if not paths.state.is_dir():
        return None
    try:
        return ServingLock.acquire(paths.serving_lock)
    except HomeBusy as busy:
        raise CommandError(
            f"--home {home}: a dagmem runtime is serving it ({busy.holder}); an import beside it would not "
            "reach that runtime: stop it first, or feed it with `dagmem import --follow`",
            busy.code,
        ) from None


def _import(
    args: argparse.Namespace, importer: Importer, store: FileSessionStore, clock: SourceClock
) -> ImportReport:
    from rich.progress import Progress

    from ._console import console as human_console

    console = human_console(stderr=True)
    with Progress(console=console, transient=True, disable=args.json or not console.is_terminal) as progress:
        # A file at a time: a session's main transcript, then each of its sub-agents'.
        task = progress.add_task("importing", total=len(importer.sources))
        return import_into_store(importer, store, clock, on_file=lambda: progress.advance(task))


async def _follow(
    args: argparse.Namespace, importer: Importer, store: FileSessionStore, clock: SourceClock
) -> tuple[ImportReport, int]:
    """Follow until Ctrl-C; returns the report and how many of its problems were printed already."""
    from ..actors import Runtime

    async with Runtime.open(args.home, store=store) as runtime:
        follower = Follower(importer, runtime, store, clock)
        shown = 0

        def on_poll(report: ImportReport) -> None:
            nonlocal shown
            if not args.json:
                for problem in report.problems[shown:]:
                    print(f"warning: {problem}", file=sys.stderr)
            shown = len(report.problems)

        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_stop_on_signal, scope)
                if not args.json:
                    print(f"following {plural(len(importer.sources), 'file')}; Ctrl-C stops", file=sys.stderr)
                await follower.run(interval=args.interval, on_poll=on_poll)
        await follower.finish()  # the boundary write, before the runtime stops
        return follower.report, shown


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            scope.cancel()
            return


def _print(args: argparse.Namespace, report: ImportReport, shown: int) -> None:
    if args.json:
        print(json.dumps({"home": str(args.home), "format": args.format, **report.as_json()}))
        return
    for problem in report.problems[shown:]:
        print(f"warning: {problem}", file=sys.stderr)
    for sid, count in sorted(report.sessions.items()):
        extra = f", {count.failed} refused" if count.failed else ""
        print(f"{sid}: {plural(count.added, 'turn')} added, {count.present} already there{extra}")
    skipped = sum(1 for problem in report.problems if problem.line)  # line 0: a file-wide remark
    print(
        f"{plural(report.added, 'turn')} added from {plural(report.files, 'file')} "
        f"({plural(skipped, 'line')} skipped)"
    )
