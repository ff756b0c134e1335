"""A fresh process pays only for what it uses: `import dagmem` and `dagmem --version` load none of the heavy
libraries (numpy, WordLlama, tiktoken, httpx, mcp, ray), nor pydantic or typing. Checked in a new
interpreter, not timed (the hooks' own imports: `tests/hooks/test_hooks_cold.py`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import dagmem
from dagmem.tests._bench_shape import quick_report
from dagmem.tests.package.test_faces import offered

HEAVY = ("numpy", "wordllama", "tiktoken", "httpx", "mcp", "ray")


def _imported(*args: str) -> tuple[str, set[str]]:
    """Run a fresh interpreter on `-c CODE` or `-m dagmem ARGS...`; its stdout, and every module it had
    loaded by the end (`sys.modules`: `-X importtime` does not see what `importlib.import_module` loads)."""
    if args[0] == "-c":
        run = args[1]
    else:
        assert args[:2] == ("-m", "dagmem"), args
        run = f"from dagmem.__main__ import main\ntry:\n    main({list(args[2:])!r})\nexcept SystemExit:\n    pass"
    code = f"import sys\n{run}\nsys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, set(done.stderr.rpartition("\nMODULES ")[2].split())


def test_import_dagmem_loads_no_heavy_library() -> None:
    code = f"import dagmem, sys; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out, names = _imported("-c", code)
    assert out.strip() == "[]"
    assert not {name.split(".")[0] for name in names} & set(HEAVY)


def test_the_public_names_still_resolve_lazily() -> None:
    # Each name is the object of the module that defines it, and dir() lists every one.
    from dagmem.actors import Runtime
    from dagmem.memory.recall import Hit

    assert dagmem.Runtime is Runtime
    assert dagmem.Hit is Hit
    assert set(offered(dagmem)) <= set(dir(dagmem))
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = dagmem.no_such_name  # type: ignore[attr-defined]  # the type checker knows it is not there


def test_version_answers_without_loading_a_heavy_library() -> None:
    out, names = _imported("-m", "dagmem", "--version")
    assert out.strip() == f"dagmem {dagmem.__version__}"
    assert not {name.split(".")[0] for name in names} & set(HEAVY)
    assert "dagmem.cli" not in names  # answered before the command modules load
    assert not names & {"anyio", "pydantic", "argparse", "typing"}
    assert {n for n in names if n.startswith("dagmem")} == {
        "dagmem",
        "dagmem._lazy",
        "dagmem._version",
        "dagmem.__main__",
    }


def test_import_dagmem_loads_only_its_face() -> None:
    _, names = _imported("-c", "import dagmem")
    assert {n for n in names if n.startswith("dagmem")} == {"dagmem", "dagmem._lazy", "dagmem._version"}
    assert not names & {"typing", "pydantic", "anyio", "rich", "dataclasses"}


def test_help_and_the_write_core_load_no_heavy_library() -> None:
    # The write core reaches the read side (numpy, the embedding model) and tiktoken only when it runs.
    out, names = _imported("-m", "dagmem", "--help")
    assert out.startswith("usage: dagmem")
    assert not {name.split(".")[0] for name in names} & {*HEAVY, "pydantic", "anyio", "rich"}
    assert not {n for n in names if n.startswith(("dagmem.bench", "dagmem.memory.write._"))} - {
        "dagmem.memory.write._named"  # the distillers' names, for the choices of a command's parser
    }
    _, names = _imported("-c", "import dagmem.memory.write, dagmem.memory.format")
    assert not {name.split(".")[0] for name in names} & set(HEAVY)


def test_bench_cold_reports_version_and_import_beside_python_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    printed = quick_report("cold", tmp_path, capsys)  # its one run; the report's shape checked
    by_name = {r["name"]: r for r in printed["results"]}
    version = by_name["fresh `dagmem --version` p50 (baseline: python -c pass)"]
    assert version["goal"] == "value <= 150"
    assert version["met"] in (True, False)  # measured, whatever this machine's speed
    # the report rounds its figures for people; the raw value keeps two decimals
    assert version["baseline"] == pytest.approx(printed["raw"]["cold"]["pass_p50_ms"], abs=0.1)
    assert "fresh `import dagmem` p95 (baseline: python -c pass)" in by_name
