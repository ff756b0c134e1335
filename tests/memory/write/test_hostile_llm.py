"""The LLM distiller against hostile model servers and settings that can never work (issue 31): answers
shaped to make parsing blow up, a server that dribbles its headers, a server that echoes the API key back,
and settings refused when they are loaded. Real HTTP servers on loopback play the model."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dagmem import FileSessionStore, ReasonCode
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import LLMDistiller, load_llm_settings, write_session
from dagmem.memory.write._llm_config import LLMConfigError
from dagmem.memory.write._llm_wire import parse_answer
from dagmem.tests._model_server import ModelServer

SECRET_KEY = "sk-hostile-ECHOED-9b2d71"


class DribblingServer:
    """Answers every request with a status line and then one header line every `pace` seconds, for ever
    (until stopped): each read of the client gets bytes well within any per-read timeout."""

    def __init__(self, pace: float = 0.05) -> None:
        self.pace = pace
        self.stopping = threading.Event()
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            threading.Thread(target=self._dribble, args=(conn,), daemon=True).start()

    def _dribble(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                n = 0
                while not self.stopping.wait(self.pace):
                    conn.sendall(f"X-Slow-{n}: {'y' * 20}\r\n".encode())
                    n += 1
            except OSError:
                pass  # the client gave up

    def __enter__(self) -> DribblingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        self.sock.close()


def write_one(home: Path, distiller: LLMDistiller) -> Any:
    store = FileSessionStore(home)
    if not store.has_session("s"):
        store.append("s", "user", "Hi, my name is Ana. Plan a trip to Porto in May?", node_id="u1")
    workspace = Workspace(home / "memory", fsync=False)
    try:
        return write_session(
            store, workspace, "s", boundary=True, distiller=distiller, attempts=1, retry_delay=0.0
        )
    finally:
        workspace.close()


def finished(call: Callable[[], Any], seconds: float = 60.0) -> Any:
    """`call()` run in a thread and waited for: a hang fails the test instead of hanging it."""
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert out, f"still running after {seconds} s"
    return out[0]


# -- 1. parsing the answer is linear --------------------------------------------------------------------

# At 200,000 newlines a cubic parse is weeks of CPU (and holds the GIL throughout); a linear one is
# milliseconds. So the shapes are parsed in a child process that a generous timeout can kill.
N = 200_000
PATHOLOGICAL = {
    "open fence, then newlines": f"'```json' + '\\n' * {N}",
    "open fence, newlines, close": f"'```json' + '\\n' * {N} + '```'",
    "fence, spaced newlines": f"'```\\n' + ' \\n' * {N} + '```'",
    "fences only": f"'```' * {N}",
    "newlines only": f"'\\n' * {N} + 'x'",
    "deep nesting": f"'[' * {N}",
    "fenced deep nesting": f"'```json\\n' + '[' * {N} + '\\n```'",
}
_PARSE_ALL = """
import sys
from dagmem.memory.write._llm_wire import InvalidAnswer, parse_answer, parse_groups
for content in map(eval, sys.argv[1:]):
    for parse in (parse_answer, lambda c: parse_groups(c, ["b-00000000"])):
        try:
            parse(content)
        except InvalidAnswer:
            continue
        sys.exit("accepted")
