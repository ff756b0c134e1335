"""The MCP server's stdin: JSON-RPC lines for the SDK, read in linear time, with the lines the SDK would
drop unanswered refused here with an error the host can match to its request.

- Reading: each chunk is searched for line ends once; a line is joined once, when it ends. (Appending each
  chunk to the pending bytes and splitting them all again was quadratic: a 60 MB line took 77 s, and every
  other request waited behind it.)
- A line over `MAX_LINE` bytes is not kept: the rest of it is skipped as it arrives, and the request is
  answered `-32602` (invalid params) at once if its id is among its first bytes, else when the line ends. No valid request is that long: a turn's content is at most 8 MiB,
  and even escaped character by character (`\\u0000`) it fits.
- A line holding an escaped lone surrogate (`"\\ud800"`): the SDK's parser refuses it as invalid JSON and
  the request's id is lost, so the host would wait for ever. Here it is answered `-32602` with its id (or
  `-32700`, parse error, when the line is no JSON at all but an id can still be read from it).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Final

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_PARAMS, PARSE_ERROR, ErrorData, JSONRPCError

__all__ = [
    "DROPPED",
    "MAX_LINE",
    "LineSplitter",
    "Overlong",
    "Refusal",
    "StdinLines",
    "refusal_of",
    "request_id",
]

MAX_LINE: Final = 64 * 1024 * 1024  # bytes of one JSON-RPC line
_HEAD: Final = 64 * 1024  # what is kept of an over-long line to find its id: its start ...
_TAIL: Final = 4 * 1024  # ... and its end
_CHUNK: Final = 1 << 16
# A pre-filter only (it also matches an escaped backslash before "ud800"): the line is then parsed.
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_TAIL_ID: Final = re.compile(r'"id"\s*:\s*(-?[0-9]{1,20}|"(?:[^"\\]|\\.){0,256}")\s*\}\s*\Z')


@dataclass(frozen=True)
class Overlong:
    """A line over the limit: its first and last bytes, and how long it was. Reported twice: when it
    crosses the limit (`ended` False: its tail and size so far) and when it ends."""

    head: bytes
    tail: bytes
    size: int
    ended: bool = True


@dataclass(frozen=True)
class Refusal:
    """An error to answer a line with."""

    id: int | str | None
    code: int
    message: str


# A notification the SDK could not read: no one waits for an answer, so none is sent.
DROPPED: Final = Refusal(None, INVALID_PARAMS, "")


class LineSplitter:
    """Bytes in, complete lines out, in time linear in the bytes; a line over `limit` as an `Overlong`."""

    def __init__(self, limit: int = MAX_LINE) -> None:
        self.limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self._head: bytes | None = None  # set once the line is over the limit
        self._tail = b""

    def feed(self, chunk: bytes) -> list[bytes | Overlong]:
        out: list[bytes | Overlong] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._add(chunk[start:end], out)
            out.append(self._finish())
            start = end + 1
        if start < len(chunk):
            self._add(chunk[start:], out)
        return out

    def end(self) -> bytes | Overlong | None:
        """What is left when the input ends (a last line without its newline), if anything."""
        if self._size == 0:
            return None
        return self._finish()

    def _add(self, piece: bytes, out: list[bytes | Overlong]) -> None:
        self._size += len(piece)
        if self._head is not None:
            self._tail = (self._tail + piece)[-_TAIL:]
            return
        self._parts.append(piece)
        if self._size > self.limit:
            line = b"".join(self._parts)
            self._head, self._tail, self._parts = line[:_HEAD], line[-_TAIL:], []
            out.append(Overlong(self._head, self._tail, self._size, ended=False))

    def _finish(self) -> bytes | Overlong:
        item: bytes | Overlong
        if self._head is not None:
            item = Overlong(self._head, self._tail, self._size)
        else:
            item = b"".join(self._parts)
        self._parts, self._size, self._head, self._tail = [], 0, None, b""
        return item


def _valid_id(value: object) -> int | str | None:
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def request_id(head: str, tail: str = "") -> int | str | None:
    """The id of a JSON-RPC request that cannot be parsed whole: the top-level members at its start are
    read one by one until the id (or a member that does not end within `head`); failing that, an id that is
    the object's last member, at the end of `tail`."""
    decoder = json.JSONDecoder()
    at = len(head) - len(head.lstrip())
    if head[at : at + 1] == "{":
        at += 1
        while True:
            try:
                at = len(head) - len(head[at:].lstrip())
                key, at = decoder.raw_decode(head, at)
                at = len(head) - len(head[at:].lstrip())
                if head[at : at + 1] != ":":
                    break
                at = len(head) - len(head[at + 1 :].lstrip())
                value, at = decoder.raw_decode(head, at)
            except (json.JSONDecodeError, RecursionError):
                break
            if key == "id":
                return _valid_id(value)
            at = len(head) - len(head[at:].lstrip())
            if head[at : at + 1] != ",":
                break
            at += 1
    found = _TAIL_ID.search(tail)
    if found is not None:
        with contextlib.suppress(ValueError):
            return _valid_id(json.loads(found[1]))
    return None


