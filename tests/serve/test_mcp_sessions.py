"""The MCP server's `sessions` tool and node ids by prefix, over the tools' own layer (in process, on both
backends); and the capabilities the server advertises."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the `mcp` extra")

from dagmem import FileSessionStore, Runtime
from dagmem.serve._server import build_server
from dagmem.serve._tools import ArgumentError, MemoryTools

pytestmark = pytest.mark.anyio


def seed(home: Path) -> None:
    store = FileSessionStore(home)
    store.append("chat", "user", "plan a trip to Lisbon", node_id="aaaa-1111")
    store.append("chat", "assistant", "bring a carrier for the hills", node_id="aaaa-2222")
    store.append("chat", "user", "and Porto?", node_id="bbbb-3333")


async def test_sessions_tool_and_prefixes_for_tip_head_and_predecessor(tmp_path: Path) -> None:
    from dagmem.memory.listing import list_sessions

    home = tmp_path / "home"
    seed(home)
    async with Runtime.open(home) as runtime:
        tools = MemoryTools(runtime, home)
        listed = tools.sessions()
        assert listed == [s.as_json() for s in list_sessions(home)]  # the CLI's data, the same function
        (chat,) = listed
        assert chat["head"] == "bbbb-3333"
        assert [t["id"] for t in chat["tips"]] == ["bbbb-3333"]
        assert chat["tips"][0]["words"] == "and Porto?"

        # A fork named by a prefix of its predecessor.
        forked = await tools.append_turn("chat", "user", "or Madrid?", "aaaa-2")
        assert FileSessionStore(home, read_only=True).load("chat").nodes[forked].predecessor == "aaaa-2222"
        assert (await tools.set_head("chat", "bbbb"))["head"] == "bbbb-3333"
        await tools.recall("Lisbon", "chat", "bbb", 5)
        for call, argument in (
            (tools.set_head("chat", "aaaa"), "node_id"),
            (tools.recall("Lisbon", "chat", "aaaa", 5), "tip"),
            (tools.append_turn("chat", "user", "x", "aaaa"), "predecessor"),
        ):
            with pytest.raises(ArgumentError, match="matches 2 nodes") as caught:
                await call
            assert caught.value.argument == argument
        with pytest.raises(ArgumentError, match="has no node"):
            await tools.set_head("chat", "zzzz")
    snapshot = FileSessionStore(home, read_only=True).load("chat")
    assert len(snapshot.nodes) == 4  # the refused calls wrote nothing
    assert snapshot.meta.head == "bbbb-3333"


async def test_the_server_advertises_no_prompts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    seed(home)
    async with Runtime.open(home) as runtime:
        server = build_server(MemoryTools(runtime, home))
        capabilities = server._lowlevel_server.create_initialization_options().capabilities
        assert capabilities.prompts is None
        assert capabilities.tools is not None
        assert capabilities.resources is not None
