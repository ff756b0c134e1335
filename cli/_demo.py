"""`dagmem demo`: a small branching conversation appended, forked, written to memory and shown."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..memory.format import TOPIC_INDEX, HomePaths, Role
from ..memory.store import FileSessionStore
from ..memory.writing import write_home
from ._words import plural

__all__ = ["command", "run_demo"]

_TRUNK = [
    (Role.USER, "I'm planning a trip to Lisbon in May. What should I pack?"),
    (
        Role.ASSISTANT,
        "Light layers, a rain jacket and comfortable shoes: Lisbon is hilly and May can be showery.",
    ),
    (Role.USER, "Which neighbourhood should I stay in?"),
    (Role.ASSISTANT, "Alfama for atmosphere, Chiado for shops and restaurants, Príncipe Real for quiet."),
    (Role.USER, "Is a day trip to Sintra worth it?"),
    (Role.ASSISTANT, "Yes: Pena Palace and Quinta da Regaleira. Go early on a weekday to avoid queues."),
]
_RETRY = [
    (Role.USER, "Which neighbourhood is best for a family with small children?"),
    (Role.ASSISTANT, "Parque das Nações: flat, green, near the Oceanarium, with easy metro links."),
]


def run_demo(home: Path, session_id: str, *, as_json: bool = False) -> int:
    store = FileSessionStore(home)
    if not store.has_session(session_id):
        ids = [store.append(session_id, role, text).id for role, text in _TRUNK]
        # The user goes back to the second question and asks it differently: a fork after turn 2.
        node = store.append(session_id, _RETRY[0][0], _RETRY[0][1], predecessor=ids[1])
        store.append(session_id, _RETRY[1][0], _RETRY[1][1], predecessor=node.id)
    # The session is over: write every branch (head first); the shared prefix is written once.
    [result] = write_home(home, sessions=[session_id], force=True)
    snapshot = store.load(session_id)
    tips = snapshot.tips()
    paths = HomePaths(home).workspace
    topics = sorted(
        relpath
        for p in paths.topics.glob("*.md")
        if (relpath := p.relative_to(paths.root).as_posix()) != TOPIC_INDEX
    )
    if as_json:
        branches = {tip.id: [n.id for n in snapshot.branch(tip.id)] for tip in tips}
        print(
            json.dumps(
                {
                    "home": str(home),
                    "session": session_id,
                    "head": snapshot.meta.head,
                    "branches": branches,
                    "written": result.as_json(),
                    "topics": topics,
                }
            )
        )
        return 0
    print(
        f"home {home}, session {session_id!r}: {plural(len(snapshot.nodes), 'turn')} on "
        f"{plural(len(tips), 'branch')}"
    )
    for tip in tips:
        marker = " (head)" if tip.id == snapshot.meta.head else ""
        print(f"\nbranch ending at {tip.id}{marker}:")
        for node in snapshot.branch(tip.id):
            print(f"  {node.id:>4} {node.role:<9} {node.content[:72]}")
    print(
        f"\nwritten now: {plural(result.records, 'record')} in {plural(result.batches, 'batch')}; "
        f"owed: {result.pending}"
    )
    print(f"evidence: {paths.source(session_id)}")
    for relpath in topics:
        print(f"\n--- {relpath}")
        print((paths.root / relpath).read_text(encoding="utf-8").rstrip())
    return 0


def command(args: argparse.Namespace) -> int:
    return run_demo(args.home, args.session, as_json=args.json)
