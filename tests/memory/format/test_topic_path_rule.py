"""One topic-path rule: every layer that reads, writes or links topic files accepts and refuses the same
names (the write pass, the LLM wire, the MCP tools, the page, block links inside claims, recall's text)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmem.memory.format import ArchiveRecord, block_links, is_topic_path, is_topic_slug
from dagmem.memory.outcomes import WriteFailure
from dagmem.memory.recall._text import plain_claim
from dagmem.memory.workspace import Workspace
from dagmem.memory.write._core import _Reader
from dagmem.serve._tools import topic_slugs
from dagmem.view._read import read_home

# What the distiller writes (a word, its parts, a hashed slug) and the contract's edges.
GOOD = ["lisbon", "lisbon--2", "t-0123456789", "0", "a" * 64, "new-york", "core"]
BAD = ["Lisbon", "more_2", "-x", "a" * 65, "a.b", "é", "", "a b", "A"]


def test_the_rule_itself() -> None:
    assert all(is_topic_slug(s) and is_topic_path(f"topics/{s}.md") for s in GOOD)
    assert not any(is_topic_slug(s) or is_topic_path(f"topics/{s}.md") for s in BAD)
    assert not is_topic_path("topics/x/y.md")
    assert not is_topic_path("lisbon.md")


def _on_disk(tmp_path: Path) -> Path:
    memory = tmp_path / "memory"
    (memory / "topics").mkdir(parents=True)
    for slug in GOOD + BAD:
        if slug and "/" not in slug:
            (memory / "topics" / f"{slug}.md").write_text("# T\n")
    return memory


def test_the_write_pass_reads_and_lists_only_topic_paths(tmp_path: Path) -> None:
    memory = _on_disk(tmp_path)
    with Workspace(memory, fsync=False) as ws:
        reader = _Reader(ws)
        assert reader.paths() == sorted(f"topics/{s}.md" for s in GOOD)
        for slug in GOOD:
            reader.read(f"topics/{slug}.md")
        for slug in BAD:
            with pytest.raises(WriteFailure):
                reader.read(f"topics/{slug}.md")


def test_the_mcp_tools_list_only_topic_slugs(tmp_path: Path) -> None:
    assert topic_slugs(_on_disk(tmp_path)) == sorted(GOOD)


def test_the_page_shows_only_topic_files(tmp_path: Path) -> None:
    memory = _on_disk(tmp_path)
    shown = [t.path for t in read_home(memory.parent).topics]
    assert shown == sorted(f"topics/{s}.md" for s in GOOD)


@pytest.mark.parametrize("slug", GOOD + BAD)
def test_block_links_follow_the_same_rule(slug: str) -> None:
    claim = f"See [that]({slug}.md#^b-12345678)."
    if is_topic_slug(slug):
        assert [m["slug"] for m in block_links(claim)] == [slug]
        assert plain_claim(claim) == "See that."
    else:
        with pytest.raises(ValueError, match="link"):
            block_links(claim)
        assert plain_claim(claim) != "See that."


class _NoTopics:
    def read(self, relpath: str) -> str | None:
        return None

    def size(self, relpath: str) -> int | None:
        return None


@pytest.mark.parametrize("slug", GOOD + BAD)
def test_the_llm_wire_takes_the_same_paths(slug: str) -> None:
    from dagmem.memory.write._llm import open_part_in
    from dagmem.memory.write._llm_wire import InvalidAnswer, apply_answer, parse_answer

    records = (ArchiveRecord("s", "n1", "user", 0, 1_750_000_000.0, "Lisbon is sunny"),)
    path = f"topics/{slug}.md"
    block = {"claim": "Lisbon is sunny.", "refs": ["r1"], "replaces": None}
    answer = parse_answer(
        json.dumps({"topics": [{"path": path, "title": "T", "blocks": [block]}], "core": []})
    )
    files = _NoTopics()

    def apply() -> list[str]:
        result = apply_answer(
            answer, records, files, session_id="s", on_path=lambda _a: True, open_part=open_part_in(files)
        )
        return list(dict(result.edits))

    if slug == "core":  # a valid path the wire reserves for the core field
        with pytest.raises(InvalidAnswer, match="core"):
            apply()
    elif is_topic_slug(slug):
        assert apply() == [path]
    else:
        with pytest.raises(InvalidAnswer) as error:
            apply()
        assert error.value.kind == "bad topic path"
