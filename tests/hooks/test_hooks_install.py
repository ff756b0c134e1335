"""`dagmem install HOST`: the hook entries merged into the host's configuration, everything else kept,
idempotent, undone by `--uninstall`, printed as a diff; a file that does not parse, holds comments or is
read-only is refused with one line (exit 2) and left byte for byte as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from dagmem.tests._cli import dagmem_run

OTHER_HOOK = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo checked", "timeout": 5}]}
SETTINGS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [OTHER_HOOK],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def _install(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return dagmem_run("install", *args, env={**os.environ, "HOME": str(home)})


def test_claude_code_project_install_keeps_every_other_setting_and_hook_and_is_idempotent(
    tmp_path: Path,
) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(SETTINGS, indent=4))

    first = _install("claude-code", "--project", str(tmp_path), home=tmp_path)

    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("---")
    assert "+" in first.stdout
    after = json.loads(settings.read_text())
    assert after["model"] == "opus"
    assert after["permissions"] == SETTINGS["permissions"]
    assert after["hooks"]["PreToolUse"] == [OTHER_HOOK]
    assert after["hooks"]["Stop"][0] == SETTINGS["hooks"]["Stop"][0]  # the user's own Stop hook, first
    for event in ("SessionStart", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact", "SessionEnd"):
        ours = [
            h for g in after["hooks"][event] for h in g["hooks"] if "dagmem hook claude-code" in h["command"]
        ]
        assert len(ours) == 1
        assert ours[0]["command"].endswith(f"hook claude-code {event}")
        assert ours[0]["command"].startswith(sys.executable)
    written = settings.read_bytes()

    again = _install("claude-code", "--project", str(tmp_path), home=tmp_path)
    assert again.returncode == 0
    assert again.stdout == ""
    assert settings.read_bytes() == written

    gone = _install("claude-code", "--project", str(tmp_path), "--uninstall", home=tmp_path)
    assert gone.returncode == 0
    assert json.loads(settings.read_text()) == SETTINGS


def test_dry_run_prints_the_diff_and_writes_nothing_and_home_is_written_into_the_command(
    tmp_path: Path,
) -> None:
    result = _install("claude-code", "--user", "--home", str(tmp_path / "h"), "--dry-run", home=tmp_path)
    assert result.returncode == 0
    assert f"--home {tmp_path / 'h'}" in result.stdout
    assert not (tmp_path / ".claude").exists()
    installed = _install("claude-code", "--home", str(tmp_path / "h"), home=tmp_path)  # --user: the default
    assert installed.returncode == 0
    settings = tmp_path / ".claude" / "settings.json"
    assert "--home" in settings.read_text()
    written = settings.read_bytes()
    assert _install("claude-code", "--home", str(tmp_path / "h"), home=tmp_path).stdout == ""
    assert settings.read_bytes() == written  # recognised as ours, --home and all
    assert _install("claude-code", "--uninstall", home=tmp_path).returncode == 0
    assert json.loads(settings.read_text()) == {}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"model": "opus",', "not valid JSON"),
        ('{\n  // my settings\n  "model": "opus"\n}\n', "comments"),
        ("[1, 2]", "not a JSON object"),
        ('{"hooks": []}', "'hooks' is not an object"),
    ],
)
def test_a_settings_file_that_cannot_be_merged_is_refused_with_one_line_and_left_as_it_was(
    tmp_path: Path, text: str, says: str
) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(text)
    result = _install("claude-code", "--project", str(tmp_path), home=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert says in result.stderr
    assert settings.read_text() == text
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]  # no temp file left behind


def test_a_read_only_settings_file_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(SETTINGS))
    settings.chmod(0o444)  # refused by its mode, for root too
    result = _install("claude-code", "--project", str(tmp_path), home=tmp_path)
    assert result.returncode == 2
    assert "read-only" in result.stderr
    assert json.loads(settings.read_text()) == SETTINGS


def test_a_symlinked_settings_file_is_written_where_it_points_and_keeps_its_mode(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text("{}")
    real.chmod(0o600)
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").symlink_to(real)
    assert _install("claude-code", home=tmp_path).returncode == 0
    assert (tmp_path / ".claude" / "settings.json").is_symlink()
    assert "UserPromptSubmit" in json.loads(real.read_text())["hooks"]
    assert real.stat().st_mode & 0o777 == 0o600


def test_codex_notify_is_set_before_the_first_table_and_another_notify_is_refused(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    original = 'model = "o4-mini"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    config.write_text(original)
    assert _install("codex", home=tmp_path).returncode == 0
    parsed = tomllib.loads(config.read_text())
    assert parsed["notify"][-3:] == ["hook", "codex", "notify"]
    assert parsed["mcp_servers"]["docs"]["command"] == "docs-mcp"
    written = config.read_text()
    assert _install("codex", home=tmp_path).returncode == 0
    assert config.read_text() == written
    assert _install("codex", "--uninstall", home=tmp_path).returncode == 0
    assert config.read_text() == original
    config.write_text('notify = ["terminal-notifier"]\n')
    refused = _install("codex", home=tmp_path)
    assert refused.returncode == 2
    assert "notify is already set" in refused.stderr
    assert config.read_text() == 'notify = ["terminal-notifier"]\n'


def test_pi_extension_is_written_and_only_ours_is_removed(tmp_path: Path) -> None:
    assert _install("pi", "--project", str(tmp_path), home=tmp_path).returncode == 0
    extension = tmp_path / ".pi" / "extensions" / "dagmem.ts"
    text = extension.read_text()
    assert "before_agent_start" in text
    assert json.dumps([sys.executable, "-P", "-m", "dagmem", "hook", "pi"]) in text
    assert _install("pi", "--project", str(tmp_path), "--uninstall", home=tmp_path).returncode == 0
    assert not extension.exists()
    extension.write_text("// someone else's extension\n")
    refused = _install("pi", "--project", str(tmp_path), home=tmp_path)
    assert refused.returncode == 2
    assert "did not write" in refused.stderr
