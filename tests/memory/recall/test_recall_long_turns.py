"""A claim quotes only the start of a long turn; the recall index holds the rest beside it, so every word
of the turn is a term of its block (before, the cut part was never indexed), also after the index is
rebuilt from the files, and a question about the turn's end ranks its block first."""

from __future__ import annotations

import shutil
from pathlib import Path

from dagmem import FileSessionStore
from dagmem.memory.format import is_topic_path, parse_topic
from dagmem.memory.recall import RecallIndex, RecallQuery, analyse, recall_root, search
from dagmem.memory.writing import write_home

PADDING = " ".join(f"plain{i} words about the garden and the weather" for i in range(20))
LONG = f"Let me tell you about my week. {PADDING} Finally, the quokka in Zanzibar ate my sandwich."
OTHERS = [
    "My neighbour planted tomatoes in the garden.",
    "The weather in Oslo was grey all week.",
    "I bought a sandwich at the station.",
]


def _home(tmp_path: Path) -> Path:
    store = FileSessionStore(tmp_path, fsync=False)
    for text in OTHERS:
        store.append("s", "user", text)
        store.append("s", "assistant", "Noted.")
    store.append("s", "user", LONG)
    store.append("s", "assistant", "What a week!")
    write_home(tmp_path, force=True)
    return tmp_path / "memory"


def _terms_of_long_turn(memory: Path) -> set[str]:
    index = RecallIndex.open(memory)
    terms: set[str] = set()
    for _row, entry in index.entries():
        if "What a week" in entry.text:
            terms |= set(entry.words) if entry.words is not None else set(analyse(entry.index_text()))
    return terms


def test_the_cut_part_of_a_long_turn_is_indexed(tmp_path: Path) -> None:
    memory = _home(tmp_path)
    claims = [
        b.claim
        for p in sorted((memory / "topics").glob("*.md"))
        if is_topic_path(f"topics/{p.name}")
        for b in parse_topic(p.read_text(encoding="utf-8"), f"topics/{p.name}").blocks
    ]
    assert not any("quokka" in c for c in claims)  # the claim is an excerpt: it stops well before the end
    assert set(analyse(LONG)) <= _terms_of_long_turn(memory)
    hits = search(RecallIndex.open(memory), RecallQuery("the quokka in Zanzibar", k=3))
    assert "What a week" in hits[0].text


def test_a_rebuilt_index_still_holds_it(tmp_path: Path) -> None:
    memory = _home(tmp_path)
    shutil.rmtree(recall_root(memory))
    assert set(analyse(LONG)) <= _terms_of_long_turn(memory)
