"""`dagmem view [--session S] [--out FILE] [--open]`: the home drawn as one self-contained HTML file.

Read-only: the page is written outside the home (a path inside it is refused), and nothing in the home is
created or changed. The page goes to a new file beside `--out` that then replaces it: an existing `--out` is
never opened for writing, so a hard link or symlink there (to the evidence archive, say) is left as it was."""

from __future__ import annotations

import argparse
import json
import sys
import webbrowser
from pathlib import Path

from ..memory.durable import atomic_write_many
from ..view import read_home, render_page
from ._errors import CommandError
from ._words import plural

__all__ = ["command"]


def _inside(path: Path, home: Path) -> bool:
    return path.resolve().is_relative_to(home.resolve())


def command(args: argparse.Namespace) -> int:
    home: Path = args.home
    out: Path = args.out
    to_stdout = str(out) == "-"
    if not to_stdout:
        if _inside(out, home):
            raise CommandError(f"--out {out}: inside the home; `dagmem view` writes nothing there")
        if not out.parent.is_dir():
            raise CommandError(f"--out {out}: no such directory {out.parent}")
        if out.is_dir():
            raise CommandError(f"--out {out}: a directory")
    if args.open and to_stdout:
        raise CommandError("--open needs --out FILE, not -")
    page, stats = render_page(read_home(home, args.session), filtered=bool(args.session))
    if to_stdout:
        sys.stdout.write(page)
        return 0
    atomic_write_many([(out, page.encode("utf-8"))], site="view")
    if args.open and not webbrowser.open(out.resolve().as_uri()):
        # No browser could be started (no display, none installed): the page is there all the same.
        print(f"dagmem view: could not open a web browser; open {out} in one", file=sys.stderr)
    if args.json:
        print(
            json.dumps(
                {
                    "out": str(out),
                    "bytes": stats.bytes,
                    "sessions": stats.sessions,
                    "nodes": stats.nodes,
                    "drawn": stats.drawn,
                    "tips": stats.tips,
                }
            )
        )
    else:
        print(
            f"wrote {out}: {plural(stats.sessions, 'session')}, {plural(stats.nodes, 'node')} in "
            f"{plural(stats.drawn, 'row')}, {plural(stats.tips, 'tip')}, {stats.bytes:,} bytes"
        )
    return 0
