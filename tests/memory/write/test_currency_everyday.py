"""Everyday phrasings of a change, through the public API on both backends: a move that updates one fact
of a block of two, a landlord's quoted message, a pasted e-mail, "Actually, ..." in the core, a move said
in German. What the person typed as their own updates their facts; nothing else does."""

from __future__ import annotations

from pathlib import Path

import pytest

import dagmem
from dagmem.memory.format import Block, parse_topic

pytestmark = pytest.mark.anyio


def blocks(home: Path) -> list[Block]:
    """Every block of every topic file (the core's master included; the index is no topic)."""
    out: list[Block] = []
    for path in sorted((home / "memory" / "topics").glob("*.md")):
        if path.stem in ("index", "held", "rejected"):
            continue
        rel = f"topics/{path.name}"
        out += parse_topic(path.read_text(encoding="utf-8"), rel).blocks
    return out


def saying(home: Path, words: str) -> list[Block]:
    return [b for b in blocks(home) if words in b.claim]


async def said(home: Path, *sessions: list[tuple[str, str, str | None]]) -> None:
    """Each session's (role, text, origin) turns, written session by session."""
    async with dagmem.Runtime.open(home, token_threshold=50) as rt:
        for n, turns in enumerate(sessions, 1):
            for role, text, origin in turns:
                await rt.append(f"s{n}", role, text, origin=origin)
            await rt.end_session(f"s{n}")
            await rt.flush(force=True)


async def ask(home: Path, question: str) -> list[dagmem.Hit]:
    async with dagmem.Runtime.open(home) as rt:
        return await rt.recall(question, k=5)


async def test_a_move_updates_where_the_person_lives_and_leaves_their_job(tmp_path: Path) -> None:
    home = tmp_path / ".dagmem"
    await said(
        home,
        [("user", "I live in Paris and I work as a nurse at the hospital. Any tips for night shifts?", None)],
        [("user", "Quick update: I moved to Berlin last month.", None)],
    )
    berlin = saying(home, "Berlin")
    assert berlin
    assert all(b.superseded is None for b in berlin)
    # The core holds the clauses apart: Paris is superseded there, the nurse stands.
    (paris,) = [b for b in saying(home, "I live in Paris") if "nurse" not in b.claim]
    assert paris.superseded is not None
    assert paris.superseded.by in {b.id for b in berlin}
    (nurse,) = [b for b in saying(home, "nurse") if "Paris" not in b.claim]
    assert nurse.superseded is None
    # The topic's block holds the whole turn: partly superseded, still current, naming the newer block.
    (both,) = saying(home, "I live in Paris and I work as a nurse")
    assert both.superseded is None
    assert both.partly is not None
    assert both.partly.by in {b.id for b in berlin}
    hits = await ask(home, "where do I live?")
    first = next(h for h in hits if "Berlin" in h.text or "Paris" in h.text)
    assert "Berlin" in first.text
    assert first.status == "current"
    async with dagmem.Runtime.open(home) as rt:
        text = await rt.core_async()
    assert "Berlin" in text
    assert "nurse" in text
    assert "I live in Paris" not in text


async def test_a_landlords_quoted_message_is_not_the_persons_move(tmp_path: Path) -> None:
    home = tmp_path / ".dagmem"
    await said(
        home,
        [("user", "I rent a flat in Melbourne and the landlord is impossible to reach.", None)],
        [
            (
                "user",
                "got this from him today: 'I live in Perth now so please contact the agency for all "
                "repairs going forward.' how do I reply?",
                None,
            )
        ],
    )
    assert all(b.superseded is None and b.partly is None for b in blocks(home))
    hits = await ask(home, "where do I live?")
    first = next(h for h in hits if "Melbourne" in h.text or "Perth" in h.text)
    assert "Melbourne" in first.text


async def test_a_pasted_email_is_the_tools_text_not_the_persons(tmp_path: Path) -> None:
    home = tmp_path / ".dagmem"
    await said(
        home,
        [("user", "My email address is lisa.m@gmx.de, please put it on the form.", None)],
        [
            ("user", "Can you summarise this mail for me?", None),
            ("user", "From: Karl\nHi, my address is k.weber@firma-neu.de from now on. Karl", "tool"),
        ],
    )
    assert all(b.superseded is None and b.partly is None for b in blocks(home))
    (pasted,) = saying(home, "k.weber@firma-neu.de")
    assert "Tool: “" in pasted.claim
    assert "User: “From: Karl" not in pasted.claim
    hits = await ask(home, "what is my email address?")
    first = next(h for h in hits if "@" in h.text)
    assert "lisa.m@gmx.de" in first.text


async def test_actually_in_the_core_supersedes_the_old_colour_there_and_in_its_topic(tmp_path: Path) -> None:
    home = tmp_path / ".dagmem"
    await said(
        home,
        [("user", "My favourite colour is green.", None)],
        [("user", "Actually, my favourite colour is blue.", None)],
    )
    green = saying(home, "green")
    assert green
    assert all(b.superseded is not None and b.superseded.reason == "retraction" for b in green)
    assert all(b.superseded is None for b in saying(home, "blue"))
    async with dagmem.Runtime.open(home) as rt:
        core = await rt.core_async()
    assert "blue" in core
    assert "green" not in core


async def test_a_move_said_in_german_updates_where_the_person_lives(tmp_path: Path) -> None:
    home = tmp_path / ".dagmem"
    await said(
        home,
        [("user", "Ich wohne in Hamburg, direkt an der Elbe.", None)],
        [("user", "Ich bin letzten Monat nach München gezogen, jetzt wohne ich in Schwabing.", None)],
    )
    hamburg = saying(home, "Hamburg")
    assert hamburg
    assert all(b.superseded is not None or b.partly is not None for b in hamburg)
    hits = await ask(home, "Wo wohne ich?")
    first = next(h for h in hits if "Hamburg" in h.text or "München" in h.text)
    assert "München" in first.text
    assert first.status == "current"
