"""The `openai` distiller sees the topic index: after BATCH, TOPICS and CORE, a line `INDEX` and one JSON
object per other topic (path, title, description, blocks, last date), newest first, within its budget; a
model can file a claim into a topic it knows only from there; an answer naming the index itself is sent
back for repair. Over real HTTP, against the loopback model server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dagmem import FileSessionStore
from dagmem.memory.format import (
    TopicSummary,
    count_tokens,
    parse_topic,
    parse_topic_index,
    render_topic_index,
)
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import ExtractiveDistiller, LLMDistiller, LLMSettings, load_llm_settings
from dagmem.memory.write._llm_wire import index_lines
from dagmem.memory.write._pass import write_session
from dagmem.sim import check_home
from dagmem.tests._model_server import ModelServer


def sections(request: dict[str, Any]) -> dict[str, list[str]]:
    """The user message's sections, by their header line."""
    out: dict[str, list[str]] = {}
    current = ""
    for line in request["messages"][1]["content"].split("\n"):
        if line in ("BATCH", "TOPICS", "CORE", "INDEX"):
            current = line
            out[current] = []
        elif line:
            out[current].append(line)
    return out


def filed_under(path: str) -> Callable[[dict[str, Any]], str]:
    """A model that files every record of the batch under `path` ("INDEX": the first topic the INDEX
    lists), one claim a record."""

    def reply(request: dict[str, Any]) -> str:
        parts = sections(request)
        target = json.loads(parts["INDEX"][0])["path"] if path == "INDEX" else path
        blocks = [
            {
                "claim": f"Noted: {json.loads(line)['content']}",
                "refs": [json.loads(line)["ref"]],
                "replaces": None,
            }
            for line in parts["BATCH"]
        ]
        return json.dumps({"topics": [{"path": target, "title": "Lisbon", "blocks": blocks}], "core": []})

    return reply


class Home:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = FileSessionStore(root)
        self.workspace = Workspace(root / "memory", fsync=False)

    def write(self, distiller: Any) -> Any:
        return write_session(
            self.store, self.workspace, "s", boundary=True, distiller=distiller, attempts=1, retry_delay=0.0
        )


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    h = Home(tmp_path)
    h.store.append("s", "user", "We fly to Lisbon on May 3.", node_id="u1")
    h.store.append(
        "s", "assistant", "Lisbon in May is mild; pack light layers.", node_id="a1", predecessor="u1"
    )
    assert h.write(ExtractiveDistiller()).outcome == "written"
    yield h
    h.workspace.close()


def settings(server: ModelServer) -> LLMSettings:
    return load_llm_settings(None, base_url=server.url, model="test-model", timeout=5.0)


def oracle(root: Path) -> None:
    with Workspace(root / "memory") as workspace:
        wsid = workspace.workspace_id
    report = check_home(FileSessionStore(root), root / "memory", wsid, drained=True)
    assert report.violations == []


def test_the_prompt_ends_with_the_index_and_a_claim_can_go_to_a_topic_listed_there(home: Home) -> None:
    home.store.append("s", "user", "Which tram goes to Belém?", node_id="u2", predecessor="a1")
    with ModelServer(filed_under("INDEX")) as server:
        assert home.write(LLMDistiller(settings(server))).outcome == "written"
    (request,) = server.requests
    parts = sections(request)
    assert parts["TOPICS"] == []  # no topic's name shares a word with the batch: none shown in full
    (entry,) = [json.loads(line) for line in parts["INDEX"]]
    assert entry == {
        "path": "topics/lisbon.md",
        "title": "Lisbon",
        "description": "mild, pack, light, layers",
        "blocks": 1,
        "last": entry["last"],
    }
    assert isinstance(entry["last"], str)
    assert len(entry["last"]) == 10
    assert request["messages"][1]["content"].split("\n")[-2:] == [parts["INDEX"][-1], ""]  # INDEX is last
    topic = parse_topic((home.root / "memory/topics/lisbon.md").read_text(), "topics/lisbon.md")
    assert [b.claim for b in topic.blocks][-1] == "Noted: Which tram goes to Belém?"
    index = parse_topic_index((home.root / "memory/topics/index.md").read_text())
    assert [(e.path, e.blocks) for e in index.entries] == [("topics/lisbon.md", 2)]
    oracle(home.root)


def test_a_topic_shown_in_full_is_not_listed_again_in_the_index(home: Home) -> None:
    home.store.append("s", "user", "More about Lisbon trams, please.", node_id="u2", predecessor="a1")
    with ModelServer(filed_under("topics/lisbon.md")) as server:
        assert home.write(LLMDistiller(settings(server))).outcome == "written"
    parts = sections(server.requests[0])
    assert [json.loads(line)["path"] for line in parts["TOPICS"]] == ["topics/lisbon.md"]
    assert parts["INDEX"] == []


def test_an_answer_naming_the_index_as_a_topic_is_sent_back_for_repair(home: Home) -> None:
    home.store.append("s", "user", "Which tram goes to Belém?", node_id="u2", predecessor="a1")
    answers = iter([filed_under("topics/index.md"), filed_under("topics/belem.md")])

    def reply(request: dict[str, Any]) -> str:
        return next(answers)(request)

    with ModelServer(reply) as server:
        assert home.write(LLMDistiller(settings(server))).outcome == "written"
    assert len(server.requests) == 2
    repair = server.requests[1]["messages"][-1]["content"]
    assert "topics/index.md is the index, never a topic" in repair
    assert (home.root / "memory/topics/belem.md").exists()
    index = parse_topic_index((home.root / "memory/topics/index.md").read_text())
    assert {e.path for e in index.entries} == {"topics/lisbon.md", "topics/belem.md"}
    oracle(home.root)


def test_the_index_lines_stay_within_their_budget_newest_first() -> None:
    summaries = [
        TopicSummary(
            f"topics/t{n:03d}.md",
            f"Topic {n}",
            f"What topic {n} holds",
            n % 5 + 1,
            f"2026-01-{n % 28 + 1:02d}",
        )
        for n in range(200)
    ]
    text = render_topic_index(summaries, budget=100_000)
    assert text is not None
    lines = index_lines(text, budget=300)
    assert lines
    assert sum(count_tokens(line) + 1 for line in lines) <= 300
    dates = [json.loads(line)["last"] for line in lines]
    assert dates == sorted(dates, reverse=True)
    assert len(index_lines(text, budget=100_000)) == 200
    assert index_lines(text, skip=["topics/t027.md"], budget=100_000)[0] != lines[0]
    assert index_lines("# not an index\n", budget=300) == []
    assert index_lines(None, budget=300) == []
