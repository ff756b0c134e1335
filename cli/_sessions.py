"""`dagmem sessions` (each session: nodes, head, tips, what is owed) and `dagmem show SESSION [--tip T]`
(one branch, root to tip, as text). Both only read: nothing in the home is created or changed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..memory.errors import UnknownSession
from ..memory.listing import list_sessions, resolve_stored
from ..memory.store import FileSessionStore
from ._errors import CommandError
from ._words import plural

__all__ = ["sessions_command", "show_command"]


def sessions_command(args: argparse.Namespace) -> int:
    summaries = list_sessions(args.home)
    if args.json:
        print(json.dumps({"home": str(args.home), "sessions": [s.as_json() for s in summaries]}))
        return 0
    if not summaries:
        print(f"no sessions in {args.home}")
        return 0
    for summary in summaries:
        if summary.problem is not None:
            print(f"{summary.id}: cannot be read: {summary.problem}")
            continue
        print(
            f"{summary.id}: {plural(summary.nodes, 'node')}, head {summary.head or '(none)'}, "
            f"{plural(len(summary.tips), 'tip')}, {plural(summary.owed, 'record')} owed"
        )
        for tip in summary.tips:
            mark = " (head)" if tip.head else ""
            print(f"  {tip.id}{mark} #{tip.seq} {tip.role}: {tip.words}")
    return 0


def show_command(args: argparse.Namespace) -> int:
    home: Path = args.home
    store = FileSessionStore(home, read_only=True)
    session_id: str = args.session
    if not store.has_session(session_id):
        raise UnknownSession(session_id)
    snapshot = store.load(session_id)
    snapshot.require_valid()
    if args.tip is not None:
        tip = resolve_stored(store, session_id, args.tip)
    elif snapshot.meta.head is not None:
        tip = snapshot.meta.head
    else:
        tips = snapshot.tips()
        if len(tips) != 1:
            raise CommandError(
                f"session {session_id!r} has no head and {plural(len(tips), 'tip')}: name one with --tip"
            )
        tip = tips[0].id
    branch = snapshot.branch(tip)
    if args.json:
        nodes = [
            {"id": n.id, "seq": n.seq, "role": n.role, "content": n.content, "created_at": n.created_at}
            for n in branch
        ]
        print(json.dumps({"session": session_id, "tip": tip, "head": snapshot.meta.head, "nodes": nodes}))
        return 0
    head = " (the head)" if tip == snapshot.meta.head else ""
    print(f"session {session_id}, branch to {tip}{head}: {plural(len(branch), 'turn')}")
    for node in branch:
        print(f"\n#{node.seq} {node.role} {node.id}")
        for line in node.content.splitlines() or [""]:
            print(f"  {line}")
    return 0
