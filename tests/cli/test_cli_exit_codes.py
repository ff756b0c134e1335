"""The command line owns its error and its exit statuses: `CommandError` lives in `cli/_errors.py` (no
command imports `_main`, which imports the commands), and 0/1/2/75/130 are defined there, not in memory/."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

import dagmem.memory.write
from dagmem.cli import _errors, _main
from dagmem.cli._write import exit_status
from dagmem.memory.write import SessionResult

CLI = Path(_main.__file__).parent


def test_no_command_imports_main() -> None:
    for path in sorted([*CLI.glob("_*.py"), *CLI.glob("commands/*.py")]):
        if path.name in ("_main.py", "__init__.py"):  # the package exports main
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1 + (path.parent != CLI):
                assert node.module != "_main", path.name


def test_the_exit_statuses_are_the_clis() -> None:
    codes = (_errors.EXIT_OK, _errors.EXIT_FAILED, _errors.EXIT_USAGE, _errors.EXIT_RETRY)
    assert codes == (0, 1, 2, 75)
    assert _errors.EXIT_INTERRUPTED == 130
    assert _main.CommandError is _errors.CommandError  # still importable where it was
    assert not [
        name for name in dir(dagmem.memory.write) if name.startswith("EXIT_") or name == "exit_status"
    ]


def _result(outcome: str, retryable: bool = False) -> SessionResult:
    return SessionResult(session="s", outcome=outcome, retryable=retryable)  # type: ignore[arg-type]


def test_exit_status_of_a_write_pass() -> None:
    assert exit_status([]) == _errors.EXIT_OK
    assert exit_status([_result("failed", retryable=True)]) == _errors.EXIT_RETRY
    assert exit_status([_result("failed", retryable=True), _result("invalid")]) == _errors.EXIT_FAILED


def test_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(_main, "_run", interrupted)
    assert _main.main(["status", "--home", str(tmp_path)]) == _errors.EXIT_INTERRUPTED
