"""A scoped MCP reader sees only what its scope allows, through every tool, resource, error and status
field (every byte of every answer is checked), and `--read-only` drops the tools that write. A real MCP
client, in process, on both backends."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the `mcp` extra")

from mcp import Client
from mcp.shared.exceptions import MCPError

from dagmem import Runtime, Scope
from dagmem.serve._server import build_server
from dagmem.serve._tools import MemoryTools

pytestmark = pytest.mark.anyio

# What a reader scoped to a* must never get, in any form: b's words and b's session ids (as whole words:
# an anchor's hex digits may hold "b1").
HIDDEN = re.compile(r"BRAVO|Braga|nurse|\bb[12]\b")


async def seed(home: Path) -> None:
    async with Runtime.open(home, token_threshold=10_000) as rt:
        await rt.append("a1", "user", "I live in Aveiro and my code word is AZURE.")
        await rt.append("a1", "assistant", "Aveiro is lovely in spring.")
        await rt.append("a2", "user", "I prefer trains to planes.")
        await rt.append("b1", "user", "I live in Braga and my code word is BRAVO.")
        await rt.append("b1", "assistant", "Braga has a fine cathedral, and BRAVO is noted.")
        await rt.append("b2", "user", "I work as a nurse in Braga.")
        await rt.flush(force=True)


def leaks(answer: object) -> list[str]:
    text = answer if isinstance(answer, str) else json.dumps(answer, default=str, ensure_ascii=False)
    return HIDDEN.findall(text)


def dump(result: Any) -> Any:
    return result.model_dump(mode="json") if hasattr(result, "model_dump") else result


async def test_a_reader_scoped_to_a_sessions_never_sees_b_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    await seed(home)
    scope = Scope(sessions=("a*",))
    async with Runtime.open(home) as runtime:
        answers: list[Any] = []
        async with Client(build_server(MemoryTools(runtime, home, scope=scope))) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            answers.append(dump(await client.list_tools()))
            for query in ("where do I live", "code word", "Braga cathedral", "nurse", "BRAVO"):
                for session in (None, "a1"):
                    arguments: dict[str, Any] = {"query": query, "k": 50}
                    if session:
                        arguments["session_id"] = session
                    answers.append(dump(await client.call_tool("recall", arguments)))
            for name in ("core", "status", "sessions"):
                answers.append(dump(await client.call_tool(name, {})))
            listed = (await client.list_resources()).resources
            answers.append(dump(await client.list_resources()))
            for resource in listed:
                answers.append(dump(await client.read_resource(str(resource.uri))))
            # Refusals: a session outside the scope and one that does not exist look the same.
            refusals = []
            for tool, arguments in (
                ("recall", {"query": "code word", "session_id": "b1"}),
                ("recall", {"query": "code word", "session_id": "zz"}),
                ("recall", {"query": "code word", "held": True}),
                ("append_turn", {"session_id": "b1", "role": "user", "content": "hi"}),
                ("set_head", {"session_id": "b1", "node_id": "n1"}),
            ):
                with pytest.raises(MCPError) as refused:
                    await client.call_tool(tool, arguments)
                refusals.append(refused.value.error.model_dump(mode="json"))
            for slug in ("no-such-topic", "braga"):
                with pytest.raises(MCPError) as missing:
                    await client.read_resource(f"memory://topics/{slug}")
                refusals.append(missing.value.error.model_dump(mode="json"))
    recalled = json.dumps(answers)
    assert "Aveiro" in recalled  # the scope's own sessions are served
    assert [(n, leaks(answer), str(answer)[:600]) for n, answer in enumerate(answers) if leaks(answer)] == []
    assert [(n, leaks(answer), answer) for n, answer in enumerate(refusals) if leaks(answer)] == []
    assert refusals[0] == refusals[1]  # a session outside the scope looks like a missing one
    assert "outside this reader's scope" in json.dumps(refusals[0])
    assert {"append_turn", "set_head", "flush"} <= tools  # not read-only: writes within the scope only


async def test_read_only_drops_the_tools_that_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    await seed(home)
    async with Runtime.open(home) as runtime:
        server = build_server(MemoryTools(runtime, home, scope=Scope(read_only=True)))
        async with Client(server) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert tools == {"recall", "core", "status", "sessions"}
            result = await client.call_tool(
                "append_turn", {"session_id": "a1", "role": "user", "content": "x"}
            )
            assert result.is_error  # an unknown tool
            hits = dump(await client.call_tool("recall", {"query": "Braga"}))
            assert "Braga" in json.dumps(hits)  # read-only alone narrows nothing else
    nodes = sorted((home / "sessions" / "a1" / "history").rglob("*.json"))
    assert len(nodes) == 2  # the refused append wrote nothing


async def test_a_scope_without_the_core_is_refused_the_core(tmp_path: Path) -> None:
    home = tmp_path / "home"
    await seed(home)
    async with Runtime.open(home) as runtime:
        async with Client(build_server(MemoryTools(runtime, home, scope=Scope(core=False)))) as client:
            with pytest.raises(MCPError, match="outside this reader's scope"):
                await client.call_tool("core", {})
        # The owner's core holds facts of every session; a scope to a* gets only a*'s.
        assert "Braga" in await runtime.core_async()
        scoped = await runtime.core_async(scope=Scope(sessions=("a*",)))
        assert "Aveiro" in scoped
        assert "Braga" not in scoped


async def test_the_topic_index_resource_lists_only_what_the_scope_may_see(tmp_path: Path) -> None:
    from dagmem.memory.format import parse_topic_index

    home = tmp_path / "home"
    await seed(home)
    owner_index = (home / "memory" / "topics" / "index.md").read_text()
    assert HIDDEN.search(owner_index)  # the owner's map names b's topics
    async with Runtime.open(home) as runtime:
        async with Client(build_server(MemoryTools(runtime, home))) as client:
            whole = (await client.read_resource("memory://index")).contents[0].text  # type: ignore[union-attr]
        async with Client(build_server(MemoryTools(runtime, home, scope=Scope(sessions=("a*",))))) as client:
            scoped = (await client.read_resource("memory://index")).contents[0].text  # type: ignore[union-attr]
    assert whole == owner_index
    assert "Aveiro" in scoped
    assert not leaks(scoped)
    kept = {entry.path for entry in parse_topic_index(scoped).entries}
    assert kept
    assert kept < {entry.path for entry in parse_topic_index(owner_index).entries}


async def test_a_scoped_or_read_only_reader_is_given_current_core_facts_only(tmp_path: Path) -> None:
    """A fact the person updated (superseded) and one said on an edited-away prompt (left) are kept in
    the master, and `core.md` leaves them out: so does every scoped rendering (Runtime `core(scope=)`,
    MCP `core` under `--read-only` and under `--scope`), never a `**Superseded**` line or a left value."""
    home = tmp_path / "home"
    async with Runtime.open(home) as rt:
        await rt.append("a1", "user", "I live in Aveiro.")
        await rt.append("a1", "assistant", "Noted.")
        await rt.flush(force=True)
        await rt.append("a1", "user", "Update: I moved to Coimbra.")
        asked = await rt.append("a1", "assistant", "Noted, Coimbra.")
        await rt.append("a1", "user", "I prefer the tram.")
        await rt.flush(force=True)
        await rt.append("a1", "user", "I prefer the train.", predecessor=asked)  # the edited prompt
        await rt.append("a1", "assistant", "Trains then.")
        await rt.end_session("a1")
        await rt.flush(force=True)
        master = (home / "memory" / "topics" / "core.md").read_text()
        assert all(word in master for word in ("Aveiro", "**Superseded**", "tram."))
        owner = await rt.core_async()
        assert "Coimbra" in owner
        assert not any(word in owner for word in ("Aveiro", "tram."))
        for scope in (Scope(read_only=True), Scope(sessions=("a*",)), Scope(origins=("user",))):
            scoped = await rt.core_async(scope=scope)
            async with Client(build_server(MemoryTools(rt, home, scope=scope))) as client:
                served = json.dumps(dump(await client.call_tool("core", {})), ensure_ascii=False)
            for text in (scoped, served):
                assert all(word in text for word in ("Coimbra", "train.")), scope
                assert not any(word in text for word in ("Aveiro", "Superseded", "tram.")), scope
