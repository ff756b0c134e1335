"""The LLM distiller (issue 12, DESIGN §9) against a real HTTP server on loopback that plays the model:
good edits, a repair round, refs outside the batch, forged claims, 429 with Retry-After, 500, 401, 403,
a response slower than the timeout, truncated JSON — through `Runtime` on both backends, through
`write_session`, and through `dagmem write` in a subprocess, with the oracle after each. A failed call
leaves the workspace byte-identical and the batch owed; no key or provider text reaches any output."""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from dagmem import ArchiveRecord, FileSessionStore, InvalidInput, ReasonCode, Runtime
from dagmem.actors import RuntimeConfig
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.format import count_tokens, parse_topic
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import (
    ExtractiveDistiller,
    LLMDistiller,
    LLMSettings,
    load_llm_settings,
    write_batch,
    write_session,
)
from dagmem.sim import check_home
from dagmem.tests._cli import dagmem_run

pytestmark = pytest.mark.anyio

# -- the model server ----------------------------------------------------------------------------------

SECRET_KEY = "sk-test-DO-NOT-LEAK-4f7c1e"
PROVIDER_TEXT = "PROVIDER-SECRET-DIAGNOSTIC: quota for org-abc123 at https://internal.example"


@dataclass
class Reply:
    status: int = 200
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion(content: str | None, *, finish_reason: str = "stop", refusal: str | None = None) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }
    ).encode()


def answer(content: dict[str, Any] | str, **kw: Any) -> Reply:
    text = content if isinstance(content, str) else json.dumps(content)
    return Reply(body=completion(text, **kw))


