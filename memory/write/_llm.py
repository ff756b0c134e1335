"""The LLM distiller: memory written by a model behind any OpenAI-compatible chat-completions server
(a hosted API, vLLM, llama.cpp's server, Ollama's /v1), over HTTP with httpx (DESIGN §9).

Why httpx and not the `openai` client: the wire contract is one POST, and what matters is around it —
the status code and `Retry-After` mapped to dagmem's own closed reason codes, no retries hidden inside
the client (the planner owns retries and their backoff), a total deadline per call, and no provider text
in any exception dagmem raises. httpx gives exactly the request and the response; the `openai` client
would add its own retry loop, exception texts carrying the provider's message, and more dependencies.

The distiller runs outside the workspace lock (write_batch distils before it locks). Its edits go through
the same `TopicEdit` rules as the extractive distiller's, then through write_batch's validation and
transaction. One invalid answer gets one repair round; a second is `MODEL_BAD_RESPONSE`. Records no block
cites get an extractive block, so every record is cited and nothing said is dropped.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar, runtime_checkable

import httpx

from ..format import ArchiveRecord, Topic, TopicFormatError, count_tokens, parse_topic, plan_core
from ..outcomes import ReasonCode, WriteFailure
from ._blocks import TopicEdit
from ._core_facts import CORE_PATH
from ._distill import (
    TOPIC_FILE_LIMIT,
    BatchInput,
    Edits,
    ExtractiveDistiller,
    TopicReader,
    _keywords,
    _open_part,
    _slug,
)
from ._llm_config import LLMConfigError, LLMSettings
from ._llm_http import DeadlineTransport, environment_proxy
from ._llm_wire import (
    DEDUP_FORMAT,
    DEDUP_PROMPT,
    RESPONSE_FORMAT,
    SCRUBBED,
    SUPERSEDE_FORMAT,
    SUPERSEDE_PROMPT,
    SYSTEM_PROMPT,
    AnswerEdits,
    InvalidAnswer,
    _line,
    apply_answer,
    batch_lines,
    core_lines,
    index_lines,
    parse_answer,
    parse_groups,
    parse_pairs,
    render_prompt,
    repair_prompt,
    topic_line,
)

__all__ = ["IndexReader", "LLMDistiller", "TopicLister", "Usage"]

log = logging.getLogger("dagmem.llm")

T = TypeVar("T")

MAX_TOPICS: Final = 8  # topic files shown to the model per call
TOKENS_PER_CLAIM: Final = 32  # answer tokens to allow per record of a call (a claim and its refs)
TOPIC_TOKENS: Final = 8_000  # at most this much of the prompt shows topics
INDEX_TOKENS: Final = 1_000  # at most this much shows the topic index (what the topics left of the rest)
MAX_BODY: Final = 16 * 1024 * 1024
MAX_RETRY_AFTER: Final = 3_600.0
ANSWERS_PER_CALL: Final = 2  # a call's deadline: this many timeouts (an answer and its repair round)
MIN_SCRUBBED_KEY: Final = 8  # a shorter key is a placeholder ("EMPTY"), and scrubbing it would garble claims
_CONTEXT_PHRASES: Final = (
    "context length",
    "context_length",
    "maximum context",
    "context window",
    "available context",
    "too many tokens",
    "prompt is too long",
)
_POLICY_CODES: Final = ("content_filter", "content_policy_violation", "content_policy")
_POLICY_PHRASES: Final = ("content policy", "content management policy", "content filter", "safety system")


@runtime_checkable
class TopicLister(Protocol):
    def paths(self) -> list[str]:
        """Every topic file's path ("topics/<slug>.md"), sorted."""
        ...


@runtime_checkable
class IndexReader(Protocol):
    def topic_index(self) -> str | None:
        """The text of the topic index (`topics/index.md`), None when there is none."""
        ...


@dataclass
class Usage:
    """Tokens the model server reported, summed over this distiller's calls."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Fallback(ExtractiveDistiller):
    core = False  # the model owns core.md here; the fallback only makes sure every record is cited


class _Overlay:
    """The workspace's topics as the edits so far leave them."""

    def __init__(self, base: TopicReader, edits: Mapping[str, str]) -> None:
        self.base = base
        self.edits = edits

    def read(self, relpath: str) -> str | None:
        return self.edits[relpath] if relpath in self.edits else self.base.read(relpath)

    def size(self, relpath: str) -> int | None:
        return len(self.edits[relpath].encode()) if relpath in self.edits else self.base.size(relpath)

    def paths(self) -> list[str]:
        listed = self.base.paths() if isinstance(self.base, TopicLister) else []
        return sorted({*listed, *self.edits})

    def topic_index(self) -> str | None:
        return self.base.topic_index() if isinstance(self.base, IndexReader) else None


