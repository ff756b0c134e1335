"""Without an optional extra (`ray`, `mcp`) what does not need it still works: `dagmem bench cluster` names
the extra it needs (exit 2; a run of every benchmark leaves it out), the public-API checks pass, and
`dagmem mcp` says how to install the SDK. The extras are hidden from a child interpreter (`sys.modules[name] = None` makes `import name`
fail as if it were not installed), so this runs whether or not they are installed here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HIDE = "import sys; sys.modules['ray'] = None; sys.modules['mcp'] = None\n"


def run(code: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [sys.executable, "-c", HIDE + code, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
        timeout=300,
    )


def test_bench_names_the_ray_extra_for_the_cluster_benchmark_without_ray(tmp_path: Path) -> None:
    done = run(
        "import sys; from dagmem.cli._main import main; sys.exit(main(sys.argv[1:]))",
        "bench",
        "cluster",
        "--quick",
        "--json",
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 2, done.stderr + done.stdout
    refused = json.loads(done.stdout)
    assert refused["code"] == "EXTRA_MISSING"
    assert "pip install 'dagmem[ray]'" in refused["error"]
    assert not (tmp_path / "out").exists()


def test_the_public_api_checks_pass_without_mcp_and_ray() -> None:
    here = Path(__file__).parent / "test_public_api.py"
    # --rootdir as ./dev.sh gives it: a checkout whose folder name is no identifier ("wt-suite") is not
    # imported as a test package.
    rootdir = f"--rootdir={Path(__file__).parent.parent}"
    done = run(
        "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))",
        str(here),
        rootdir,
        "-q",
        "-p",
        "no:cacheprovider",
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_dagmem_mcp_says_how_to_install_the_sdk(tmp_path: Path) -> None:
    done = run(
        "import sys; from dagmem.cli._main import main; sys.exit(main(sys.argv[1:]))",
        "mcp",
        "--home",
        str(tmp_path / "home"),
        "--json",
    )
    assert done.returncode == 2, done.stderr
    assert "pip install 'dagmem[mcp]'" in json.loads(done.stdout)["error"]
