"""`./dev.sh` says what it is doing while it sets up (one line on stderr before it creates the venv, and
before it installs), so a fresh clone's first minute is not silent; once set up, a run prints nothing of
its own. Run on a copy of the script with a stand-in interpreter (no real venv, no pip)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The stand-in for python3: `-m venv DIR` makes DIR/bin/python (which takes `-m pip ...` and does
# nothing) and DIR/bin/dagmem (which says it ran).
FAKE_PYTHON = """#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"
    printf '#!/bin/sh\\nexit 0\\n' > "$3/bin/python"
    printf '#!/bin/sh\\necho "dagmem $*"\\n' > "$3/bin/dagmem"
    chmod +x "$3/bin/python" "$3/bin/dagmem"
    exit 0
fi
exit 1
"""


def _run(checkout: Path, python: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(checkout / "dev.sh"), "sim", "--quick"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHON": str(python)},
        timeout=60,
        check=False,
    )


def test_dev_sh_says_what_it_sets_up_and_is_quiet_once_set_up(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy(ROOT / "dev.sh", checkout / "dev.sh")
    (checkout / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    python = tmp_path / "python3"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)

    first = _run(checkout, python)
    assert first.returncode == 0, first.stderr
    said = first.stderr.splitlines()
    assert len(said) == 2, first.stderr
    assert said[0].startswith("dev.sh: creating ./.venv")
    assert said[1].startswith("dev.sh: installing dagmem[sim] into ./.venv")
    assert first.stdout == "dagmem sim --quick\n"

    again = _run(checkout, python)
    assert again.returncode == 0, again.stderr
    assert again.stderr == ""  # set up already: nothing of its own
    assert again.stdout == "dagmem sim --quick\n"
