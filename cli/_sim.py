"""`dagmem sim`: thousands of branching sessions through the real actors in virtual time (DESIGN §6).

    dagmem sim [--sessions N] [--seed S] [--homes H [--workers W]] [--faults [RATE]] [--threshold T]
               [--content LOCOMO.json] [--real-fs [--fsync]] [--git-sample K] [--out DIR] [--trace] [--json]

Runs the workload, drains, checks the home with the independent oracle, replays a sample of sessions into
real git, then writes `DIR/report.json`, prints a summary table (or, with `--json`, one JSON object) and
plots `DIR/report.png` when matplotlib is installed (the `sim` extra; without it one line on stderr says
so, and the run is not lost); with `--trace`, `DIR/trace.jsonl` too; with `--real-fs`, the home is left
at `DIR/home` (`DIR/home/000`, `001`, ... with several homes). Exit status 0 when the oracle found
nothing, 1 otherwise (the seed, the offending ids and the command that replays the run are printed). Progress bars run on stderr: the sessions, then the git
replay's commits.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sim import SimConfig, SimResult, gitgrowth, load_content, report, run
from ._errors import CommandError
from ._paths import out_directory
from ._words import plural

if TYPE_CHECKING:
    from rich.progress import TaskID

__all__ = ["command", "replay_command"]

log = logging.getLogger("dagmem.sim")

_HOME_MARK = ".dagmem-sim-home"  # marks a home this command made, so a rerun may replace it


def replay_command(config: SimConfig, out: Path) -> str:
    """The one command that runs `config` again and keeps its trace."""
    parts = ["dagmem", "sim", "--seed", str(config.seed), "--sessions", str(config.sessions)]
    if config.homes != 1:
        parts += ["--homes", str(config.homes)]
    if config.faults:
        parts += ["--faults", repr(config.faults)]
    if config.threshold != SimConfig.threshold:
        parts += ["--threshold", str(config.threshold)]
    if config.content is not None:
        parts += ["--content", str(config.content)]
    if config.real_fs:
        parts.append("--real-fs")
    if config.fsync:
        parts.append("--fsync")
    parts += ["--git-sample", "0", "--trace", "--out", str(out / "replay")]
    return shlex.join(parts)


class _Interrupt:
    """Ctrl-C for the whole command, remembered, and raised by `check` at the next progress report (every
    session done, every phase, every git commit), so that one Ctrl-C always stops the run at a point it
    can stop at. (Raised by the handler, it was printed and dropped inside a finaliser, or hung the
    event loop it landed in.)"""

    def __init__(self) -> None:
        self.hit = False
        self._previous: Any = None
        self._unraisable = sys.unraisablehook

    def __enter__(self) -> _Interrupt:
        self._previous = signal.signal(signal.SIGINT, self._handler)
        self._unraisable = sys.unraisablehook
        sys.unraisablehook = self._dropped
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._previous)
        sys.unraisablehook = self._unraisable

    def _dropped(self, unraisable: Any) -> None:
        """A Ctrl-C a finaliser dropped is not news (it is remembered): no "Exception ignored" traceback."""
        if not (self.hit and isinstance(unraisable.exc_value, KeyboardInterrupt)):
            self._unraisable(unraisable)

    def _handler(self, signum: int, frame: object) -> None:
        # The first Ctrl-C is only remembered: raised here it lands wherever the main thread is, inside
        # the event loop's own bookkeeping too, which it can leave hung (seen under load). `check` raises
        # it at the next progress report, a point where the run can stop. A second Ctrl-C raises at once.
        if self.hit:
            raise KeyboardInterrupt
        self.hit = True

    def check(self, *, any_thread: bool = False) -> None:
        """Raise the remembered Ctrl-C: in the main thread, or in this one (a git replay's worker, which
        then stops at its next commit) with `any_thread`."""
        if self.hit and (any_thread or threading.current_thread() is threading.main_thread()):
            raise KeyboardInterrupt


class _Progress:
    """The rich progress bar on stderr (or nothing, when stderr is not a terminal and --json is on)."""

    def __init__(self, sessions: int, enabled: bool, interrupt: _Interrupt | None = None) -> None:
        self.interrupt = interrupt or _Interrupt()
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[virtual]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            disable=not enabled,
            transient=False,
        )
        self.task = self.progress.add_task("simulating sessions", total=sessions, virtual="")
        self.git_task: TaskID | None = None

    def __enter__(self) -> _Progress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def session_done(self, done: int, sessions: int, virtual_s: float) -> None:
        self.interrupt.check()
        self.progress.update(self.task, completed=done, virtual=f"virtual {virtual_s / 3600:,.1f} h")

    def phase(self, name: str) -> None:
        self.interrupt.check()
        log.info("phase: %s", name)
        self.progress.update(self.task, description=name)

    def git_replay(self, sessions: int, commits: int) -> None:
        """The git replay (a third of a run's wall time) gets a bar of its own, one step per commit."""
        self.progress.update(self.task, description="sessions simulated and checked")
        self.git_task = self.progress.add_task(
            f"git replay of {sessions} session(s)", total=commits, virtual="commits"
        )

    def git_commits(self, count: int) -> None:
        """Called from the replay's worker threads (rich's updates take a lock)."""
        self.interrupt.check(any_thread=True)
        if self.git_task is not None:
            self.progress.advance(self.git_task, count)


def _prepare_home(out: Path) -> Path:
    home = out / "home"
    if home.exists():
        if not (home / _HOME_MARK).exists():
            raise CommandError(f"--out {out}: {home} exists and was not made by dagmem sim; choose another")
        shutil.rmtree(home)
    home.mkdir(parents=True)
    (home / _HOME_MARK).write_text("made by dagmem sim; replaced by the next run with the same --out\n")
    return home


def _check_content(path: Path | None) -> None:
    """A `--content` file that cannot be used is the user's mistake, found before the run starts."""
    if path is None:
        return
    if not path.is_file():
        raise CommandError(f"--content {path}: {'a directory' if path.is_dir() else 'no such file'}")
    try:
        load_content(path)
    except (OSError, ValueError) as exc:  # JSON and UTF-8 errors are ValueErrors
        reason = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise CommandError(f"--content {path}: not a LoCoMo-format JSON file ({reason})") from None


def command(args: argparse.Namespace) -> int:
    if not getattr(args, "verbose", 0):
        # Injected failures are logged as warnings by the product; the report counts them instead.
        logging.getLogger("dagmem").setLevel(logging.ERROR)
    if args.homes > args.sessions:
        raise CommandError(f"--homes {args.homes}: more homes than --sessions ({args.sessions})")
    _check_content(args.content)
    with _Interrupt() as interrupt:
        try:
            return _simulate(args, interrupt)
        except BaseException:
            if not interrupt.hit:
                raise
            # Whatever the Ctrl-C broke on its way out (a task group's error, a runtime stopped mid-way).
            print("dagmem sim: interrupted", file=sys.stderr)
            return 130


def _simulate(args: argparse.Namespace, interrupt: _Interrupt) -> int:
    out = out_directory(Path(args.out))
    home = _prepare_home(out) if args.real_fs else None
    trace_path = out / "trace.jsonl" if args.trace else None
    config = SimConfig(
        seed=args.seed,
        sessions=args.sessions,
        homes=args.homes,
        faults=args.faults,
        threshold=args.threshold,
        real_fs=args.real_fs,
        fsync=args.fsync,
        content=args.content,
        home=home,
        git_sample=args.git_sample,
        trace_path=trace_path,
    )
    started = time.perf_counter()
    log.info("simulating %s in %s", plural(config.sessions, "session"), plural(config.homes, "home"))
    with _Progress(config.sessions, enabled=sys.stderr.isatty(), interrupt=interrupt) as progress:
        result: SimResult = run(config, observer=progress, workers=args.workers)
        progress.git_replay(len(result.git_ops), gitgrowth.commits(result.git_ops))
        log.info(
            "git replay of %d sessions, %d commits", len(result.git_ops), gitgrowth.commits(result.git_ops)
        )
        git_started = time.perf_counter()
        growth = gitgrowth.measure(result.git_ops, progress=progress.git_commits)
        git_s = time.perf_counter() - git_started
    interrupt.check()
    report_path, plot_path = out / "report.json", out / "report.png"
    plotting = report.can_plot()
    if not plotting:
        plot_path.unlink(missing_ok=True)  # an earlier run's plot is not this run's
    paths = {
        "report_path": str(report_path),
        "plot_path": str(plot_path) if plotting else None,
        "trace_path": None if trace_path is None else str(trace_path),
    }
    summary: dict[str, Any] = report.build(
        result,
        growth,
        wall_s=time.perf_counter() - started,
        git_s=git_s,
        replay=replay_command(config, out),
        paths=paths,
    )
    # The results first, so that nothing after them (the plot) can lose the run.
    report_path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(summary))
    else:
        report.print_summary(summary)
    if plotting:
        report.plot(result, growth, plot_path)
    else:
        print(report.NO_PLOT, file=sys.stderr)
    if summary["violations"]:
        ids = sorted({v["subject"] for v in summary["violations"]})
        print(
            f"dagmem sim: seed {config.seed} FAILED with {len(summary['violations'])} violation(s); "
            f"offending ids: {', '.join(ids[:50])}{' …' if len(ids) > 50 else ''}\n"
            f"replay: {summary['replay']}",
            file=sys.stderr,
        )
        return 1
    return 0
