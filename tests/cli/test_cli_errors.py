"""What a user's mistake looks like on the command line: one line naming the problem (a JSON object with
`--json`), exit 2 (or the documented code), no traceback, and nothing created or changed."""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import dagmem
from dagmem import FileSessionStore
from dagmem.tests._cli import dagmem_run


def dagmem_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return dagmem_run(*args)


def one_line_error(done: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def json_error(done: subprocess.CompletedProcess[str], code: int = 2) -> dict[str, str]:
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    out = json.loads(done.stdout)
    assert set(out) == {"error", "code"}
    return dict(out)


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    store = FileSessionStore(home)
    for i in range(4):
        store.append("s", "user" if i % 2 == 0 else "assistant", f"turn {i}: the trip to Lisbon")
    assert dagmem_cli("write", "--force", "--home", str(home)).returncode == 0
    store.append("s", "user", "one more turn, owed")
    return home


def test_version() -> None:
    done = dagmem_cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"dagmem {dagmem.__version__}"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["sim", "--homes", "0"], "dagmem sim: argument --homes: must be at least 1, not 0"),
        (["sim", "--workers", "x"], "dagmem sim: argument --workers: not a whole number: 'x'"),
        (["nosuch"], "dagmem: argument COMMAND: invalid choice: 'nosuch'"),
        (["import"], "dagmem import: the following arguments are required: format, PATH"),
    ],
)
def test_an_argument_mistake_is_one_line_or_one_json_object_and_writes_nothing(
    tmp_path: Path, args: list[str], says: str
) -> None:
    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return dagmem_run(*args, *extra, cwd=tmp_path)  # in tmp_path: the defaults (./.dagmem, ./sim-out)

    line = one_line_error(run())
    assert line.startswith(f"error: {says}")
    assert line.endswith("--help)")
    out = json_error(run("--json"))
    assert out["code"] == "INVALID_INPUT"
    assert out["error"].startswith(says)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["write", "status", "verify"])
def test_a_home_that_is_a_file_is_one_line(tmp_path: Path, command: str) -> None:
    path = tmp_path / "not-a-dir"
    path.write_text("hello")
    assert "not a directory" in one_line_error(dagmem_cli(command, "--home", str(path)))
    assert "not a directory" in json_error(dagmem_cli(command, "--json", "--home", str(path)))["error"]
    assert path.read_text() == "hello"


@pytest.mark.parametrize("command", ["write", "status", "verify", "verify --strict"])
def test_a_mistyped_home_creates_nothing_and_never_says_ok(tmp_path: Path, command: str) -> None:
    typo = tmp_path / "typo"
    done = dagmem_cli(*command.split(), "--home", str(typo))
    one_line_error(done)
    assert "ok" not in done.stdout.split()
    assert not typo.exists()


def test_write_on_a_directory_without_sessions_says_so_and_creates_nothing(tmp_path: Path) -> None:
    line = one_line_error(dagmem_cli("write", "--home", str(tmp_path)))
    assert "sessions/" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("content", [b"garbage\n", b"", b"w-0123\n"], ids=["garbage", "empty", "short"])
@pytest.mark.parametrize("command", ["write", "status", "verify"])
def test_a_damaged_workspace_id_is_one_line_naming_the_file(home: Path, content: bytes, command: str) -> None:
    path = home / "memory" / ".dagmem" / "workspace-id"
    path.write_bytes(content)
    before = tree_digest(home)
    assert "workspace-id" in one_line_error(dagmem_cli(command, "--home", str(home)))
    assert json_error(dagmem_cli(command, "--json", "--home", str(home)))["code"] == "WORKSPACE_INVALID"
    assert tree_digest(home) == before


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """A read-only bind mount over `path` (root ignores file modes, so chmod would prove nothing)."""
    done = subprocess.run(
        ["mount", "--bind", "-o", "ro", str(path), str(path)], check=False, capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"needs root to bind-mount read-only: {done.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", str(path)], check=False)


def test_a_read_only_workspace_state_is_one_line_and_changes_nothing(home: Path) -> None:
    state = home / "memory" / ".dagmem"
    with read_only(state):
        before = tree_digest(home)
        # A process of its own: one that ended holds no file open on the mount, which must come off.
        done = subprocess.run(
            [sys.executable, "-m", "dagmem", "write", "--force", "--home", str(home)],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode in (1, 2), done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        assert "read-only" in done.stdout + done.stderr.lower() or "Read-only" in done.stdout + done.stderr
        assert tree_digest(home) == before
    assert dagmem_cli("write", "--force", "--home", str(home)).returncode == 0  # and it recovers
