"""The memory a person would keep: a chat about two people and a pet, over two sessions days apart, is
filed in one page per entity (named after it, never after a filler word), each question in one block with
its answer, and no block holding turns of both sessions."""

from __future__ import annotations

from pathlib import Path

from dagmem.memory.format import HomePaths, Topic, is_topic_path, parse_topic
from dagmem.memory.write import FILLER_WORDS, ExtractiveDistiller
from dagmem.tests._two_part_chat import write_two_parts

FIRST = [
    ("user", "My sister Maya moved to Lisbon last month."),
    ("assistant", "That's a big move! How is Maya settling in?"),
    ("user", "Maya loves it, she found a flat near the river."),
    ("assistant", "Lovely. Do you have any pets?"),
    ("user", "Yes, a beagle called Biscuit. Biscuit is three years old."),
    ("assistant", "Awesome! What does Biscuit like to do?"),
    ("user", "Biscuit loves chasing pigeons in the park."),
    ("assistant", "Lovely! Talk soon, will you say hi to Maya for me?"),  # a farewell that asks
]
SECOND = [
    ("user", "Hi again! Awesome news: my friend Andrew got a new job."),
    ("assistant", "Great! Where does Andrew work now?"),
    ("user", "Andrew works at a bakery in Porto, he bakes the bread."),
    ("user", "Biscuit chewed my shoe yesterday, haha."),
    ("assistant", "Oh no! Is Biscuit okay?"),
    ("user", "Biscuit is fine, the shoe is not. Maya laughed when I told her."),
]


def _home(tmp_path: Path) -> tuple[dict[str, Topic], dict[str, str]]:
    """Write the chat as one session (the second part two days later) and return its topic pages (not
    the core master) and each turn's anchor -> "1"/"2" (the part it was said in)."""
    distiller = ExtractiveDistiller()
    distiller.core = False  # only the topic pages are looked at here
    part = write_two_parts(tmp_path, FIRST, SECOND, distiller)
    topics = HomePaths(tmp_path).memory / "topics"
    pages = {
        f"topics/{f.name}": parse_topic(f.read_text(encoding="utf-8"), f"topics/{f.name}")
        for f in sorted(topics.glob("*.md"))
        if is_topic_path(f"topics/{f.name}")
    }
    return pages, part


def _parts(topic: Topic, part: dict[str, str]) -> list[set[str]]:
    return [{part[s.anchor] for c in b.citations for s in c.sources} for b in topic.blocks]


def test_one_page_per_entity_named_after_it(tmp_path: Path) -> None:
    pages, part = _home(tmp_path)
    assert {"topics/maya.md", "topics/biscuit.md", "topics/andrew.md"} <= set(pages)
    assert pages["topics/biscuit.md"].title == "Biscuit"
    # The pet named in both sessions has one page holding what was said of it in each.
    assert set().union(*_parts(pages["topics/biscuit.md"], part)) == {"1", "2"}
    assert not any("biscuit" in path for path in pages if path != "topics/biscuit.md")
    for path, topic in pages.items():
        slug = path.removeprefix("topics/").removesuffix(".md")
        assert slug not in FILLER_WORDS, path
        assert topic.title.casefold() not in FILLER_WORDS, path


def test_a_question_and_its_answer_share_a_block(tmp_path: Path) -> None:
    pages, _part = _home(tmp_path)
    claims = [b.claim for topic in pages.values() for b in topic.blocks]
    for question, answer in (
        ("Do you have any pets?", "a beagle called Biscuit"),
        ("Where does Andrew work now?", "Andrew works at a bakery"),
        ("Is Biscuit okay?", "Biscuit is fine"),
    ):
        holding = [c for c in claims if question in c]
        assert len(holding) == 1, (question, holding)
        assert answer in holding[0], (question, holding)


def test_no_block_crosses_the_session_gap(tmp_path: Path) -> None:
    pages, part = _home(tmp_path)
    assert all(len(parts) == 1 for topic in pages.values() for parts in _parts(topic, part))


def test_the_same_batch_distils_to_the_same_bytes(tmp_path: Path) -> None:
    one, _ = _home(tmp_path / "a")
    two, _ = _home(tmp_path / "b")
    assert one == two
