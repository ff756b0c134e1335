"""Importers record where each turn's text came from (its origin): the person's own prompts in a Claude
Code, Codex or pi transcript are `user`; a sub-agent's prompt is `assistant` (the agent that spawned it
wrote it); every user message of a bare OpenAI messages array (whose provenance nobody can tell) is
`imported`. The origin reaches the archive's frames, so only what the person typed may become a core
fact."""

from __future__ import annotations

import json
from pathlib import Path

from dagmem.memory.format import scan_archive
from dagmem.tests.memory.adopt.test_import import (
    SESSION,
    Claude,
    nodes_of,
    run_import,
    write_and_verify,
    write_jsonl,
)


def test_claude_code_prompts_are_the_persons_and_a_sub_agents_prompt_is_the_spawning_agents(
    tmp_path: Path,
) -> None:
    c = Claude()
    u1 = c.user(None, "I prefer concise answers. Review the repository.")
    a1 = c.text(u1, "msg_1", "Sure, starting now.")
    side = c.user(None, "I always use tabs. Sub-agent: list the modules.", isSidechain=True)
    c.text(side, "msg_s", "There are three modules.", isSidechain=True)
    main = write_jsonl(tmp_path / f"{SESSION}.jsonl", c.lines)
    home = tmp_path / "home"
    run_import(home, "claude-code", main)
    nodes = nodes_of(home, SESSION)
    assert "origin" not in nodes[u1].metadata  # the role's default: the person typed it
    assert "origin" not in nodes[a1].metadata
    assert nodes[side].metadata["origin"] == "assistant"
    write_and_verify(home)
    frames = {
        f.node_id: f
        for f in scan_archive((home / "memory" / "sources" / f"{SESSION}.md").read_bytes(), SESSION).frames
    }
    assert (frames[u1].origin, frames[a1].origin, frames[side].origin) == ("user", "assistant", "assistant")
    core = (home / "memory" / "topics" / "core.md").read_text("utf-8")
    assert "concise answers" in core
    assert "tabs" not in core  # the sub-agent's prompt is not the person's preference


def test_an_openai_messages_array_is_imported(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(
        json.dumps(
            [{"role": "user", "content": "I live in Faro."}, {"role": "assistant", "content": "Nice."}]
        )
    )
    home = tmp_path / "home"
    report = run_import(home, "openai", path, session="chat")
    assert report.added == 2
    nodes = list(nodes_of(home, "chat").values())
    origins = {n.role.value: n.metadata.get("origin") for n in nodes}
    assert origins == {"user": "imported", "assistant": None}
