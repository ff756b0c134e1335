"""A hook process imports only what its event needs (checked in a fresh interpreter, not timed; the
times are `dagmem bench hooks`'s): no command-line modules for any event; for the events that only queue
a transcript, a short list and nothing else; for a session's start, no pydantic, numpy, embedding model
or session store; the search's libraries only for a prompt, and neither pydantic nor the session store
while the shape cache is current."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dagmem.hooks import wait_for_worker
from dagmem.tests._bench_shape import quick_report
from dagmem.tests.hooks._claude import WORKER_BOUND, Transcript


def _modules(event: str, project: Path, payload: dict[str, object]) -> tuple[str, set[str]]:
    """A hook run as the host runs it, in a fresh interpreter: its stdout, and every module it had loaded
    by the end (`sys.modules`: `-X importtime` does not see what `importlib.import_module` loads)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DAGMEM_HOME", "DAGMEM_MEMORY")}
    env["CLAUDE_PROJECT_DIR"] = str(project)
    code = (
        "import sys\nfrom dagmem.__main__ import main\n"
        f"status = main(['hook', 'claude-code', {event!r}])\n"
        "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)))\nsys.exit(status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(payload), capture_output=True, text=True, timeout=120, check=False, env=env, cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (project / ".dagmem" / "hooks" / "hooks.log").exists()  # the event was served
    return done.stdout, set(done.stderr.rpartition("\nMODULES ")[2].split())


def _bare() -> set[str]:
    code = "import sys\nsys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return set(done.stderr.rpartition("\nMODULES ")[2].split())


# What a hook that only queues a job may load: its own few modules and the vocabulary under them; of
# the standard library only json, fcntl and blake2 beyond a bare interpreter (no argparse, subprocess,
# hashlib, dataclasses or typing: each costs a fresh process milliseconds, on every turn).
QUEUE_ONLY = {
    "dagmem", "dagmem.__main__", "dagmem._lazy", "dagmem._version", "dagmem.hooks", "dagmem.hooks._cli",
    "dagmem.hooks._home", "dagmem.hooks._log", "dagmem.hooks._payload", "dagmem.hooks._claude_code",
    "dagmem.hooks._events", "dagmem.hooks._queue", "dagmem.memory", "dagmem.memory.errors",
    "dagmem.memory.switch",
}  # fmt: skip
QUEUE_STDLIB = {"json", "json.decoder", "json.encoder", "json.scanner", "_json", "fcntl", "_blake2"}
NOT_ON_A_HOOK = {"numpy", "wordllama", "tiktoken", "pydantic", "anyio", "rich", "httpx", "dagmem.cli"}


def _tops(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names} | {n for n in names if n.startswith("dagmem.cli")}


def test_each_hook_imports_only_what_its_event_needs(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "t" / "s.jsonl")
    t.assistant(t.user(None, "I work on the build team. The build runs on the arm64 runners."), "Noted.")
    bare = _bare()
    for event in ("Stop", "SubagentStop", "PreCompact", "SessionEnd"):  # SessionEnd: a boundary write
        out, stop = _modules(event, tmp_path, t.payload(event))
        assert out == ""
        assert {n for n in stop if n.startswith("dagmem")} <= QUEUE_ONLY, event
        assert stop - bare - QUEUE_ONLY <= QUEUE_STDLIB, event
        assert wait_for_worker(tmp_path / ".dagmem", WORKER_BOUND)
    # The worker wrote the core: the session's start renders it without pydantic, the search or tiktoken.
    out, start = _modules("SessionStart", tmp_path, t.payload("SessionStart", source="startup"))
    assert "I work on the build team" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    # The topic index is there too: its topics whose every block lies on a branch the conversation left
    # are hidden, which reads the shapes of the sessions they cite (the shape cache; the session files
    # behind it). Never the search, the model, the tokenizer's counts or the runtime.
    assert (tmp_path / ".dagmem" / "memory" / "topics" / "index.md").exists()
    assert not _tops(start) & (NOT_ON_A_HOOK | {"Stemmer"})
    assert not start & {"dagmem.memory.recall._hit", "dagmem.memory.recall._search", "dagmem.memory.adopt"}
    # The shapes come from the cache: no session store, no workspace, no write side beyond the index's.
    assert not start & {"dagmem.memory.store._file", "dagmem.memory.format._node", "dagmem.memory.workspace"}
    # The index's currency and the brief's (`_current`), and which subject each brief entry is about
    # (`_brief_keys`): never the brief's rules or the distiller.
    assert {n for n in start if n.startswith("dagmem.memory.write.")} <= {
        "dagmem.memory.write._current",
        "dagmem.memory.write._brief_keys",
    }
    out, prompt = _modules(
        "UserPromptSubmit", tmp_path, t.payload("UserPromptSubmit", prompt="Which runners?")
    )
    assert "arm64" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    # The search and its arrays, nothing else of the heavy kind: the hits rendered from plain records
    # (no pydantic), the reader's session from the shape cache (no session store, so no node models).
    assert not _tops(prompt) & (NOT_ON_A_HOOK - {"numpy"})
    assert not {n for n in prompt if n.startswith(("dagmem.memory.write", "dagmem.memory.writing"))}
    assert not prompt & PROMPT_NEVER
    assert "numpy" in _tops(prompt)  # the search, loaded where it is used


# What a prompt's search never needs while the shape cache is current: the `Hit` models, the session
# store and its node models, the listing, the topic index's models, the scope's models, numpy's masked
# arrays (which `np.unique` loads), the tokenizer library (a BPE table stands in for it).
PROMPT_NEVER = {
    "dagmem.memory.recall._hit", "dagmem.memory.store._file", "dagmem.memory.format._node",
    "dagmem.memory.format._session", "dagmem.memory.listing", "dagmem.memory.format._topic_index",
    "dagmem.memory.trust._scope", "numpy.ma", "tokenizers",
}  # fmt: skip


@pytest.mark.timeout(900)
def test_bench_hooks_reports_each_hook_beside_python_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    printed = quick_report("hooks", tmp_path, capsys)  # its one run; the report's shape checked
    by_name = {r["name"]: r for r in printed["results"]}
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):
        for q in ("p50", "p95"):
            figure = by_name[f"fresh `dagmem hook claude-code {event}` {q} (baseline: python -c pass)"]
            assert figure["value"] > 0
            assert figure["baseline"] == pytest.approx(printed["raw"]["hooks"][f"pass_{q}_ms"], abs=0.1)
    assert printed["raw"]["hooks"]["log_lines"] == 0  # every hook served its event


