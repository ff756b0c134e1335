"""`dagmem held [list | approve ID | reject ID]`: the hold queue (candidate core facts, and page blocks
that carry an instruction from text the person did not type).

A candidate core fact whose evidence the person did not type (a tool's output, a pasted page, the
assistant, an imported transcript), or that reads as an instruction to the agent, waits here instead of
reaching the always-injected core block. `approve` moves it to the core, `reject` sets it aside for good
(its evidence stays archived and cited; recall never returns it). Each decision is one transaction."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..memory.format import HomePaths
from ..memory.outcomes import WriteFailure
from ..memory.workspace import Workspace
from ..memory.write import approve, held_items, reject
from ..memory.writing import open_for_writing
from ._errors import CommandError
from ._words import plural

__all__ = ["command"]


def _valid_id(value: str | None) -> str:
    if value is None:
        raise CommandError("approve and reject need the held item's id (dagmem held lists them)")
    if not (len(value) == 10 and value.startswith("b-") and all(c in "0123456789abcdef" for c in value[2:])):
        raise CommandError(f"{value!r} is not a block id (b-<8 hex>)")
    return value


def command(args: argparse.Namespace) -> int:
    home: Path = args.home
    layout = HomePaths(home)
    if not layout.workspace.state.is_dir():
        if args.action == "list":
            print(json.dumps({"home": str(home), "held": []}) if args.json else "nothing is held")
            return 0
        raise CommandError(f"--home {home}: no memory/ workspace yet, so nothing is held")
    if args.action == "list":
        if args.block_id is not None:
            raise CommandError("list takes no id (approve ID or reject ID decide one)")
        with Workspace(layout.memory) as workspace:
            items = held_items(workspace)
        if args.json:
            print(
                json.dumps(
                    {
                        "home": str(home),
                        "held": [
                            {
                                "id": item.block_id,
                                "claim": item.claim,
                                "date": item.date,
                                "reason": item.reason,
                                "page": item.page,
                                "evidence": [
                                    {"source_id": e.source_id, "origin": e.origin, "text": e.text}
                                    for e in item.evidence
                                ],
                            }
                            for item in items
                        ],
                    },
                    ensure_ascii=False,
                )
            )
            return 0
        if not items:
            print("nothing is held")
            return 0
        print(f"{plural(len(items), 'item')} held for review (dagmem held approve ID | reject ID):")
        for item in items:
            print(f"  {item.block_id}  {item.date}  {item.claim}")
            if item.reason:
                print(f"      held: {item.reason}")
            print(f"      approving files it in {item.page}")
            for e in item.evidence:
                text = " ".join(e.text.split())
                print(f"      {e.source_id} [{e.origin or 'not archived'}] {text[:120]}")
        return 0
    block_id = _valid_id(args.block_id)
    try:
        with open_for_writing(home) as workspace:
            decided = (approve if args.action == "approve" else reject)(workspace, block_id)
    except WriteFailure as failure:
        raise CommandError(failure.detail, failure.code.value) from None
    if args.json:
        print(json.dumps({"home": str(home), "id": block_id, "decision": decided.decision, "tx": decided.tx}))
    elif decided.tx is None:
        print(f"{block_id} was {decided.decision} already: nothing to do")
    else:
        print(f"{block_id} {decided.decision} ({decided.tx})")
    return 0