def error(status: int, code: str = "error", *, headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps({"error": {"message": PROVIDER_TEXT, "type": code, "code": code}}).encode()
    return Reply(status=status, body=body, headers=headers or {})


def batch_of(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The BATCH records of a request's user message."""
    lines = request["messages"][1]["content"].split("\n")
    return [json.loads(line) for line in lines[1 : lines.index("TOPICS")]]


def topics_of(request: dict[str, Any]) -> list[dict[str, Any]]:
    lines = request["messages"][1]["content"].split("\n")
    return [json.loads(line) for line in lines[lines.index("TOPICS") + 1 : lines.index("CORE")]]


def good_edits(request: dict[str, Any]) -> dict[str, Any]:
    """What a good model answers: one claim per record in topics/trip.md, and a core fact for a name."""
    batch = batch_of(request)
    blocks = [
        {"claim": f"The {r['speaker']} said: {r['content'][:80]}", "refs": [r["ref"]], "replaces": None}
        for r in batch
    ]
    core = [
        {"claim": "The user is called Ana.", "refs": [r["ref"]], "replaces": None}
        for r in batch
        if "my name is ana" in r["content"].lower()
    ]
    return {"topics": [{"path": "topics/trip.md", "title": "Trip", "blocks": blocks}], "core": core}


class ModelServer:
    def __init__(self) -> None:
        self.script: deque[Reply | Callable[[dict[str, Any]], Reply]] = deque()
        self.default: Callable[[dict[str, Any]], Reply] = lambda request: answer(good_edits(request))
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:

                length = int(self.headers.get("Content-Length", "0"))
                request = json.loads(self.rfile.read(length))
                with server._lock:
                    server.requests.append(request)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    server.times.append(time.monotonic())
                    step = server.script.popleft() if server.script else server.default
                reply = step if isinstance(step, Reply) else step(request)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    reply = error(404, "not_found")
                if reply.delay:  # math.inf: never answer; only the client's timeout (or the end) ends it
                    server.stopping.wait(None if math.isinf(reply.delay) else reply.delay)
                body = reply.body if reply.body is not None else b"{}"
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up (a timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


def settings(server: ModelServer, **kw: Any) -> LLMSettings:
    values: dict[str, Any] = {
        "base_url": server.url,
        "model": "test-model",
        "api_key": SECRET_KEY,
        "timeout": 2.0,
    }
    return load_llm_settings(None, **{**values, **kw})


def snapshot(memory: Path) -> dict[str, bytes]:
    """Every file of the workspace a failed call must leave alone (not the writer's status or the cache)."""
    skip = {".dagmem/status.json", ".dagmem/lock"}
    return {
        p.relative_to(memory).as_posix(): p.read_bytes()
        for p in sorted(memory.rglob("*"))
        if p.is_file()
        and p.relative_to(memory).as_posix() not in skip
        and not p.name.startswith(("index.sqlite3", "shapes.sqlite3"))
    }


def oracle(home: Path, *, drained: bool = True) -> Any:
    workspace_id = read_workspace_id(home / "memory" / ".dagmem" / "workspace-id")
    report = check_home(
        FileSessionStore(home, read_only=True), home / "memory", workspace_id, drained=drained
    )
    assert report.violations == []
    return report


def topic(home: Path, path: str) -> Any:
    return parse_topic((home / "memory" / path).read_text(), path)


def claims(home: Path) -> list[str]:
    out = []
    for p in sorted(t for t in (home / "memory" / "topics").glob("*.md") if t.name != "index.md"):
        rel = f"topics/{p.name}"
        out += [b.claim for b in parse_topic(p.read_text(), rel).blocks]
    return out


def no_secrets(*texts: str) -> None:
    for text in texts:
        assert SECRET_KEY not in text
        assert "PROVIDER-SECRET" not in text
        assert "org-abc123" not in text


CONFIG = RuntimeConfig(retry_base=0.05, max_attempts=3, fsync=False)


async def forked_session(rt: Runtime, sid: str) -> None:
    """A session that forks: an edited follow-up after the assistant's answer."""
    await rt.append(sid, "user", "Hi, my name is Ana. Plan a trip to Porto in May?")
    answer_id = await rt.append(sid, "assistant", "Porto in May: the Ribeira and the port cellars.")
    await rt.append(sid, "user", "Actually: Porto or Lisbon?")
    await rt.append(sid, "user", "What about the trams of Lisbon?", predecessor=answer_id)


def bad_refs(request: dict[str, Any]) -> Reply:
    edits = good_edits(request)
    edits["topics"][0]["blocks"][0]["refs"] = ["r99"]
    return answer(edits)


def truncated(request: dict[str, Any]) -> Reply:
    text = json.dumps(good_edits(request))
    return answer(text[: len(text) // 2], finish_reason="length")


# -- end to end through the runtime, both backends -------------------------------------------------------

RECOVERED: dict[str, list[Reply | Callable[[dict[str, Any]], Reply]]] = {
    "good": [],
    "repair": [bad_refs],
    "truncated-then-good": [truncated],
    "429": [error(429, "rate_limit_exceeded", headers={"Retry-After": "1"})],
    "500": [error(500, "server_error")],
    "slow": [Reply(delay=math.inf, body=completion("{}"))],  # never answers: the client must give up
}


@pytest.mark.parametrize("case", list(RECOVERED))
async def test_the_model_writes_a_forked_sessions_memory(
    case: str, model: ModelServer, tmp_path: Path
) -> None:
    model.script.extend(RECOVERED[case])
    # The slow reply never comes, so the timeout is only a bound on a prompt answer (on a loaded machine:
    # up to a second or so), never a race between two delays.
    distiller = LLMDistiller(settings(model, timeout=3.0))
    async with Runtime.open(tmp_path, distiller=distiller, config=CONFIG) as rt:
        await forked_session(rt, "s")
        await rt.flush(force=True)
        status = rt.status()
    assert status.last_outcome == "success"
    assert status.pending_turns == 0
    report = oracle(tmp_path)
    assert report.records == report.consumed == report.cited == 4
    written = claims(tmp_path)
    assert "The user said: Actually: Porto or Lisbon?" in written  # the model's words, not quotes
    assert not any(c.startswith("User: “") for c in written)  # no extractive fallback was needed
    core = (tmp_path / "memory" / "core.md").read_text()
    assert "The user is called Ana." in core
    if case == "repair":
        repair = model.requests[1]["messages"]
        assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
        assert "'r99' is not a ref of this BATCH" in repair[3]["content"]
    if case == "429":
        assert model.times[1] - model.times[0] >= 1.0  # Retry-After honoured (the backoff was 0.05 s)
    if case != "good":
        assert len(model.requests) == 3  # the failed call, its retry or repair, the sibling's batch
    assert model.headers[0]["authorization"] == f"Bearer {SECRET_KEY}"


FAILED = {
    "401": (lambda r: error(401, "invalid_api_key"), ReasonCode.MODEL_AUTHENTICATION, False),
    "403": (lambda r: error(403, "permission_denied"), ReasonCode.MODEL_AUTHORIZATION, False),
    "refs-outside-the-batch": (bad_refs, ReasonCode.MODEL_BAD_RESPONSE, False),
    "truncated": (truncated, ReasonCode.MODEL_BAD_RESPONSE, False),
    "500": (lambda r: error(500, "server_error"), ReasonCode.MODEL_PROVIDER_INTERNAL, True),
    "slow": (lambda r: Reply(delay=math.inf, body=completion("{}")), ReasonCode.MODEL_TIMEOUT, True),
}


@pytest.mark.parametrize("case", list(FAILED))
async def test_a_failed_call_leaves_the_workspace_byte_identical_and_the_batch_owed(
    case: str, model: ModelServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    reply, code, retryable = FAILED[case]
    # As above: the slow reply never comes, so 3 s only bounds the prompt answers before it.
    distiller = LLMDistiller(settings(model, timeout=3.0))
    async with Runtime.open(tmp_path, distiller=distiller, config=CONFIG) as rt:
        await forked_session(rt, "a")
        await rt.flush(force=True)
        before = snapshot(tmp_path / "memory")
        model.default = reply
        await rt.append("b", "user", "I never fly before noon. Book the Lisbon flight?")
        await rt.append("b", "assistant", "The 14:05 to Lisbon, then.")
        await rt.flush(force=True)
        status = rt.status()
    assert snapshot(tmp_path / "memory") == before
    assert status.last_failure is not None
    assert (status.last_failure.reason_code, status.last_failure.retryable) == (code, retryable)
    report = oracle(tmp_path, drained=False)
    assert sorted(s.partition("/")[0] for s in report.owed) == ["b", "b"]  # owed, nothing lost
    saved = (tmp_path / "memory" / ".dagmem" / "status.json").read_text()
    assert json.loads(saved)["last_failure"]["reason_code"] == str(code)
    no_secrets(saved, caplog.text, *(str(r.__dict__) for r in caplog.records))


async def test_runtime_open_takes_the_distiller_by_name(
    model: ModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("BASE_URL", "MODEL", "API_KEY"):
        monkeypatch.delenv(f"DAGMEM_LLM_{name}", raising=False)
    with pytest.raises(InvalidInput, match="DAGMEM_LLM_BASE_URL and DAGMEM_LLM_MODEL"):
        async with Runtime.open(tmp_path, distiller="openai"):
            pass
    (tmp_path / "llm.toml").write_text(f'base_url = "{model.url}"\nmodel = "from-the-file"\n')
    monkeypatch.setenv("DAGMEM_LLM_API_KEY", SECRET_KEY)
    async with Runtime.open(tmp_path, distiller="openai", config=CONFIG) as rt:
        await forked_session(rt, "s")
        await rt.flush(force=True)
    assert model.requests[0]["model"] == "from-the-file"
    assert model.headers[0]["authorization"] == f"Bearer {SECRET_KEY}"
    oracle(tmp_path)
    with pytest.raises(InvalidInput, match="unknown distiller"):
        async with Runtime.open(tmp_path, distiller="gpt"):
            pass


# -- the wire contract and the edits, through write_session ----------------------------------------------


class Home:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = FileSessionStore(root)
        self.workspace = Workspace(root / "memory", fsync=False)

    def write(self, sid: str, distiller: Any) -> Any:
        return write_session(
            self.store, self.workspace, sid, boundary=True, distiller=distiller, attempts=1, retry_delay=0.0
        )

    def write_retrying(self, sid: str, distiller: Any) -> Any:
        return write_session(
            self.store, self.workspace, sid, boundary=True, distiller=distiller, attempts=3, retry_delay=0.0
        )


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    h = Home(tmp_path)
    yield h
    h.workspace.close()


def test_the_request_follows_the_wire_contract(model: ModelServer, home: Home) -> None:
    home.store.append("s", "user", "line one\nline two\u2028three\u2029four", node_id="u1")
    home.store.append("s", "assistant", "Noted.", node_id="a1", predecessor="u1")
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    request = model.requests[0]
    assert request["model"] == "test-model"
    assert request["temperature"] == 0
    assert request["max_tokens"] == 4096
    assert request["response_format"]["type"] == "json_schema"
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["topics", "core", "brief"]
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    lines = request["messages"][1]["content"].split("\n")
    assert lines[0] == "BATCH"
    assert lines[3] == "TOPICS"
    assert lines[4] == "CORE"
    first = json.loads(lines[1])
    assert set(first) == {"ref", "speaker", "time", "content"}
    assert (first["ref"], first["speaker"]) == ("r1", "user")
    assert first["content"] == "line one\nline two\u2028three\u2029four"
    assert "\u2028" not in lines[1]
    assert "\u2029" not in lines[1]
    assert datetime.fromisoformat(first["time"]).tzinfo is not None
    # The second write shows the topic the first wrote, with its block ids, and the core facts.
    home.store.append(
        "s", "user", "My name is Ana, and the trip is in June now.", node_id="u2", predecessor="a1"
    )
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    content = model.requests[1]["messages"][1]["content"]
    shown = topics_of(model.requests[1])
    assert [t["path"] for t in shown] == ["topics/trip.md"]
    block_ids = [b.id for b in topic(home.root, "topics/trip.md").blocks[:2]]
    assert [b["id"] for b in shown[0]["blocks"]] == block_ids
    # No core facts; the one topic is shown in full, so the index lists nothing beside it.
    assert content.split("\n")[content.split("\n").index("CORE") + 1 :] == ["INDEX", ""]
    oracle(home.root)


def test_a_replacing_block_keeps_its_id_and_every_citation(model: ModelServer, home: Home) -> None:
    home.store.append("s", "user", "I live in Porto, near the trip planner's office.", node_id="u1")
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    (old,) = list(topic(home.root, "topics/trip.md").blocks)

    def replace(request: dict[str, Any]) -> Reply:
        (shown,) = topics_of(request)
        block = {
            "claim": "The user moved from Porto to Lisbon.",
            "refs": ["r1"],
            "replaces": shown["blocks"][0]["id"],
        }
        return answer(
            {"topics": [{"path": "topics/trip.md", "title": "Trip", "blocks": [block]}], "core": []}
        )

    model.script.append(replace)
    home.store.append("s", "user", "Update for the trip: I moved to Lisbon.", node_id="u2", predecessor="u1")
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    (new,) = topic(home.root, "topics/trip.md").blocks
    assert new.id == old.id
    assert new.claim == "The user moved from Porto to Lisbon."
    assert new.citations[0] == old.citations[0]  # carried over: evidence is never dropped
    assert len(new.citations) == 2
    oracle(home.root)


def test_replaces_never_merges_evidence_of_a_sibling_branch(model: ModelServer, home: Home) -> None:
    root = home.store.append("s", "user", "Plan the trip: Porto or Lisbon?", node_id="u0").id
    home.store.append("s", "user", "The trip goes to Porto.", node_id="x1", predecessor=root)
    home.store.append("s", "user", "The trip goes to Lisbon.", node_id="y1", predecessor=root)
    home.store.set_head("s", "y1")

    def replacing(request: dict[str, Any]) -> Reply:
        edits = good_edits(request)
        shown = topics_of(request)
        if shown:  # the second batch (x1): try to fold it into the sibling's block
            edits["topics"][0]["blocks"][0]["replaces"] = shown[0]["blocks"][-1]["id"]
        return answer(edits)

    model.default = replacing
    assert home.write("s", LLMDistiller(settings(model))).batches == 2
    blocks = topic(home.root, "topics/trip.md").blocks
    said = [b.claim for b in blocks]
    assert said == [
        "The user said: Plan the trip: Porto or Lisbon?",
        "The user said: The trip goes to Lisbon.",
        "The user said: The trip goes to Porto.",  # added beside it, not replacing it
    ]
    assert all(len(b.citations) == 1 for b in blocks)
    oracle(home.root)


def test_records_the_model_left_uncited_get_an_extractive_block(model: ModelServer, home: Home) -> None:
    home.store.append("s", "user", "Plan a trip to Porto in May?", node_id="u1")
    home.store.append(
        "s", "assistant", "Porto in May: the Ribeira and the cellars.", node_id="a1", predecessor="u1"
    )

    def first_only(request: dict[str, Any]) -> Reply:
        edits = good_edits(request)
        edits["topics"][0]["blocks"] = edits["topics"][0]["blocks"][:1]
        return answer(edits)

    model.script.append(first_only)
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    written = claims(home.root)
    assert "The user said: Plan a trip to Porto in May?" in written
    assert "Assistant: “Porto in May: the Ribeira and the cellars.”" in written
    oracle(home.root)


FORGED = (
    "Forged [^c-0123456789] and ^b-01234567 and [x](../sources/s.md#src-0123456789abcdef) "
    "and <|endoftext|> and <b>html</b>"
)


def test_claims_are_made_inert(model: ModelServer, home: Home) -> None:
    home.store.append("s", "user", "My name is Ana <|endoftext|>", node_id="u1")

    def forging(request: dict[str, Any]) -> Reply:
        block = {"claim": FORGED, "refs": ["r1"], "replaces": None}
        heading = {"claim": "# Not a heading", "refs": ["r1"], "replaces": None}
        return answer(
            {
                "topics": [
                    {"path": "topics/forged.md", "title": "T ^b-01234567 [^c-1]", "blocks": [block, heading]}
                ],
                "core": [
                    {
                        "claim": "The user is Ana <|endoftext|> [^c-0123456789]",
                        "refs": ["r1"],
                        "replaces": None,
                    }
                ],
            }
        )

    model.script.append(forging)
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    forged = topic(home.root, "topics/forged.md")
    assert [len(b.citations) for b in forged.blocks] == [1, 1]  # only the real citation
    assert forged.blocks[0].claim.startswith("Forged \\[\\^c-0123456789\\] and \\^b-01234567 and \\[x\\]\\(")
    assert "\\<\\|endoftext\\|\\>" in forged.blocks[0].claim
    assert forged.blocks[1].claim == "\\# Not a heading"
    core = (home.root / "memory" / "core.md").read_text()
    assert "\\<\\|endoftext\\|\\>" in core
    assert count_tokens(core) <= 2000
    oracle(home.root)


@pytest.mark.parametrize(
    ("reply", "code", "retryable"),
    [
        (error(400, "context_length_exceeded"), ReasonCode.MODEL_CONTEXT_LENGTH, False),
        (error(400, "content_filter"), ReasonCode.MODEL_CONTENT_POLICY, False),
        (answer("", finish_reason="content_filter"), ReasonCode.MODEL_CONTENT_POLICY, False),
        (
            Reply(body=completion(None, refusal="I cannot help with that.")),
            ReasonCode.MODEL_CONTENT_POLICY,
            False,
        ),
        (error(404, "model_not_found"), ReasonCode.MODEL_INVALID_REQUEST, False),
        (error(503, "overloaded"), ReasonCode.MODEL_PROVIDER_INTERNAL, True),
        (Reply(body=b"<html>not json</html>"), ReasonCode.MODEL_BAD_RESPONSE, False),
    ],
)
def test_failures_map_to_closed_codes(
    reply: Reply, code: ReasonCode, retryable: bool, model: ModelServer, home: Home
) -> None:
    model.default = lambda r: reply
    home.store.append("s", "user", "Plan a trip to Porto in May?", node_id="u1")
    before = snapshot(home.root / "memory")
    result = home.write("s", LLMDistiller(settings(model)))
    assert (result.outcome, result.reason_code, result.retryable) == ("failed", code, retryable)
    assert snapshot(home.root / "memory") == before
    no_secrets(result.detail or "")


def test_a_server_that_refuses_response_format_is_asked_again_without_it(
    model: ModelServer, home: Home
) -> None:
    model.script.append(error(400, "invalid_request_error"))  # "response_format is not supported"
    distiller = LLMDistiller(settings(model))
    home.store.append("s", "user", "Plan a trip to Porto in May?", node_id="u1")
    assert home.write("s", distiller).outcome == "written"
    assert ["response_format" in r for r in model.requests] == [True, False]
    home.store.append("s", "user", "And Lisbon after Porto?", node_id="u2", predecessor="u1")
    assert home.write("s", distiller).outcome == "written"
    assert "response_format" not in model.requests[2]  # remembered
    oracle(home.root)


def test_no_server_is_a_retryable_transport_failure(home: Home) -> None:
    with ModelServer() as gone:
        url = gone.url
    distiller = LLMDistiller(load_llm_settings(None, base_url=url, model="m", connect_timeout=1.0))
    home.store.append("s", "user", "Plan a trip to Porto in May?", node_id="u1")
    result = home.write("s", distiller)
    assert (result.reason_code, result.retryable) == (ReasonCode.MODEL_TRANSPORT, True)


def test_retry_after_as_seconds_and_as_an_http_date() -> None:
    from dagmem.memory.write._llm import retry_after

    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"retry-after-ms": "1500"}) == 1.5
    when = datetime(2030, 1, 1, tzinfo=UTC)
    later = format_datetime(when + timedelta(seconds=30), usegmt=True)
    assert retry_after({"retry-after": later}, now=when.timestamp) == 30.0
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({"retry-after": "99999999"}) == 3600.0
    assert retry_after({}) is None


def test_a_batch_over_one_calls_budgets_takes_several_calls(model: ModelServer, home: Home) -> None:
    previous = None
    for i in range(5):
        previous = home.store.append(
            "s", "user", f"Trip note {i}: " + "porto " * 150, predecessor=previous
        ).id
    distiller = LLMDistiller(settings(model, max_input_tokens=1_200))  # room for one such record a call
    assert home.write("s", distiller).records == 5
    assert [len(batch_of(r)) for r in model.requests] == [1, 1, 1, 1, 1]
    assert [t["path"] for t in topics_of(model.requests[1])] == ["topics/trip.md"]  # sees the edits before
    assert len(topic(home.root, "topics/trip.md").blocks) == 5
    model.requests.clear()
    for i in range(5):
        previous = home.store.append("s", "user", f"Short note {i} on the trip.", predecessor=previous).id
    assert home.write("s", LLMDistiller(settings(model, max_output_tokens=64))).records == 5
    assert [len(batch_of(r)) for r in model.requests] == [2, 2, 1]  # the answer budget: two claims a call
    oracle(home.root)


def test_a_record_over_the_prompt_budget_gets_an_extractive_block_without_a_call(
    model: ModelServer, home: Home
) -> None:
    home.store.append("s", "user", "Porto " * 3000, node_id="u1")
    assert home.write("s", LLMDistiller(settings(model, max_input_tokens=1_000))).outcome == "written"
    assert model.requests == []
    assert any(c.startswith("User: “Porto Porto") for c in claims(home.root))
    oracle(home.root)


# -- through `dagmem write`, as a user runs it -------------------------------------------------------------


def dagmem_cli(*args: str, home: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DAGMEM_LLM_")}
    return dagmem_run(*args, "--home", str(home), env={**clean, **env})


def host_session(home: Path) -> None:
    store = FileSessionStore(home)
    u = store.append("s", "user", "Hi, my name is Ana. Plan a trip to Porto in May?").id
    a = store.append("s", "assistant", "Porto in May: the Ribeira and the port cellars.", predecessor=u).id
    store.append("s", "user", "Actually: Porto or Lisbon?", predecessor=a)
    store.append("s", "user", "What about the trams of Lisbon?", predecessor=a)


def test_dagmem_write_with_the_openai_distiller(model: ModelServer, tmp_path: Path) -> None:
    host_session(tmp_path)
    missing = dagmem_cli("write", "--force", "--distiller", "openai", home=tmp_path, env={})
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"error: the openai distiller needs DAGMEM_LLM_BASE_URL and DAGMEM_LLM_MODEL "
        f"(or base_url and model in {tmp_path / 'llm.toml'})"
    ]
    assert not (tmp_path / "memory").exists()  # nothing written
    env = {"DAGMEM_LLM_BASE_URL": model.url, "DAGMEM_LLM_MODEL": "m", "DAGMEM_LLM_API_KEY": SECRET_KEY}
    model.default = lambda r: error(401, "invalid_api_key")
    for flags in (["-vv"], ["--json"]):
        failed = dagmem_cli("write", "--force", "--distiller", "openai", *flags, home=tmp_path, env=env)
        assert failed.returncode == 1
        assert "MODEL_AUTHENTICATION" in failed.stdout + failed.stderr
        no_secrets(failed.stdout, failed.stderr)
    no_secrets((tmp_path / "memory" / ".dagmem" / "status.json").read_text())
    verify = dagmem_cli("verify", home=tmp_path, env={})
    assert verify.returncode == 0, verify.stdout
    model.default = lambda r: answer(good_edits(r))
    done = dagmem_cli("write", "--force", "--distiller", "openai", "--json", home=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["sessions"][0]["records"] == 4
    strict = dagmem_cli("verify", "--strict", home=tmp_path, env={})
    assert strict.returncode == 0, strict.stdout
    assert "The user said: Actually: Porto or Lisbon?" in claims(tmp_path)


def test_the_lock_is_free_during_the_model_call_and_a_concurrent_install_re_distils(
    model: ModelServer, home: Home
) -> None:
    """While the model thinks, another writer installs into the same topic file (it can: the lock is
    free); the install then sees the file changed (CONCURRENT_UPDATE) and distils again."""
    other = Workspace(home.root / "memory", fsync=False)
    intruder = [ArchiveRecord("other", "o1", "user", 0, 1_750_000_000.0, "trip trip trip: the trip to Faro")]

    def meanwhile(request: dict[str, Any]) -> Reply:
        write_batch(other, "other", intruder, ExtractiveDistiller())  # takes the workspace lock
        return answer(good_edits(request))

    home.store.append("s", "user", "Plan a trip to Porto in May?", node_id="u1")
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    model.script.append(meanwhile)
    home.store.append("s", "user", "And the trip to Lisbon after it?", node_id="u2", predecessor="u1")
    try:
        assert home.write_retrying("s", LLMDistiller(settings(model))).outcome == "written"
    finally:
        other.close()
    assert len(model.requests) == 3  # the second batch was distilled again after CONCURRENT_UPDATE
    shown = [[b["claim"] for b in t["blocks"]] for t in topics_of(model.requests[2])]
    assert shown == [
        ["The user said: Plan a trip to Porto in May?", "User: “trip trip trip: the trip to Faro”"]
    ]
    written = claims(home.root)
    assert "User: “trip trip trip: the trip to Faro”" in written  # the other writer's block survived
    assert "The user said: And the trip to Lisbon after it?" in written
    oracle(home.root)


# -- consolidation with the model as the judge ----------------------------------------------------------


def judge(
    groups_by_claims: list[tuple[list[str], str]], supersessions: list[tuple[str, str]] | None = None
) -> Callable[[dict[str, Any]], Reply]:
    """A model that answers consolidation requests (groups named by their claims' text) and supersession
    reviews ((older claim, newer claim) pairs; none by default)."""

    def reply(request: dict[str, Any]) -> Reply:
        system = request["messages"][0]["content"]
        if not system.startswith(("You consolidate", "You review")):
            return answer(good_edits(request))
        lines = request["messages"][1]["content"].split("\n")[1:-1]
        ids = {json.loads(line)["claim"]: json.loads(line)["id"] for line in lines}
        if system.startswith("You review"):
            pairs = [{"old": ids[o], "new": ids[n]} for o, n in supersessions or [] if o in ids and n in ids]
            return answer({"supersessions": pairs})
        groups = [{"ids": [ids[c] for c in said], "claim": claim} for said, claim in groups_by_claims]
        return answer({"groups": groups})

    return reply


def test_dagmem_reorganise_merges_what_the_model_judges_the_same_but_never_sibling_branches(
    model: ModelServer, home: Home
) -> None:
    store = home.store
    store.append("s", "user", "Plan the trip.", node_id="r0")
    store.append("s", "user", "Porto please.", node_id="u1", predecessor="r0")
    store.append("s", "user", "Porto, definitely.", node_id="u2", predecessor="u1")
    store.append("s", "user", "Lisbon then?", node_id="x1", predecessor="r0")
    store.append("s", "user", "Lisbon maybe?", node_id="y1", predecessor="r0")
    store.set_head("s", "u2")
    assert home.write("s", LLMDistiller(settings(model))).records == 5
    before = {(b.claim, len(b.citations)) for b in topic(home.root, "topics/trip.md").blocks}
    assert len(before) == 5
    model.default = judge(
        [
            (
                ["The user said: Porto please.", "The user said: Porto, definitely."],
                "The user wants Porto [^c-1].",
            ),
            (
                ["The user said: Lisbon then?", "The user said: Lisbon maybe?"],
                "The user wonders about Lisbon.",
            ),
        ]
    )
    env = {"DAGMEM_LLM_BASE_URL": model.url, "DAGMEM_LLM_MODEL": "m", "DAGMEM_LLM_API_KEY": SECRET_KEY}
    done = dagmem_cli("reorganise", "--distiller", "openai", "--json", home=home.root, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert (report["changed"], report["merged"]) == (["topics/trip.md"], 1)
    blocks = topic(home.root, "topics/trip.md").blocks
    assert [(b.claim, len(b.citations)) for b in blocks] == [
        ("The user said: Plan the trip.", 1),
        ("The user wants Porto \\[\\^c-1\\].", 2),  # one path: merged, inert, both citations carried
        ("The user said: Lisbon then?", 1),  # sibling branches: §8 keeps them apart
        ("The user said: Lisbon maybe?", 1),
    ]
    strict = dagmem_cli("verify", "--strict", home=home.root, env={})
    assert strict.returncode == 0, strict.stdout
    no_secrets(done.stdout, done.stderr)


def test_the_core_facts_shown_are_what_core_md_renders(model: ModelServer, home: Home) -> None:
    previous = None
    for i in range(300):  # the extractive core path fills the master well past 2,000 tokens
        previous = home.store.append("s", "user", f"I like the number {i} a lot.", predecessor=previous).id
    home.write("s", ExtractiveDistiller())
    master = (home.root / "memory" / "topics" / "core.md").read_text()
    assert count_tokens(master) > 3000
    home.store.append("s", "user", "Plan a trip to Porto?", predecessor=previous)
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    lines = model.requests[0]["messages"][1]["content"].split("\n")
    core = lines[lines.index("CORE") + 1 : lines.index("INDEX")]
    rendered = (home.root / "memory" / "core.md").read_text()
    assert 0 < count_tokens("\n".join(core)) <= 2000
    assert all(json.loads(line)["id"] in rendered for line in core)


# -- supersedes (issue 23): the model names an older block whose fact a claim makes no longer true ---------


def superseding(
    target: Callable[[dict[str, Any]], str], *, refs: tuple[str, ...] = ("r1",), replaces: bool = False
) -> Callable[[dict[str, Any]], Reply]:
    """An answer whose one block says the user moved and supersedes the block `target(request)` (and, with
    `replaces`, also replaces it)."""

    def step(request: dict[str, Any]) -> Reply:
        block = {
            "claim": "The user moved to Lisbon.",
            "refs": list(refs),
            "replaces": target(request) if replaces else None,
            "supersedes": target(request),
        }
        return answer(
            {"topics": [{"path": "topics/trip.md", "title": "Trip", "blocks": [block]}], "core": []}
        )

    return step


def first_shown(request: dict[str, Any]) -> str:
    return str(topics_of(request)[0]["blocks"][0]["id"])


def last_shown(request: dict[str, Any]) -> str:
    return str(topics_of(request)[0]["blocks"][-1]["id"])


def test_supersedes_marks_the_older_block_and_the_prompt_shows_date_and_status(
    model: ModelServer, home: Home
) -> None:
    home.store.append("s", "user", "For the trip: I live in Porto.", node_id="u1")
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    (old,) = topic(home.root, "topics/trip.md").blocks
    model.script.append(superseding(first_shown))
    home.store.append("s", "user", "Trip update: I moved to Lisbon.", node_id="u2", predecessor="u1")
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    schema = model.requests[1]["response_format"]["json_schema"]["schema"]
    block_schema = schema["properties"]["topics"]["items"]["properties"]["blocks"]["items"]
    assert block_schema["required"] == ["claim", "refs", "replaces", "supersedes"]
    assert schema["properties"]["core"]["items"]["properties"]["supersedes"] == {"type": ["string", "null"]}
    (shown,) = topics_of(model.requests[1])
    assert shown["blocks"] == [
        {"id": old.id, "claim": old.claim, "date": old.citations[-1].date, "status": "current"}
    ]
    marked, new = topic(home.root, "topics/trip.md").blocks
    assert marked.id == old.id
    assert marked.citations == old.citations  # evidence untouched: only the status line is added
    assert marked.superseded is not None
    assert (marked.superseded.by, marked.superseded.topic, marked.superseded.reason) == (
        new.id,
        "topics/trip.md",
        "update",
    )
    assert new.superseded is None
    home.store.append("s", "user", "Trip: which museums?", node_id="u3", predecessor="u2")
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    statuses = [b["status"] for b in topics_of(model.requests[2])[0]["blocks"]]
    assert statuses[:2] == ["superseded", "current"]
    oracle(home.root)


_INVALID_SUPERSEDES = {
    # case: (the bad answer, what the repair round tells the model)
    "unknown": (superseding(lambda request: "b-00000000"), "not a shown block"),
    "self": (superseding(first_shown, replaces=True), "cannot supersede itself"),
    "assistant": (superseding(first_shown, refs=("r2",)), "the user's own words"),
    "sibling": (superseding(last_shown), "another branch"),
    "superseded": (superseding(first_shown), "already superseded"),
}


@pytest.mark.parametrize("case", sorted(_INVALID_SUPERSEDES))
def test_an_invalid_supersedes_gets_the_repair_round(model: ModelServer, home: Home, case: str) -> None:
    home.store.append("s", "user", "For the trip: I live in Porto.", node_id="u0")
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    parent = "u0"
    if case == "sibling":  # an alternative of the batch's own prompt (an edited prompt) holds the block
        home.store.append("s", "user", "For the trip: I live in Faro.", node_id="x1", predecessor="u0")
        assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    if case == "superseded":  # a valid answer supersedes it first
        model.script.append(superseding(first_shown))
        home.store.append("s", "user", "Trip update: I moved to Braga.", node_id="m1", predecessor="u0")
        assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
        parent = "m1"
    home.store.append("s", "user", "Trip update: I moved to Lisbon.", node_id="u2", predecessor=parent)
    home.store.append("s", "assistant", "Lisbon it is.", node_id="a2", predecessor="u2")
    before = snapshot(home.root / "memory")
    bad, said = _INVALID_SUPERSEDES[case]
    asked = len(model.requests)
    model.script.extend([bad, bad])
    failed = home.write("s", LLMDistiller(settings(model)))
    assert (failed.outcome, failed.reason_code) == ("failed", ReasonCode.MODEL_BAD_RESPONSE)
    repair = model.requests[asked + 1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert said in repair[3]["content"]
    assert snapshot(home.root / "memory") == before  # nothing written; the batch is still owed
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"  # a good answer lands
    oracle(home.root)


def test_dagmem_reorganise_adds_the_supersessions_the_model_finds_but_never_between_alternatives(
    model: ModelServer, home: Home
) -> None:
    store = home.store
    store.append("s", "user", "Plan the trip.", node_id="r0")
    store.append("s", "user", "The trip goes to Porto.", node_id="u1", predecessor="r0")
    store.append(
        "s", "user", "Let us do Faro.", node_id="u2", predecessor="u1"
    )  # no cue: the rules find none
    store.append("s", "user", "The trip goes to Braga.", node_id="x1", predecessor="r0")  # an edited prompt
    store.set_head("s", "u2")
    assert home.write("s", LLMDistiller(settings(model))).records == 4
    model.default = judge(
        [],
        [
            ("The user said: The trip goes to Porto.", "The user said: Let us do Faro."),
            ("The user said: The trip goes to Braga.", "The user said: Let us do Faro."),
        ],
    )
    env = {"DAGMEM_LLM_BASE_URL": model.url, "DAGMEM_LLM_MODEL": "m", "DAGMEM_LLM_API_KEY": SECRET_KEY}
    done = dagmem_cli("reorganise", "--distiller", "openai", "--json", home=home.root, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert (report["changed"], report["merged"], report["superseded"]) == (["topics/trip.md"], 0, 1)
    blocks = {b.claim: b for b in topic(home.root, "topics/trip.md").blocks}
    porto, faro = (
        blocks["The user said: The trip goes to Porto."],
        blocks["The user said: Let us do Faro."],
    )
    assert porto.superseded is not None
    assert porto.superseded.by == faro.id
    assert (
        blocks["The user said: The trip goes to Braga."].superseded is None
    )  # an alternative: left, not superseded
    strict = dagmem_cli("verify", "--strict", home=home.root, env={})
    assert strict.returncode == 0, strict.stdout


def test_the_models_brief_entries_are_filed_and_a_convention_must_rest_on_the_persons_words(
    model: ModelServer, home: Home
) -> None:
    home.store.append("s", "user", "Never push straight to main.", node_id="u1")
    home.store.append(
        "s", "assistant", "Understood. The tests pass with mix test.", node_id="a1", predecessor="u1"
    )
    edits = {"topics": [{"path": "topics/workflow.md", "title": "Workflow", "blocks": [
        {"claim": "The user never pushes straight to main.", "refs": ["r1", "r2"], "replaces": None, "supersedes": None}]}],
        "core": []}  # fmt: skip
    wrong = {
        **edits,
        "brief": [{"section": "convention", "text": "The tests pass with mix test.", "refs": ["r2"]}],
    }
    right = {
        **edits,
        "brief": [
            {"section": "convention", "text": "Never push straight to main.", "refs": ["r1"]},
            {"section": "command", "text": "test: `mix test` passed", "refs": ["r2"]},
        ],
    }
    model.script += [answer(wrong), answer(right)]  # the first gets the repair round
    assert home.write("s", LLMDistiller(settings(model))).outcome == "written"
    assert "a convention cites only records the user typed" in model.requests[1]["messages"][-1]["content"]
    brief = [b.claim for b in topic(home.root, "topics/brief.md").blocks]
    assert brief == ["Convention: Never push straight to main.", "Command: test: \\`mix test\\` passed"]
    oracle(home.root)
