"""`dagmem recall --context` from a fresh process loads what the search needs and nothing else: the
hits rendered from plain records (no pydantic), the reader's session from the shape cache (no session
store, no node models, no listing), numpy without its masked arrays. Checked in a new interpreter, not
timed (the times are `dagmem bench cold`'s); the other forms give the same hits as `Hit` models."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dagmem.bench._hooks import SESSION, build

# Loaded only when a query needs them: the `Hit` models and pydantic (for `--json` and the listing),
# the session store, its node models and the listing (for `--tip`, or a session the shape cache does not
# hold as it is now), the topic and scope models, numpy's masked arrays, the write side.
NEVER_FOR_CONTEXT = {
    "pydantic", "dagmem.memory.recall._hit", "dagmem.memory.store._file", "dagmem.memory.format._node",
    "dagmem.memory.format._session", "dagmem.memory.listing", "dagmem.memory.format._topic_index",
    "dagmem.memory.trust._scope", "numpy.ma", "tokenizers", "wordllama",
}  # fmt: skip


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("recall-cold")
    build(project, 12)  # one imported Claude Code session, written: memory, its shape cache, the BPE table
    return project / ".dagmem"


def _run(*args: str) -> tuple[str, set[str]]:
    """`dagmem ARGS...` in a fresh interpreter: its stdout and every module it had loaded by the end."""
    code = (
        "import sys\nfrom dagmem.__main__ import main\n"
        f"status = main({list(args)!r})\n"
        "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)))\nsys.exit(status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, set(done.stderr.rpartition("\nMODULES ")[2].split())


def test_recall_context_loads_neither_the_models_nor_the_session_store(home: Path) -> None:
    query = "Which port does the billing service use?"
    for reader in ([], ["--session", SESSION]):
        out, names = _run("recall", "--home", str(home), "--context", *reader, query)
        assert out.startswith("<memory-context>")
        assert "billing" in out
        assert "numpy" in names  # the search's arrays
        assert not names & NEVER_FOR_CONTEXT, reader
        written = {n for n in names if n.startswith(("dagmem.memory.write.", "dagmem.memory.writing"))}
        assert written <= {"dagmem.memory.write._named"}  # the distillers' names, for the parser's choices


def test_the_json_form_gives_the_same_hits_as_models(home: Path) -> None:
    query = "Which port does the billing service use?"
    out, names = _run("recall", "--home", str(home), "--json", "--session", SESSION, query)
    hits = json.loads(out)["hits"]
    assert hits
    assert "pydantic" in names
    context, _ = _run("recall", "--home", str(home), "--context", "--session", SESSION, query)
    for hit in hits:  # every hit of the models is the one the context block renders, in that order
        assert f"({hit['topic']}#{hit['block_id']})" in context
    at = [context.index(f"#{hit['block_id']})") for hit in hits]
    assert at == sorted(at)
