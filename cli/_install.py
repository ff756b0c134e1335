"""`dagmem install`: plans the change to the host's configuration, prints it as a diff, writes it."""

from __future__ import annotations

import argparse
import json
import sys

from ..hooks import install

__all__ = ["install_command"]


def install_command(args: argparse.Namespace) -> int:
    path = install.target(args.host, args.project.absolute() if args.project is not None else None)
    change = install.plan(args.host, path, home=args.home, uninstall=args.uninstall)
    if not args.dry_run:
        install.apply(change)
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
