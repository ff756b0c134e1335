"""`dagmem mcp` fed hostile JSON-RPC lines on stdin (issue 31), as a host's raw pipe would carry them: a
line of 160 MiB is refused with `-32602` without holding up the requests after it, and a request holding an
escaped lone surrogate is answered (`-32602`, or `-32700` when it is no JSON at all), with its id, instead of
being dropped while the host waits for ever. Every wait is on an answer, bounded."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the `mcp` extra: pip install -e '.[mcp]'")

from mcp_types import INVALID_PARAMS, PARSE_ERROR

from dagmem.serve._stdin import MAX_LINE, LineSplitter, Overlong, refusal_of, request_id

WAIT = 120.0  # seconds: generous; a linear read of everything here takes well under one


class Server:
    """`dagmem mcp` on a raw pipe: lines in, JSON objects out (read by a thread into a queue)."""

    def __init__(self, home: Path) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dagmem", "mcp", "--home", str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.out: queue.Queue[dict[str, Any]] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self._lock = threading.Lock()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.out.put(json.loads(line))

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self._lock:
            self.proc.stdin.write(data + b"\n")
            self.proc.stdin.flush()

    def request(self, id: int, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message).encode())

    def answer(self, id: object) -> dict[str, Any]:
        """The response to request `id` (notifications and other responses are skipped)."""
        while True:
            message = self.out.get(timeout=WAIT)
            if message.get("id") == id and "method" not in message:
                return message

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=WAIT)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "home")
    s.request(
        0,
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    )
    assert "result" in s.answer(0)
    s.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    try:
        yield s
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
        s.reader.join(WAIT)
        for pipe in (s.proc.stdin, s.proc.stdout):
            if pipe is not None:
                pipe.close()


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def test_an_over_long_line_is_refused_and_the_next_request_is_answered(server: Server) -> None:
    # The id first (as the SDK's clients write it), then a content far over any valid request.
    head = b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "append_turn", '
    body = b'"arguments": {"session_id": "s", "role": "user", "content": "' + b"x" * (160 << 20) + b'"}}}'
    writer = threading.Thread(target=server.send, args=(head + body,), daemon=True)
    writer.start()
    refused = server.answer(7)  # as soon as the limit is crossed: the id came first
    assert refused["error"]["code"] == INVALID_PARAMS
    assert f"{MAX_LINE:,}" in refused["error"]["message"]
    writer.join(WAIT)
    server.request(8, "ping")
    assert server.answer(8)["result"] == {}
    assert server.close() == 0


def test_a_long_valid_line_is_read_at_once(server: Server) -> None:
    content = "y" * (7 << 20)  # under the 8 MiB a turn may hold
    server.request(3, "tools/call", call("append_turn", session_id="s", role="user", content=content))
    answered = server.answer(3)
    assert "result" in answered, answered
    assert not answered["result"].get("isError"), answered
    assert server.close() == 0


SURROGATES = {
    "in the content": call("append_turn", session_id="s", role="user", content="\ud800"),
    "a low one alone": call("append_turn", session_id="s", role="user", content="a\udfffb"),
    "reversed pair": call("append_turn", session_id="s", role="user", content="\ude00\ud83d"),
    "in the session id": call("append_turn", session_id="s\udc00", role="user", content="hi"),
    "in a key": {"name": "core", "arguments": {"\ud801": 1}},
    "in the tool name": call("rec\ud800all", query="x"),
}


@pytest.mark.parametrize("params", list(SURROGATES.values()), ids=list(SURROGATES))
def test_a_request_with_a_lone_surrogate_is_answered_with_its_id(
    server: Server, params: dict[str, Any]
) -> None:
    # json.dumps escapes a lone surrogate as \udXXX, as a host's JSON writer does.
    server.send(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}).encode())
    assert server.answer(5)["error"]["code"] == INVALID_PARAMS
    server.request(6, "ping")  # the server still serves
    assert server.answer(6)["result"] == {}
    assert server.close() == 0


def test_a_paired_surrogate_is_text_and_a_broken_line_with_an_id_is_a_parse_error(server: Server) -> None:
    server.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": call("append_turn", session_id="s", role="user", content="\U0001f600"),
            }
        ).encode()
    )
    assert "result" in server.answer(1)
    server.send(b'{"jsonrpc": "2.0", "id": "x-2", "method": "tools/call", "params": {"c": "\\ud800"')
    assert server.answer("x-2")["error"]["code"] == PARSE_ERROR
    server.send(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"reason": "\\ud800"}}')
    server.request(4, "ping")
    assert server.answer(4)["result"] == {}  # a notification gets no answer; the next request does
    assert server.close() == 0


# -- the reader's parts --------------------------------------------------------------------------------


def test_the_splitter_is_linear_and_keeps_nothing_of_an_over_long_line() -> None:
    splitter = LineSplitter(limit=1 << 20)
    chunk = b"z" * 65536
    lines: list[bytes | Overlong] = []
    for _ in range(4096):  # 256 MiB in one line: quadratic re-splitting would take hours
        lines += splitter.feed(chunk)
    crossed = lines.pop()  # reported once when it crosses the limit, without its id yet
    assert lines == []
    assert isinstance(crossed, Overlong)
    assert not crossed.ended
    refusal = refusal_of(crossed, 1 << 20)
    assert refusal is not None
    assert refusal.id is None
    lines += splitter.feed(b'"id": 12}\n{"a": 1}\nrest')
    assert isinstance(lines[0], Overlong)
    assert lines[0].ended
    assert lines[0].size == (256 << 20) + len(b'"id": 12}')
    assert len(lines[0].head) + len(lines[0].tail) < 1 << 20
    assert lines[1:] == [b'{"a": 1}']
    assert splitter.end() == b"rest"
    refusal = refusal_of(lines[0], 1 << 20)
    assert refusal is not None
    assert (refusal.id, refusal.code) == (12, INVALID_PARAMS)


def test_request_id_reads_the_members_before_the_id_and_an_id_at_the_end() -> None:
    assert request_id('{"jsonrpc": "2.0", "id": "a\\"b", "method": "x", "params": {"c": "') == 'a"b'
    assert request_id('{"method": "x", "params": {"c": 1}, "id": 4, "x": "') == 4
    assert request_id('{"params": {"c": "', ', "z": 1}, "id": 9}') == 9
    assert request_id('{"params": {"c": "', ', "id": true}') is None
    assert request_id("[1, 2", "") is None
    assert request_id("not json at all") is None
