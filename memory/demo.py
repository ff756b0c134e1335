"""`dagmem demo`: a small branching conversation appended, forked and shown."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .node import Role
from .store import FileSessionStore

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
    ids: list[str] = []
    if store.has_session(session_id):
        snapshot = store.load(session_id)
    else:
        for role, text in _TRUNK:
            ids.append(store.append(session_id, role, text).id)
        # The user goes back to the second question and asks it differently: a fork at turn 2.
        fork_at = ids[1]
        node = store.append(session_id, _RETRY[0][0], _RETRY[0][1], predecessor=fork_at)
        store.append(session_id, _RETRY[1][0], _RETRY[1][1], predecessor=node.id)
        snapshot = store.load(session_id)
    tips = snapshot.tips()
    branches = {tip.id: [n.id for n in snapshot.branch(tip.id)] for tip in tips}
    if as_json:
        print(
            json.dumps(
                {"home": str(home), "session": session_id, "head": snapshot.meta.head, "branches": branches}
            )
        )
        return 0
    print(f"home {home}, session {session_id!r}: {len(snapshot.nodes)} nodes, {len(tips)} tips")
    for tip in tips:
        marker = " (head)" if tip.id == snapshot.meta.head else ""
        print(f"\nbranch ending at {tip.id}{marker}:")
        for node in snapshot.branch(tip.id):
            print(f"  {node.id:>4} {node.role:<9} {node.content[:70]}")
    return 0


def command(args: argparse.Namespace) -> int:
    return run_demo(args.home, args.session, as_json=args.json)
