"""The options every command takes (`--home`, `--json`, `-v`/`-vv`) are accepted before the command's
name as well as after it, with the same meaning: `dagmem --home H status` is `dagmem status --home H`.
A value given after the name wins over one given before it; `install` keeps its own default (no home:
each project's own when the hook runs)."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from dagmem import FileSessionStore
from dagmem.tests._cli import dagmem_run


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    FileSessionStore(home).append("s", "user", "The garage code is 4417.")
    return home


def _stable(report: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in report.items() if k != "disk_free_bytes"}  # the disk moves between runs


def test_home_json_and_verbose_before_the_command(tmp_path: Path) -> None:
    home = _home(tmp_path)
    after = dagmem_run("status", "--json", "--home", str(home))
    assert after.returncode == 0, after.stderr
    for argv in (
        ("--home", str(home), "--json", "status"),
        ("--json", f"--home={home}", "status"),
        ("-v", "--home", str(home), "status", "--json"),
        ("-vv", "--json", "status", "--home", str(home)),
    ):
        before = dagmem_run(*argv)
        assert before.returncode == 0, (argv, before.stderr)
        assert _stable(json.loads(before.stdout)) == _stable(json.loads(after.stdout)), argv
    text = dagmem_run("--home", str(home), "sessions")
    assert text.returncode == 0, text.stderr
    assert "s" in text.stdout
    # The value after the name wins; a missing home is still named, whichever side gave it.
    missing = dagmem_run("--home", str(tmp_path / "nowhere"), "status")
    assert missing.returncode == 2
    assert "nowhere" in missing.stderr
    assert dagmem_run("--home", str(tmp_path / "nowhere"), "status", "--home", str(home)).returncode == 0


def test_json_before_the_command_shapes_its_errors_and_home_reaches_install_and_hook(tmp_path: Path) -> None:
    refused = dagmem_run("--json", "--home", str(tmp_path / "nowhere"), "status")
    assert refused.returncode == 2
    assert "nowhere" in json.loads(refused.stdout)["error"]
    env = {**os.environ, "HOME": str(tmp_path)}
    home = tmp_path / "memory-home"
    installed = dagmem_run("--home", str(home), "install", "claude-code", "--dry-run", env=env)
    assert installed.returncode == 0, installed.stderr
    assert f"--home {shlex.quote(str(home))}" in installed.stdout
    plain = dagmem_run("install", "claude-code", "--dry-run", env=env)
    assert "--home" not in plain.stdout  # no home given: none written into the hooks
    hooked = dagmem_run("--home", str(home), "hook", "claude-code", "NoSuchEvent")
    assert hooked.returncode == 2  # the hook's own command line, reached with the home before it
    assert "unknown event" in hooked.stderr