class LLMDistiller:
    name = "openai"

    def __init__(self, settings: LLMSettings, *, transport: httpx.BaseTransport | None = None) -> None:
        if not (settings.base_url or "").startswith(("http://", "https://")) or not settings.model:
            raise LLMConfigError("the openai distiller needs an http:// or https:// base URL and a model")
        self.settings = settings
        self.transport = transport
        key = settings.api_key.get_secret_value() if settings.api_key is not None else ""
        self._secrets = (key,) if len(key) >= MIN_SCRUBBED_KEY else ()
        self._deadline = 0.0  # of the call in progress (time.monotonic())
        self._timed: DeadlineTransport | None = None  # the call in progress's (unless `transport`)
        self.usage = Usage()
        self._response_format = True  # until the server refuses it (then retried once without)

    # -- the distiller -------------------------------------------------------------------------------------

    def distill(self, batch: BatchInput, topics: TopicReader) -> Edits:
        """A batch takes as many calls as its records need within the per-call budgets (each call sees the
        edits of the calls before it); a record too big for any call gets an extractive block."""
        lineage: frozenset[str] | None = None

        def on_path(anchor: str) -> bool:
            nonlocal lineage
            if lineage is None:
                lineage = batch.lineage() if batch.lineage is not None else frozenset()
            return anchor in lineage

        edits: dict[str, str] = {}
        cited: set[str] = set()
        for chunk in self._calls(batch.records, topics):
            out = self._distill_call(batch.session_id, chunk, _Overlay(topics, edits), on_path)
            edits.update(out.edits)
            cited |= out.cited
        result: dict[str, str | None] = dict(edits)
        uncited = tuple(r for r in batch.records if r.source_id not in cited)
        if uncited:
            result.update(_Fallback().distill(BatchInput(batch.session_id, uncited), _Overlay(topics, edits)))
        return result

    def _calls(self, records: Sequence[ArchiveRecord], topics: TopicReader) -> list[list[ArchiveRecord]]:
        """The batch's records in runs that fit one call: three quarters of the prompt budget left after
        the instructions and the core facts (the rest shows topics), and about one claim's worth of the
        answer budget per record."""
        core = _core_shown(topics)
        fixed = count_tokens(SYSTEM_PROMPT) + count_tokens(render_prompt([], [], core))
        room = (self.settings.max_input_tokens - fixed) * 3 // 4
        most = max(1, self.settings.max_output_tokens // TOKENS_PER_CLAIM)
        calls: list[list[ArchiveRecord]] = []
        run: list[ArchiveRecord] = []
        used = 0
        for record in records:
            size = count_tokens(batch_lines([record])[0]) + 1
            if size > room:
                log.info("a record of %d tokens is over the per-call budget: an extractive block", size)
                continue
            if run and (used + size > room or len(run) >= most):
                calls.append(run)
                run, used = [], 0
            run.append(record)
            used += size
        if run:
            calls.append(run)
        return calls

    def _distill_call(
        self,
        session_id: str,
        records: Sequence[ArchiveRecord],
        topics: TopicReader,
        on_path: Callable[[str], bool],
    ) -> AnswerEdits:
        lines = batch_lines(records)
        core_part = _core_shown(topics)
        fixed = count_tokens(SYSTEM_PROMPT) + count_tokens(render_prompt(lines, [], core_part))
        shown = self._shown_topics(records, topics, min(TOPIC_TOKENS, self.settings.max_input_tokens - fixed))
        # The map of every other topic, in what the shown topics left of the rest of the prompt.
        left = self.settings.max_input_tokens - fixed - sum(count_tokens(line) + 1 for _, line in shown)
        index = index_lines(
            topics.topic_index() if isinstance(topics, IndexReader) else None,
            skip=[path for path, _ in shown],
            budget=min(INDEX_TOKENS, left),
        )
        user = render_prompt(lines, [line for _, line in shown], core_part, index)
        messages: list[dict[str, str]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user},
        ]

        return self._ask(
            messages,
            RESPONSE_FORMAT,
            lambda content: apply_answer(
                parse_answer(content, secrets=self._secrets),
                records,
                topics,
                session_id=session_id,
                on_path=on_path,
                open_part=open_part_in(topics),
                shown=[path for path, _ in shown],
            ),
        )

    def _shown_topics(self, records: Any, topics: TopicReader, budget: int) -> list[tuple[str, str]]:
        """The topics the model may touch, as (path, TOPICS line): those whose name shares words with the
        batch (issue 8's recall can take this over), best first, within `budget` tokens."""
        if not isinstance(topics, TopicLister) or budget <= 0:
            return []
        words = {_slug(w) for r in records for w in _keywords(r.content)}

        def score(path: str) -> int:
            stem = path[len("topics/") : -len(".md")].split("--", maxsplit=1)[0]
            return len(set(stem.split("-")) & words) + (2 if stem in words else 0)

        scored = [(score(p), p) for p in topics.paths() if p != CORE_PATH]
        ranked = sorted((item for item in scored if item[0] > 0), key=lambda item: (-item[0], item[1]))
        shown: list[tuple[str, str]] = []
        used = 0
        for _, path in ranked[:MAX_TOPICS]:
            topic = _parse_or_none(topics.read(path), path)
            if topic is None:
                continue
            line = topic_line(path, topic)
            tokens = count_tokens(line)
            if used + tokens <= budget:
                shown.append((path, line))
                used += tokens
        return shown

    # -- consolidation: model-judged duplicates (`dagmem reorganise --distiller openai`) ---------------------

    def duplicates(self, path: str, blocks: Sequence[tuple[str, str]]) -> list[tuple[list[str], str]]:
        """Groups of blocks of one topic file that say the same thing, each with one claim for them."""
        lines = [_line({"id": block_id, "claim": claim}) for block_id, claim in blocks]
        prompt = "\n".join(["TOPIC " + path, *lines]) + "\n"
        if count_tokens(DEDUP_PROMPT) + count_tokens(prompt) > self.settings.max_input_tokens:
            log.info("reorganise: %s is over max_input_tokens; not judged", path)
            return []
        messages = [{"role": "system", "content": DEDUP_PROMPT}, {"role": "user", "content": prompt}]
        return self._ask(
            messages,
            DEDUP_FORMAT,
            lambda content: parse_groups(content, [b for b, _ in blocks], secrets=self._secrets),
        )

    def supersessions(self, path: str, blocks: Sequence[tuple[str, str, str, str]]) -> list[tuple[str, str]]:
        """(older id, newer id) pairs of one topic file's blocks (id, plain claim, date, status) where the
        newer makes the older's fact no longer true; `reorganise` checks each against its rules."""
        lines = [
            _line({"id": i, "claim": claim, "date": date, "status": status})
            for i, claim, date, status in blocks
        ]
        prompt = "\n".join(["TOPIC " + path, *lines]) + "\n"
        if count_tokens(SUPERSEDE_PROMPT) + count_tokens(prompt) > self.settings.max_input_tokens:
            log.info("reorganise: %s is over max_input_tokens; not reviewed for supersessions", path)
            return []
        messages = [{"role": "system", "content": SUPERSEDE_PROMPT}, {"role": "user", "content": prompt}]
        return self._ask(
            messages,
            SUPERSEDE_FORMAT,
            lambda content: parse_pairs(content, [b[0] for b in blocks], secrets=self._secrets),
        )

    def _ask(
        self,
        messages: list[dict[str, str]],
        response_format: dict[str, Any],
        accept: Callable[[str | None], T],
    ) -> T:
        """One call, and one repair round when `accept` finds the answer invalid, all within one deadline
        (each request also within the timeout): no server, however it paces or shapes its answers, keeps a
        write waiting longer."""
        self._deadline = time.monotonic() + ANSWERS_PER_CALL * self.settings.timeout
        with self._client() as client:
            for attempt in (1, 2):
                content = self._complete(client, messages, response_format)
                try:
                    accepted = accept(content)
                    self._check_deadline()
                    return accepted
                except InvalidAnswer as error:
                    self._check_deadline()
                    log.info("the model's answer was invalid (%s); attempt %d of 2", error.kind, attempt)
                    if attempt == 2:
                        raise WriteFailure(
                            ReasonCode.MODEL_BAD_RESPONSE,
                            f"the model's answer was invalid after the repair round: {error.kind}",
                        ) from None
                    messages = [
                        *messages,
                        {"role": "assistant", "content": content or ""},
                        {"role": "user", "content": repair_prompt(error)},
                    ]
        raise AssertionError("unreachable")

    # -- HTTP ----------------------------------------------------------------------------------------------

    def _check_deadline(self) -> None:
        if time.monotonic() > self._deadline:
            raise WriteFailure(ReasonCode.MODEL_TIMEOUT, "the model call took longer than its deadline")

    def _client(self) -> httpx.Client:
        settings = self.settings
        # A transport per call, as the client; the environment's proxy, as httpx's own would.
        self._timed = (
            None
            if self.transport is not None
            else DeadlineTransport(environment_proxy(settings.base_url or ""))
        )
        headers = {"Content-Type": "application/json"}
        if settings.api_key is not None and settings.api_key.get_secret_value():
            headers["Authorization"] = f"Bearer {settings.api_key.get_secret_value()}"
        return httpx.Client(
            base_url=(settings.base_url or "").rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(settings.timeout, connect=settings.connect_timeout),
            transport=self._timed or self.transport,
            follow_redirects=False,
        )

    def _complete(
        self, client: httpx.Client, messages: list[dict[str, str]], response_format: dict[str, Any]
    ) -> str | None:
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": self.settings.max_output_tokens,
        }
        if self._response_format:
            body["response_format"] = response_format
        status, headers, data = self._post(client, body)
        if status in (400, 422) and "response_format" in body and _bad_request_code(data) is None:
            # A server that does not take structured output: once more without it, and from now on.
            del body["response_format"]
            status, headers, data = self._post(client, body)
            if status == 200:
                self._response_format = False
        if status != 200:
            raise _http_failure(status, headers, data)
        return self._content(data)

    def _post(self, client: httpx.Client, body: dict[str, Any]) -> tuple[int, httpx.Headers, bytes]:
        self._check_deadline()
        deadline = min(time.monotonic() + self.settings.timeout, self._deadline)
        if self._timed is not None:
            self._timed.deadline = deadline
        # `from None` everywhere: a chained httpx exception would carry the URL and the server's text.
        try:
            with client.stream("POST", "chat/completions", json=body) as response:
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > MAX_BODY:
                        raise WriteFailure(
                            ReasonCode.MODEL_BAD_RESPONSE, "the model server's answer is too large"
                        )
                    if time.monotonic() > deadline:
                        raise WriteFailure(
                            ReasonCode.MODEL_TIMEOUT, "the model server took longer than the timeout"
                        )
                    chunks.append(chunk)
                return response.status_code, response.headers, b"".join(chunks)
        except httpx.TimeoutException as exc:
            raise WriteFailure(
                ReasonCode.MODEL_TIMEOUT, f"no answer from the model server in time ({type(exc).__name__})"
            ) from None
        except httpx.HTTPError as exc:  # connect, read, protocol errors: the transport
            raise WriteFailure(
                ReasonCode.MODEL_TRANSPORT, f"could not talk to the model server ({type(exc).__name__})"
            ) from None

    def _content(self, data: bytes) -> str | None:
        try:
            envelope = json.loads(data)
            choice = envelope["choices"][0]
            message = choice.get("message") or {}
            content = message.get("content")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise WriteFailure(
                ReasonCode.MODEL_BAD_RESPONSE, "the model server's answer is not a chat completion"
            ) from None
        usage = envelope.get("usage") if isinstance(envelope, dict) else None
        self.usage.calls += 1
        if isinstance(usage, dict):
            self.usage.prompt_tokens += _int(usage.get("prompt_tokens"))
            self.usage.completion_tokens += _int(usage.get("completion_tokens"))
        if choice.get("finish_reason") == "content_filter" or message.get("refusal"):
            raise WriteFailure(ReasonCode.MODEL_CONTENT_POLICY, "the model refused the batch")
        if content is not None and not isinstance(content, str):
            raise WriteFailure(ReasonCode.MODEL_BAD_RESPONSE, "the model's message content is not text")
        for secret in self._secrets:  # echoed back: never memory, never in the repair round's prompt
            content = None if content is None else content.replace(secret, SCRUBBED)
        return content