print("all refused")
"""


def test_pathological_answers_are_refused_in_linear_time() -> None:
    run = subprocess.run(
        [sys.executable, "-c", _PARSE_ALL, *PATHOLOGICAL.values()],
        capture_output=True,
        text=True,
        timeout=120,  # a linear parse of all of them takes well under a second
        check=False,
    )
    assert (run.returncode, run.stdout.strip()) == (0, "all refused"), run.stderr


def test_a_fenced_answer_is_still_read() -> None:
    body = json.dumps({"topics": [], "core": []})
    for content in (f"```json\n{body}\n```", f"  ```\n{body}\n  ```  \n", body):
        assert parse_answer(content).topics == []


def test_a_model_stuck_on_newlines_fails_the_write_as_a_bad_response(tmp_path: Path) -> None:
    FileSessionStore(tmp_path).append("s", "user", "Plan a trip to Porto in May?", node_id="u1")
    with ModelServer(lambda request: "```json" + "\n" * N) as model:
        run = dagmem_write(tmp_path, {"DAGMEM_LLM_BASE_URL": model.url, "DAGMEM_LLM_TIMEOUT": "30"})
    assert run.returncode == 1, run.stdout + run.stderr
    assert json.loads(run.stdout)["sessions"][0]["reason_code"] == "MODEL_BAD_RESPONSE", run.stdout
    assert len(model.requests) == 2  # the answer and its repair round


def dagmem_write(home: Path, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DAGMEM_LLM_")}
    base = {"DAGMEM_LLM_BASE_URL": "http://127.0.0.1:8080/v1", "DAGMEM_LLM_MODEL": "m"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "dagmem",
            "write",
            "--force",
            "--distiller",
            "openai",
            "--json",
            *flags,
            "--home",
            str(home),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**clean, **base, **env},
    )


# -- 2. one deadline over the whole request --------------------------------------------------------------


def test_a_server_dribbling_headers_times_out_within_the_deadline(tmp_path: Path) -> None:
    with DribblingServer() as server:
        settings = load_llm_settings(None, base_url=server.url, model="m", timeout=1.0, connect_timeout=1.0)
        result = finished(lambda: write_one(tmp_path, LLMDistiller(settings)))
    assert (result.outcome, result.reason_code, result.retryable) == (
        "failed",
        ReasonCode.MODEL_TIMEOUT,
        True,
    )
    assert server.connections == 1  # no retry of its own inside the call


def test_the_environments_proxy_is_still_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The deadline's transport is dagmem's own: it must route through HTTP(S)_PROXY as httpx's would.
    for name in ("no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    with ModelServer(lambda request: json.dumps({"topics": [], "core": []})) as proxy:
        monkeypatch.setenv("http_proxy", proxy.url.removesuffix("/v1"))
        monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/v1"))
        settings = load_llm_settings(None, base_url="http://model.invalid:9/v1", model="m", timeout=30)
        result = finished(lambda: write_one(tmp_path, LLMDistiller(settings)))
    assert result.outcome == "written", result
    assert len(proxy.requests) == 1


# -- 7. an echoed key is never memory --------------------------------------------------------------------


def echo_key(request: dict[str, Any]) -> str:
    escaped = "".join(f"\\u{ord(ch):04x}" for ch in SECRET_KEY)  # the key as JSON escapes spell it
    claim = f"The user said the key is {SECRET_KEY} (Bearer {SECRET_KEY})"
    answer = {
        "topics": [
            {
                "path": "topics/trip.md",
                "title": f"Trip {SECRET_KEY}",
                "blocks": [{"claim": claim, "refs": ["r1"], "replaces": None}],
            }
        ],
        "core": [{"claim": "The user is called Ana; KEY", "refs": ["r1"], "replaces": None}],
    }
    return json.dumps(answer).replace("KEY", escaped)


def test_an_api_key_the_server_echoes_is_scrubbed_before_it_becomes_memory(tmp_path: Path) -> None:
    with ModelServer(echo_key) as model:
        settings = load_llm_settings(None, base_url=model.url, model="m", api_key=SECRET_KEY, timeout=30)
        result = write_one(tmp_path, LLMDistiller(settings))
        assert result.outcome == "written", result
        # A later call (another batch) sends the topics back to the model: no key in its prompt.
        FileSessionStore(tmp_path).append(
            "s", "user", "And Lisbon after Porto, Ana?", node_id="u2", predecessor="u1"
        )
        assert write_one(tmp_path, LLMDistiller(settings)).outcome == "written"
    assert len(model.requests) == 2
    assert SECRET_KEY not in json.dumps(model.requests[1])
    topic = (tmp_path / "memory" / "topics" / "trip.md").read_text()
    assert "redacted" in topic
    for path in (tmp_path / "memory").rglob("*"):
        if path.is_file():
            assert SECRET_KEY.encode() not in path.read_bytes(), path


# -- 8. settings that can never work are refused when loaded ---------------------------------------------

NEVER = {
    "infinite timeout": {"timeout": "inf"},
    "NaN timeout": {"timeout": "nan"},
    "infinite connect timeout": {"connect_timeout": "inf"},
    "port 99999": {"base_url": "http://127.0.0.1:99999/v1"},
    "no host": {"base_url": "http:///v1"},
    "a space in the URL": {"base_url": "http://local host/v1"},
    "non-ASCII key": {"api_key": "sk-ключ-123456"},
    "a newline in the key": {"api_key": "sk-abc\r\nX-Injected: 1"},
}


@pytest.mark.parametrize("values", list(NEVER.values()), ids=list(NEVER))
def test_settings_that_can_never_work_are_refused_when_loaded(values: dict[str, str]) -> None:
    base = {"base_url": "http://127.0.0.1:8080/v1", "model": "m"}
    with pytest.raises(LLMConfigError, match="invalid LLM distiller setting") as caught:
        load_llm_settings(None, **{**base, **values})
    message = str(caught.value)
    assert "\n" not in message
    assert "ключ" not in message  # never the key
    assert "Injected" not in message


@pytest.mark.parametrize(
    "env",
    [
        {"DAGMEM_LLM_TIMEOUT": "inf"},
        {"DAGMEM_LLM_BASE_URL": "http://127.0.0.1:99999/v1"},
        {"DAGMEM_LLM_BASE_URL": "http:///v1"},
        {"DAGMEM_LLM_API_KEY": "sk-ключ-123456"},
    ],
    ids=["inf", "port", "no-host", "non-ascii-key"],
)
def test_dagmem_write_refuses_such_settings_with_exit_2(env: dict[str, str], tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    store.append("s", "user", "Plan a trip to Porto in May?", node_id="u1")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DAGMEM_LLM_")}
    base = {"DAGMEM_LLM_BASE_URL": "http://127.0.0.1:8080/v1", "DAGMEM_LLM_MODEL": "m"}
    for flags in ([], ["--json"]):
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "dagmem",
                "write",
                "--force",
                "--distiller",
                "openai",
                *flags,
                "--home",
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={**clean, **base, **env},
        )
        assert run.returncode == 2, run.stdout + run.stderr
        if flags:
            assert set(json.loads(run.stdout)) == {"error", "code"}
        else:
            lines = run.stderr.strip().splitlines()
            assert len(lines) == 1, run.stderr
            assert "invalid LLM distiller setting" in lines[0]
        assert "ключ" not in run.stdout + run.stderr
    assert not (tmp_path / "memory" / "topics").exists()