def refusal_of(line: bytes | Overlong, limit: int = MAX_LINE) -> Refusal | None:
    """The error a line is answered with here, or None: the SDK takes it."""
    if isinstance(line, Overlong):
        found = request_id(line.head.decode("utf-8", "replace"), line.tail.decode("utf-8", "replace"))
        message = f"invalid params: the request is over the limit of {limit:,} bytes"
        return Refusal(found, INVALID_PARAMS, message)
    text = line.decode("utf-8", "replace")
    if _SURROGATE_ESCAPE.search(text) is None:
        return None
    try:
        value: Any = json.loads(text)
    except (ValueError, RecursionError):
        found = request_id(text[:_HEAD], text[-_TAIL:])
        if found is None:
            return None  # nothing to answer: the SDK reports it as it does any invalid JSON
        return Refusal(found, PARSE_ERROR, "parse error: the request is not valid JSON")
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        if not isinstance(value, dict) or "id" not in value:
            return DROPPED
        message = (
            "invalid params: the request holds a lone surrogate (a \\ud800-\\udfff escape without its pair)"
        )
        return Refusal(_valid_id(value["id"]), INVALID_PARAMS, message)
    except RecursionError:
        return None
    return None  # a paired surrogate (an emoji), or an escaped backslash: valid


class StdinLines:
    """Lines of stdin for the SDK's stdio transport, read by a daemon thread with `os.read` on a private
    descriptor. The SDK's own reader blocks a worker thread that cancellation cannot free, so SIGTERM could
    not stop a server whose host keeps stdin open; and a thread blocked inside `sys.stdin.buffer` holds its
    lock, which aborts the interpreter at exit. A raw read holds nothing. Refused lines go to `answer`."""

    def __init__(self, limit: int = MAX_LINE) -> None:
        self.limit = limit
        self._send: MemoryObjectSendStream[str]
        self._receive: MemoryObjectReceiveStream[str]
        self._send, self._receive = anyio.create_memory_object_stream[str](0)
        self._refused: MemoryObjectSendStream[Refusal]
        self._refusals: MemoryObjectReceiveStream[Refusal]
        self._refused, self._refusals = anyio.create_memory_object_stream[Refusal](16)

    def start(self) -> None:
        token = anyio.lowlevel.current_token()
        fd = os.dup(sys.stdin.fileno())
        splitter = LineSplitter(self.limit)
        answered = False  # the over-long line being skipped was refused already

        def take(line: bytes | Overlong) -> None:
            nonlocal answered
            if isinstance(line, Overlong):
                if answered:
                    answered = not line.ended
                    return
                refusal = refusal_of(line, self.limit)
                if refusal is not None and (line.ended or refusal.id is not None):
                    anyio.from_thread.run(self._refused.send, refusal, token=token)
                    answered = not line.ended
                return
            refusal = refusal_of(line, self.limit)
            if refusal is None:
                assert isinstance(line, bytes)
                anyio.from_thread.run(self._send.send, line.decode("utf-8", "replace"), token=token)
            elif refusal is not DROPPED:
                anyio.from_thread.run(self._refused.send, refusal, token=token)

        def pump() -> None:
            try:
                while chunk := os.read(fd, _CHUNK):
                    for line in splitter.feed(chunk):
                        take(line)
                last = splitter.end()
                if last is not None:
                    take(last)
            except Exception:  # the loop is gone (we are exiting) or the pipe broke: stop reading
                pass
            finally:
                for stream in (self._refused, self._send):  # `answer` drains the refusals, then ends
                    with contextlib.suppress(Exception):
                        anyio.from_thread.run_sync(stream.close, token=token)

        threading.Thread(target=pump, name="dagmem-mcp-stdin", daemon=True).start()

    async def answer(self, write: Any) -> None:
        """Send each refusal's error through the SDK's own writer (one writer: lines never interleave),
        until stdin ends."""
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async for refusal in self._refusals:
                error = ErrorData(code=refusal.code, message=refusal.message)
                await write.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=refusal.id, error=error)))

    def __aiter__(self) -> AsyncIterator[str]:
        return self._receive.__aiter__()