def _core_shown(topics: TopicReader) -> list[str]:
    """The CORE lines: the core facts as `core.md` renders them (within its 2,000 tokens), not the whole
    master, so the prompt's share for them stays bounded."""
    text = topics.read(CORE_PATH)
    master = _parse_or_none(text, CORE_PATH)
    if master is None or text is None:
        return []
    kept = set(plan_core(text).kept)
    return core_lines(Topic(master.title, tuple(b for b in master.blocks if b.id in kept)))


def _parse_or_none(text: str | None, path: str) -> Topic | None:
    if text is None:
        return None
    try:
        return parse_topic(text, path)
    except TopicFormatError:
        return None  # not shown; the validator reports the file if an edit touches it


def open_part_in(topics: TopicReader) -> Callable[[str, Mapping[str, TopicEdit]], str]:
    """`apply_answer`'s `open_part`: the topic's part with room, judged with the answer's blocks so far."""

    def open_part(path: str, pending: Mapping[str, TopicEdit]) -> str:
        if not _is_full(path, topics, pending):
            return path
        return _open_part(path[len("topics/") : -len(".md")].split("--", maxsplit=1)[0], topics, pending)

    return open_part


def _is_full(path: str, topics: TopicReader, pending: Mapping[str, TopicEdit]) -> bool:
    """Full with the blocks this answer placed so far (judged per block, not per batch)."""
    edit = pending.get(path)
    size = edit.size() if edit is not None else topics.size(path)
    return size is not None and size >= TOPIC_FILE_LIMIT


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _error_fields(data: bytes) -> tuple[str, str]:
    """(code and type, message), lowercased, from the usual error bodies — for classifying only: none of
    it is ever shown, logged or stored."""
    try:
        raw = json.loads(data)
    except ValueError:
        return "", data[:2000].decode("utf-8", "replace").lower()
    error = raw.get("error", raw) if isinstance(raw, dict) else raw
    if not isinstance(error, dict):
        return "", str(error).lower()
    codes = " ".join(str(error.get(key) or "") for key in ("code", "type", "param"))
    return codes.lower(), str(error.get("message") or "").lower()


