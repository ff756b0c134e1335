"""`dagmem install` against what a hostile tester and a busy host do to a configuration file: a key given
twice, a Codex config whose strings and arrays look like statements, a host writing the file while the
install merges it, an entry the user edited, a hard-linked file, a file nested thousands deep, a symbolic
link loop. Each either merges exactly (everything else kept) or is refused in one line, exit 2, the file
unchanged; never a traceback."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from dagmem.hooks import _install as install
from dagmem.tests._cli import dagmem_run

EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SubagentStop", "PreCompact", "SessionEnd")


def _install(*args: str, home: Path) -> Any:
    return dagmem_run("install", *args, env={**os.environ, "HOME": str(home)})


def _settings(home: Path, text: str) -> Path:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _refused(result: Any, says: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert says in result.stderr, result.stderr


def _ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [
        h
        for g in settings["hooks"].get(event, [])
        for h in g["hooks"]
        if "dagmem hook claude-code" in h["command"]
    ]


# -- a settings file JSON would read wrong ------------------------------------------------------------


def test_a_key_given_twice_is_refused_naming_it_and_the_file_is_unchanged(tmp_path: Path) -> None:
    text = (
        '{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "audit"}]}]},\n'
        ' "model": "opus",\n "hooks": {}}\n'
    )
    path = _settings(tmp_path, text)
    _refused(_install("claude-code", home=tmp_path), "'hooks' appears twice")
    assert path.read_text() == text
    nested = '{"hooks": {"Stop": [], "Stop": [{"hooks": []}]}}'
    path.write_text(nested)
    _refused(_install("claude-code", home=tmp_path), "'Stop' appears twice")
    assert path.read_text() == nested


@pytest.mark.parametrize(
    "text",
    [
        '{"a": ' * 5_000 + "1" + "}" * 5_000,
        '{"hooks": ' + "[" * 5_000 + "]" * 5_000 + "}",
    ],
    ids=["objects", "arrays"],
)
def test_settings_nested_thousands_deep_are_refused_in_one_line(tmp_path: Path, text: str) -> None:
    path = _settings(tmp_path, text)
    _refused(_install("claude-code", home=tmp_path), "nested too deeply")
    assert path.read_text() == text


def test_a_codex_config_nested_thousands_deep_is_refused_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    text = "x = " + "[" * 5_000 + "]" * 5_000 + "\n"
    config.write_text(text)
    _refused(_install("codex", home=tmp_path), "nested too deeply")
    assert config.read_text() == text


def test_a_symbolic_link_loop_a_fifo_and_a_parent_that_is_a_file_are_one_line_each(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.symlink_to(path)  # a loop of one
    _refused(_install("claude-code", home=tmp_path), "settings.json")
    path.unlink()
    os.mkfifo(path)  # opened without O_NONBLOCK, the read would wait for ever
    _refused(_install("claude-code", home=tmp_path), "not a regular file")
    path.unlink()
    project = tmp_path / "project-file"
    project.write_text("not a directory")
    _refused(_install("claude-code", "--project", str(project), home=tmp_path), "nothing changed")
    assert project.read_text() == "not a directory"
    typo = tmp_path / "no-such-project"
    _refused(_install("claude-code", "--project", str(typo), home=tmp_path), "no such directory")
    assert not typo.exists()  # never made up


# -- Codex: statements by their real positions -------------------------------------------------------

CODEX_TRICKY = '''model = "o4-mini"
instructions = """
Remember:
notify = ["not", "a", "key"]
[not-a-table]
"""
'literal' = \'\'\'
notify = "still text"
\'\'\'
matrix = [
  ["a", "b"],  # a comment with notify = [
  [ "c" ],
]
when = 1979-05-27 07:32:00Z
[mcp_servers.docs]
command = "docs-mcp"
'''


def test_codex_strings_and_arrays_that_look_like_statements_are_left_alone(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_TRICKY)
    before = tomllib.loads(CODEX_TRICKY)
    installed = _install("codex", home=tmp_path)
    assert installed.returncode == 0, installed.stderr
    after = tomllib.loads(config.read_text())
    assert after["notify"][-3:] == ["hook", "codex", "notify"]
    assert {k: v for k, v in after.items() if k != "notify"} == before
    written = config.read_text()
    ours = written.index(json.dumps(sys.executable))
    assert written.index("when = ") < ours < written.index("[mcp_servers.docs]")  # just before the table
    removed = _install("codex", "--uninstall", home=tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert config.read_text() == CODEX_TRICKY  # the user's `notify = ...` text inside strings is kept


def test_codex_notify_over_several_lines_is_updated_and_taken_out_whole(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    text = (
        'model = "x"\n'
        "notify = [\n"
        '  "/old/python", "-P", "-m", "dagmem",  # an older install\n'
        '  "hook", "codex", "notify",\n'
        "]\n"
        "[profiles.fast]\n"
        'model = "y"\n'
    )
    config.write_text(text)
    updated = _install("codex", home=tmp_path)
    assert updated.returncode == 0, updated.stderr
    parsed = tomllib.loads(config.read_text())
    assert parsed["notify"] == [*install.hook_command("codex", None), "notify"]
    assert parsed["profiles"] == {"fast": {"model": "y"}}
    assert config.read_text().count("notify") == 2  # the key and its event: the old array is gone whole
    removed = _install("codex", "--uninstall", home=tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert config.read_text() == 'model = "x"\n[profiles.fast]\nmodel = "y"\n'


def test_codex_an_array_before_the_first_table_and_a_last_line_without_newline(tmp_path: Path) -> None:
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    text = 'servers = [\n  ["x", "y"],\n]\nmodel = "z"'  # no table, no final newline
    config.write_text(text)
    assert _install("codex", home=tmp_path).returncode == 0
    parsed = tomllib.loads(config.read_text())
    assert parsed["servers"] == [["x", "y"]]
    assert parsed["model"] == "z"
    assert parsed["notify"][-1] == "notify"
    assert _install("codex", "--uninstall", home=tmp_path).returncode == 0
    assert tomllib.loads(config.read_text()) == {"servers": [["x", "y"]], "model": "z"}


# -- a host writing its file meanwhile ----------------------------------------------------------------


def test_a_host_writing_the_file_while_the_install_merges_keeps_its_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _settings(tmp_path, json.dumps({"model": "opus"}))
    planned = install.plan
    writes = 0

    def plan_then_host_writes(*args: Any, **kwargs: Any) -> install.Change:
        nonlocal writes
        change = planned(*args, **kwargs)
        if writes < 2:  # the host saves its settings between our read and our write, twice
            writes += 1
            path.write_text(json.dumps({"model": "opus", "theme": f"dark-{writes}"}))
        return change

    monkeypatch.setattr(install, "plan", plan_then_host_writes)
    change = install.install("claude-code", path, home=None, uninstall=False)
    assert change.changed
    settings = json.loads(path.read_text())
    assert settings["theme"] == "dark-2"  # the host's last change, kept
    assert all(len(_ours(settings, event)) == 1 for event in EVENTS)


def test_a_host_that_never_stops_writing_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _settings(tmp_path, "{}")
    planned = install.plan
    count = 0

    def always(*args: Any, **kwargs: Any) -> install.Change:
        nonlocal count
        change = planned(*args, **kwargs)
        count += 1
        path.write_text(json.dumps({"n": count}))
        return change

    monkeypatch.setattr(install, "plan", always)
    result = _install("claude-code", home=tmp_path)
    _refused(result, "changed by another program")
    assert json.loads(path.read_text()) == {"n": install.ATTEMPTS}


# -- an entry the user edited ---------------------------------------------------------------------------


def test_reinstalling_over_an_edited_entry_updates_it_in_place_keeping_the_users_fields(
    tmp_path: Path,
) -> None:
    assert _install("claude-code", home=tmp_path).returncode == 0
    path = tmp_path / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    prompt = _ours(settings, "UserPromptSubmit")[0]
    prompt["timeout"] = 90
    prompt["command"] = shlex.join(["/old/python", "-m", "dagmem", "hook", "claude-code", "UserPromptSubmit"])
    prompt["command"] += " --budget 5000"
    stop = _ours(settings, "Stop")[0]
    stop["timeout"] = 3
    stop["statusMessage"] = "saving memory"
    path.write_text(json.dumps(settings, indent=2))

    again = _install("claude-code", home=tmp_path)

    assert again.returncode == 0, again.stderr
    after = json.loads(path.read_text())
    for event in EVENTS:
        assert len(_ours(after, event)) == 1, event  # never a second dagmem hook
    (prompt,) = _ours(after, "UserPromptSubmit")
    assert prompt["timeout"] == 90
    assert shlex.split(prompt["command"])[:3] == [sys.executable, "-P", "-m"]
    assert prompt["command"].endswith("hook claude-code UserPromptSubmit --budget 5000")
    (stop,) = _ours(after, "Stop")
    assert stop["timeout"] == 3
    assert stop["statusMessage"] == "saving memory"
    written = path.read_bytes()
    assert _install("claude-code", home=tmp_path).stdout == ""  # and then idempotent
    assert path.read_bytes() == written


# -- a hard-linked settings file ------------------------------------------------------------------------


def test_a_hard_linked_settings_file_keeps_its_link(tmp_path: Path) -> None:
    path = _settings(tmp_path, json.dumps({"model": "opus"}))
    path.chmod(0o600)
    other = tmp_path / "dotfiles-settings.json"
    os.link(path, other)
    inode = path.stat().st_ino

    assert _install("claude-code", home=tmp_path).returncode == 0

    assert path.stat().st_ino == inode
    assert path.stat().st_nlink == 2
    assert other.read_text() == path.read_text()
    assert "UserPromptSubmit" in json.loads(other.read_text())["hooks"]
    assert path.stat().st_mode & 0o777 == 0o600
    assert _install("claude-code", "--uninstall", home=tmp_path).returncode == 0
    assert json.loads(other.read_text()) == {"model": "opus"}
    assert path.stat().st_ino == inode
