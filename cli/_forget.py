"""`dagmem forget (--node S/N | --session S | --match TEXT [--regex]) [--yes]`: show what would be
forgotten; with `--yes`, forget it and report whether any copy remains (exit 1 if one does)."""

from __future__ import annotations

import argparse
import json

from ..memory.forget import MIN_BYTES, forget, plan_forget
from ._errors import CommandError
from ._words import plural

__all__ = ["command"]


def command(args: argparse.Namespace) -> int:
    if args.regex and args.match is None:
        raise CommandError("--regex goes with --match")
    plan = plan_forget(args.home, node=args.node, session=args.session, match=args.match, regex=args.regex)
    if plan.too_short and not args.json:
        # Said before anything happens: "no copy left" below cannot cover a text the scan cannot look for.
        print(
            f"note: {plural(len(plan.too_short), 'matched text')} under {MIN_BYTES} bytes: the turns holding it and "
            "the topic names it gives are forgotten and scanned for, but so short a text cannot be scanned "
            "for on its own, so no scan can prove it gone"
        )
    if not args.yes:
        if args.json:
            print(json.dumps({"dry_run": True, **plan.as_json()}))
            return 0
        print(f"would forget {plural(len(plan.targets), 'turn')}:")
        for source in plan.targets:
            print(f"  {source}")
        for block in plan.blocks:
            print(f"  block {block} (removed, or re-distilled from the evidence it keeps)")
        for path in plan.files:
            print(f"  changes {path}")
        print("run again with --yes to forget" if plan.targets else "nothing to forget")
        return 0
    report = forget(args.home, plan)
    if args.json:
        print(json.dumps({**report.as_json(), "unscanned": len(plan.too_short)}))
        return 0 if report.clean else 1
    print(
        f"forgot {plural(len(report.targets), 'turn')}: {plural(len(report.blocks_removed), 'block')} removed, "
        f"{len(report.blocks_redistilled)} re-distilled, git history rewritten in "
        f"{plural(len(report.git_rewritten), 'session')} ({report.seconds:.2f} s)"
    )
    for copy in report.copies:
        print(f"a copy remains: {copy}")
    if report.copies:
        return 1
    print(
        "scan: no copy left under the home"
        + (
            f" (except what it cannot scan for: {plural(len(plan.too_short), 'text')} under {MIN_BYTES} bytes)"
            if plan.too_short
            else ""
        )
    )
    return 0