def test_the_worker_is_spawned_in_its_own_session_with_only_dev_null_open(tmp_path: Path) -> None:
    # posix_spawn instead of subprocess: still stdio on /dev/null (a host waits for its hook's stdout to
    # close), a session of its own, and no descriptor of the hook's left open in the child.
    from dagmem.hooks._queue import spawn_detached

    out = tmp_path / "seen.json"
    probe = (
        "import json, os, sys\n"
        "fds = sorted(int(n) for n in os.listdir('/proc/self/fd'))\n"
        "links = {fd: os.readlink(f'/proc/self/fd/{fd}') for fd in (0, 1, 2)}\n"
        "json.dump({'fds': fds, 'links': links, 'leader': os.getsid(0) == os.getpid()}, open(sys.argv[1], 'w'))\n"
    )
    read, write = os.pipe()
    os.set_inheritable(write, True)  # as a host's descriptor could be: the child must still not hold it
    try:
        pid = spawn_detached([sys.executable, "-c", probe, str(out)])
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(read)
        os.close(write)
    assert os.waitstatus_to_exitcode(status) == 0
    seen = json.loads(out.read_text())
    assert seen["links"] == {"0": os.devnull, "1": os.devnull, "2": os.devnull}
    assert seen["leader"] is True
    assert write not in seen["fds"]
    assert len(seen["fds"]) <= 4  # 0, 1, 2 and the listing's own descriptor