def _bad_request_code(data: bytes) -> ReasonCode | None:
    """What a 400 means when it is not just a refused parameter."""
    codes, message = _error_fields(data)
    if "context_length_exceeded" in codes or any(p in message for p in _CONTEXT_PHRASES):
        return ReasonCode.MODEL_CONTEXT_LENGTH
    if any(c in codes for c in _POLICY_CODES) or any(p in message for p in _POLICY_PHRASES):
        return ReasonCode.MODEL_CONTENT_POLICY
    return None


def retry_after(headers: Mapping[str, str], *, now: Callable[[], float] = time.time) -> float | None:
    """Seconds from `Retry-After` (seconds or an HTTP date) or `retry-after-ms`, clamped to an hour."""
    value = headers.get("retry-after-ms")
    seconds: float | None = None
    if value is not None:
        try:
            seconds = float(value) / 1000.0
        except ValueError:
            seconds = None
    value = headers.get("retry-after")
    if seconds is None and value is not None:
        try:
            seconds = float(value)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                when = None
            if when is not None:
                seconds = when.timestamp() - now()
    if seconds is None or not math.isfinite(seconds):  # absent, unreadable, NaN or infinite
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def _http_failure(status: int, headers: httpx.Headers, data: bytes) -> WriteFailure:
    said = f"the model server answered HTTP {status}"
    if status == 401:
        return WriteFailure(ReasonCode.MODEL_AUTHENTICATION, f"{said}: check DAGMEM_LLM_API_KEY")
    if status == 403:
        return WriteFailure(ReasonCode.MODEL_AUTHORIZATION, f"{said}: the key may not use this model")
    if status == 429:
        return WriteFailure(ReasonCode.MODEL_RATE_LIMIT, said, retry_after=retry_after(headers))
    if status == 408:
        return WriteFailure(ReasonCode.MODEL_TIMEOUT, said)
    if status >= 500:
        return WriteFailure(ReasonCode.MODEL_PROVIDER_INTERNAL, said, retry_after=retry_after(headers))
    if status == 413:
        return WriteFailure(ReasonCode.MODEL_CONTEXT_LENGTH, said)
    code = _bad_request_code(data) if 400 <= status < 500 else None
    return WriteFailure(code or ReasonCode.MODEL_INVALID_REQUEST, said)
