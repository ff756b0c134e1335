"""`dagmem install`: plans the change to the host's configuration, prints it as a diff, writes it."""

from __future__ import annotations

import argparse
import json
import sys

from ..hooks import install
from ._errors import CommandError

__all__ = ["install_command"]


def install_command(args: argparse.Namespace) -> int:
    if args.project is not None and not args.project.is_dir():  # never a project made up by a typo
        raise CommandError(f"--project {args.project}: no such directory; nothing changed")
    try:
        project = args.project.absolute() if args.project is not None else None
        path = install.target(args.host, project)
        change = install.install(
            args.host, path, home=args.home, uninstall=args.uninstall, dry_run=args.dry_run
        )
    except (OSError, RecursionError, RuntimeError) as exc:
        # The file system's refusals the install did not name itself (a working directory gone): still
        # one line, exit 2, never a traceback.
        raise CommandError(f"dagmem install {args.host}: {exc}; nothing changed") from None
    if args.json:
        print(
            json.dumps(
                {
                    "file": str(change.path),
                    "changed": change.changed,
                    "dry_run": args.dry_run,
                    "diff": change.diff(),
                }
            )
        )
        return 0
    verb = "would change" if args.dry_run else "changed"
    if not change.changed:
        what = "not installed" if args.uninstall else "already installed"
        print(f"{change.path}: {what}; nothing to change", file=sys.stderr)
        return 0
    sys.stdout.write(change.diff())
    print(f"{verb} {change.path}", file=sys.stderr)
    return 0
