"""`dagmem recall QUERY` and `dagmem core`: the read side from the command line (DESIGN §8).

Both only read: no lock, nothing created (a home without memory is an error, not a new workspace). They
call the same index and search as `Runtime.recall`, so a shell and an embedded host see the same hits.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..memory.durable import read_below
from ..memory.format import CORE_FILE, HomePaths
from ..memory.recall import (
    RecallIndex,
    RecallQuery,
    code_checks,
    code_label,
    core_facts,
    core_lines,
    find_hits,
    git_label,
    in_time_order,
    reader_for,
    render_context,
    search,
    status_label,
)
from ..memory.shapes import shapes_for
from ._errors import CommandError

if TYPE_CHECKING:
    from ..memory.checkout import GitReader

__all__ = ["core_command", "recall_command"]


def _memory(home: Path) -> Path:
    memory = HomePaths(home).memory
    if not memory.is_dir():
        raise CommandError(f"--home {home}: no memory/ directory (nothing has been written yet)")
    return memory


def recall_command(args: argparse.Namespace) -> int:
    home: Path = args.home
    memory = _memory(home)
    if args.tip is not None and args.session is None:
        raise CommandError("--tip needs --session")
    store = None
    tip = None
    if args.session is not None and args.tip is not None:
        # Only here the session store and the listing load (a fresh process answering a query
        # without a tip reads no session file while the shape cache is current).
        from ..memory.listing import resolve_stored
        from ..memory.store import FileSessionStore

        store = FileSessionStore(home, read_only=True)
        tip = resolve_stored(store, args.session, args.tip)
    # Shapes from the shape cache where it is current (read-only: it creates nothing), else the files.
    with shapes_for(home, store=store) as shapes:
        reader = reader_for(shapes.for_reader(args.session, tip), args.session, tip)
    index = RecallIndex.open(memory)
    git = _git_reader(memory, getattr(args, "checkout", None))
    query = RecallQuery(args.query, k=args.k, siblings=args.siblings, history=args.history)
    if args.context:  # rendered only: the plain records, without the `Hit` models (pydantic)
        found = find_hits(index, query, reader=reader, checkout=git)
        if git is not None:
            verdicts = code_checks(found, git.checkout.repo, git.checkout.root)
            found = [
                h if v is None else dataclasses.replace(h, code=v)
                for h, v in zip(found, verdicts, strict=True)
            ]
        print(render_context(found, _core(memory)))
        return 0
    hits = search(index, query, reader=reader, checkout=git)
    if git is not None:
        verdicts = code_checks(hits, git.checkout.repo, git.checkout.root)
        hits = [
            h if v is None else h.model_copy(update={"code": v}) for h, v in zip(hits, verdicts, strict=True)
        ]
    if args.json:
        print(json.dumps({"query": args.query, "hits": [hit.model_dump(mode="json") for hit in hits]}))
        return 0
    if not hits:
        print("no memory matches")
    for number, hit in enumerate(hits, 1):
        branch = f" [{hit.branch}]" if hit.branch else ""
        label = status_label(hit)  # not current, or partly superseded
        status = f" [{label}]" if label else ""
        for label in (git_label(hit), code_label(hit)):
            status += f" [{label}]" if label else ""
        print(f"{number}. {hit.score:.3f}{branch}{status} {hit.topic}#{hit.block_id} ({hit.date})")
        print(f"   {hit.text}")
        for evidence in in_time_order(hit.evidence):
            print(f"   - {evidence.role} {evidence.source_id} {evidence.time}")
    return 0


def _git_reader(memory: Path, checkout: str | None) -> GitReader | None:
    """The reader at `--checkout`: its merge facts computed by `git` when the cache lacks them, never
    written (a read-only command creates nothing)."""
    if checkout is None:
        return None
    if not Path(checkout).is_dir():
        raise CommandError(f"--checkout {checkout}: not a directory")
    from ..memory.checkout import reader_at

    return reader_at(memory, checkout, run_git=True, write=False)


def _core(memory: Path) -> str:
    data = read_below(memory, CORE_FILE)  # never through a symlink: UnsafePath (exit 2) instead
    return "" if data is None else data.decode("utf-8", "replace")


def core_command(args: argparse.Namespace) -> int:
    """The core facts as plain claims with their dates, one per line, as `render_context` injects them
    (`--json` adds the Markdown of `memory/core.md`, for tools)."""
    core = _core(_memory(args.home))
    if args.json:
        facts = [
            {"text": fact.text, "date": fact.date, "block_id": fact.block_id} for fact in core_facts(core)
        ]
        print(json.dumps({"core": core, "facts": facts}))
        return 0
    lines = core_lines(core)
    if not lines:  # stdout stays empty (nothing to inject); a person is told why
        print(f"no core block yet ({args.home / 'memory' / 'core.md'} is empty or missing)", file=sys.stderr)
    for line in lines:
        print(line)
    return 0
