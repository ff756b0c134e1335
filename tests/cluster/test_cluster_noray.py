"""Without Ray (issue 16 acceptance): `import dagmem` and every other command work, and `dagmem.cluster`
says how to install the extra. Ray is hidden from a child interpreter (`sys.modules["ray"] = None` makes
`import ray` fail as if it were not installed), so this runs whether or not Ray is installed here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HIDE_RAY = "import sys; sys.modules['ray'] = None\n"


def run(code: str, *, hide_ray: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [sys.executable, "-c", (HIDE_RAY if hide_ray else "") + code],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def test_import_dagmem_never_imports_ray() -> None:
    done = run(
        "import sys, dagmem, dagmem.cli._main, dagmem.cluster\nprint('ray' in sys.modules)", hide_ray=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_without_ray_the_cluster_says_how_to_install_it(tmp_path: Path) -> None:
    done = run(
        "import anyio, dagmem\n"
        "from dagmem import cluster\n"
        "try:\n"
        f"    anyio.run(cluster.connect, {str(tmp_path)!r})\n"
        "except dagmem.DagmemError as exc:\n"
        "    print(type(exc).__name__, exc.code, exc, sep='|')\n"
    )
    assert done.returncode == 0, done.stderr
    name, code, message = done.stdout.strip().split("|")
    assert (name, code) == ("RayMissing", "RAY_MISSING")
    assert "pip install 'dagmem[ray]'" in message


def test_without_ray_every_other_command_works_and_cluster_status_says_what_to_install(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    main = "from dagmem.cli._main import main\n"
    demo = run(main + f"sys.exit(main(['demo', '--home', {str(home)!r}, '--json']))")
    assert demo.returncode == 0, demo.stderr
    verify = run(main + f"sys.exit(main(['verify', '--home', {str(home)!r}]))")
    assert verify.returncode == 0, verify.stderr
    status = run(main + "sys.exit(main(['cluster', 'status', '--json']))")
    assert status.returncode == 2
    error = json.loads(status.stdout)
    assert error["code"] == "RAY_MISSING"
    assert "pip install 'dagmem[ray]'" in error["error"]
