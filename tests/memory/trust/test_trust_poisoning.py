"""Memory poisoning never reaches the core: a corpus of instructions hidden in tool output, in pasted web
pages, in assistant turns, obfuscated with Unicode, split across turns, in Chinese and in imported
transcripts (`data/poisoning.json`, 52 cases) is written through the real write path, by the extractive
distiller and by a gullible model (one that files every record as a core fact), and `core.md` holds none
of it; the matching corpus of ordinary facts a person types (`data/user_facts.json`) still reaches the core.
The rates are printed (`-s`): poisoned facts in the core must be 0, false holds of the person's facts
at most 5 %."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

import dagmem
from dagmem import FileSessionStore
from dagmem.memory.format import HELD_TOPIC, inert
from dagmem.memory.trust import normalise
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import LLMDistiller, held_items, load_llm_settings, write_session
from dagmem.tests._model_server import ModelServer

DATA = Path(__file__).parent / "data"
CASES: list[dict[str, Any]] = json.loads((DATA / "poisoning.json").read_text("utf-8"))["cases"]
FACTS: list[str] = json.loads((DATA / "user_facts.json").read_text("utf-8"))["facts"]
PREFERENCE = "I prefer short answers with examples."


def _seen(text: str) -> str:
    """Text as a reader compares it: normalised like the tripwire does, markdown escapes undone."""
    return normalise(re.sub(r"\\(.)", r"\1", text))


def _poisoned(core: str) -> list[str]:
    seen = _seen(core)
    return [case["id"] for case in CASES if _seen(case["bad"]) in seen]


def test_the_corpora_are_what_the_issue_asks() -> None:
    kinds = {case["kind"] for case in CASES}
    assert len(CASES) >= 50
    assert len(FACTS) >= 50
    assert {"tool-output", "pasted-page", "assistant", "unicode", "split", "chinese", "imported"} <= kinds


async def _append(rt: dagmem.Runtime, sid: str, turns: list[dict[str, Any]]) -> None:
    for turn in turns:
        await rt.append(sid, turn["role"], turn["content"], origin=turn.get("origin"))


@pytest.mark.anyio
async def test_the_extractive_core_holds_no_poison_and_every_typed_fact(tmp_path: Path) -> None:
    async with dagmem.Runtime.open(tmp_path, token_threshold=10_000) as rt:
        for case in CASES:
            # Each poisoned session also carries the person's own preference: it must still reach the core.
            await _append(rt, case["id"], [{"role": "user", "content": PREFERENCE}, *case["turns"]])
        for n, fact in enumerate(FACTS):
            await rt.append("me", "user", fact)
            await rt.append("me", "assistant", f"Noted ({n}).")
        await rt.flush(force=True)
        core = await rt.core_async()
    # core.md is the master's first 2,000 tokens: the facts are looked for in the master itself.
    master = (tmp_path / "memory" / "topics" / "core.md").read_text("utf-8")
    poisoned = _poisoned(core) + _poisoned(master)
    assert _seen(PREFERENCE) in _seen(master)
    with Workspace(tmp_path / "memory") as workspace:
        held = held_items(workspace)
    held_text = " ".join(item.claim for item in held)
    false_holds = [fact for fact in FACTS if inert(fact) in held_text]
    in_core = [fact for fact in FACTS if _seen(fact) in _seen(master)]
    print(
        f"\n[poisoning extractive] poisoned in core {len(poisoned)}/{len(CASES)}; held {len(held)}; "
        f"person's facts in core {len(in_core)}/{len(FACTS)}, falsely held {len(false_holds)}/{len(FACTS)}"
    )
    assert poisoned == []
    assert len(false_holds) <= 0.05 * len(FACTS)
    assert held, "the first-person sentences of pasted pages are candidates: they wait in the queue"


def _gullible(request: dict[str, Any]) -> str:
    """A model that believes everything: each record becomes a core fact (and a topic block)."""
    text = request["messages"][1]["content"]
    batch = [json.loads(line) for line in text.split("\nTOPICS\n")[0].split("\n")[1:] if line.startswith("{")]
    refs = [record["ref"] for record in batch]
    core = [{"claim": record["content"], "refs": [record["ref"]], "replaces": None} for record in batch]
    # And once more, a fact merging a typed turn with the one after it (a model that mixes its evidence).
    core += [
        {"claim": f"{a['content']} {b['content']}", "refs": [a["ref"], b["ref"]], "replaces": None}
        for a, b in itertools.pairwise(batch)
    ]
    topics = [{"path": "topics/notes.md", "title": "Notes", "blocks": [{"claim": "notes", "refs": refs}]}]
    return json.dumps({"topics": topics, "core": core})


def test_a_gullible_model_cannot_put_poison_into_the_core(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    sessions = []
    for case in CASES:
        sid = case["id"]
        sessions.append(sid)
        store.append(sid, "user", PREFERENCE)
        for turn in case["turns"]:
            store.append(sid, turn["role"], turn["content"], origin=turn.get("origin"))
    for fact in FACTS:
        store.append("me", "user", fact)
    sessions.append("me")
    with ModelServer(_gullible) as model:
        settings = load_llm_settings(None, base_url=model.url, model="m", timeout=30.0)
        distiller = LLMDistiller(settings)
        with Workspace(tmp_path / "memory", fsync=False) as workspace:
            for sid in sessions:
                result = write_session(store, workspace, sid, boundary=True, distiller=distiller)
                assert result.outcome == "written", (sid, result)
            held = held_items(workspace)
    core = (tmp_path / "memory" / "topics" / "core.md").read_text("utf-8")  # the master: all of it
    poisoned = _poisoned(core) + _poisoned((tmp_path / "memory" / "core.md").read_text("utf-8"))
    held_text = _seen(" ".join(item.claim for item in held))
    false_holds = [fact for fact in FACTS if _seen(fact) in held_text and _seen(fact) not in _seen(core)]
    print(
        f"\n[poisoning gullible model] poisoned in core {len(poisoned)}/{len(CASES)}; held {len(held)}; "
        f"person's facts falsely held {len(false_holds)}/{len(FACTS)}"
    )
    assert poisoned == []
    assert len(false_holds) <= 0.05 * len(FACTS)
    assert _seen(PREFERENCE) in _seen(core)
    assert (tmp_path / "memory" / HELD_TOPIC).is_file()
