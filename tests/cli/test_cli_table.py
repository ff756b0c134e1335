"""The command line is one table of command records: the parser, `--help`'s list and the dispatch all come
from it, each command module exports exactly one record, and building the parser imports no command's
implementation (each record's `run` imports it)."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dagmem.cli import _main, commands
from dagmem.cli._command import Command, Home
from dagmem.cli.commands import COMMANDS, by_name

TABLE = Path(commands.__file__).parent
IMPLEMENTATIONS = sorted(
    f"dagmem.cli.{p.stem}" for p in TABLE.parent.glob("_*.py") if p.stem not in ("__init__", "_main")
)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_the_parser_lists_the_table_in_its_order() -> None:
    names = [command.name for command in COMMANDS]
    assert len(set(names)) == len(names) == 20
    assert list(_subcommands(_main._parser())) == names
    sub = next(a for a in _main._parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert {a.dest: a.help for a in sub._choices_actions} == {c.name: c.help for c in COMMANDS}


def test_each_command_module_exports_one_frozen_record() -> None:
    modules = sorted(p.stem for p in TABLE.glob("*.py") if p.stem != "__init__")
    records = [importlib.import_module(f"dagmem.cli.commands.{name}").COMMAND for name in modules]
    assert sorted(records, key=lambda c: c.name) == sorted(COMMANDS, key=lambda c: c.name)
    assert [c.name for c in COMMANDS] == list(commands.NAMES)
    assert all(by_name(c.name) is c for c in COMMANDS)
    for name in modules:
        module = importlib.import_module(f"dagmem.cli.commands.{name}")
        assert [v for v in vars(module).values() if isinstance(v, Command)] == [module.COMMAND], name
    with pytest.raises(dataclasses.FrozenInstanceError):
        COMMANDS[0].name = "other"  # type: ignore[misc]


def test_dispatch_is_the_records_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    ran: list[str] = []

    def recorder(name: str) -> Callable[[argparse.Namespace], int]:
        def run(args: argparse.Namespace) -> int:
            ran.append(name)
            return 0

        return run

    for command in COMMANDS:
        module = importlib.import_module(f"dagmem.cli.commands.{commands._MODULE_OF[command.name]}")
        monkeypatch.setattr(module, "COMMAND", dataclasses.replace(command, run=recorder(command.name)))
    assert _main.main(["status", "--home", str(tmp_path)]) == 0
    assert _main.main(["core", "--home", str(tmp_path)]) == 0
    assert ran == ["status", "core"]


def test_main_has_no_chain_of_command_names() -> None:
    # The dispatch and the home check read the record: _main.py compares with no command's name and
    # lists none.
    names = {command.name for command in COMMANDS}
    tree = ast.parse(Path(_main.__file__).read_text())
    written = {
        c.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare | ast.Set | ast.Tuple | ast.List)
        for c in ast.walk(node)
        if isinstance(c, ast.Constant) and c.value in names
    }
    assert not written


def test_read_only_commands_are_the_ones_that_check_the_home() -> None:
    reads = {c.name for c in COMMANDS if c.home is not Home.ANY}
    assert reads == {
        "status",
        "verify",
        "view",
        "write",
        "reorganise",
        "recall",
        "core",
        "held",
        "sessions",
        "show",
        "forget",
    }
    assert by_name("write").home is Home.SESSIONS


def test_help_imports_the_records_but_no_implementation() -> None:
    code = (
        "import sys\nfrom dagmem.__main__ import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
        "    pass\nprint(' '.join(sorted(m for m in sys.modules if m.startswith('dagmem.cli'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage: dagmem")
    loaded = set(done.stdout.splitlines()[-1].split())
    assert {f"dagmem.cli.commands.{p.stem}" for p in TABLE.glob("*.py") if p.stem != "__init__"} <= loaded
    helpers = {"dagmem.cli._errors", "dagmem.cli._command", "dagmem.cli._arguments"}
    assert not (set(IMPLEMENTATIONS) - helpers) & loaded


# The positional arguments a command needs before it reaches the home check.
_POSITIONALS = {"recall": ["anything"], "show": ["chat"], "forget": ["--match", "anything"]}


@pytest.mark.parametrize("command", [c for c in COMMANDS if c.home is not Home.ANY], ids=lambda c: c.name)
def test_a_command_that_reads_a_home_refuses_a_missing_one_and_creates_nothing(
    command: Command, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    argv = [command.name, *_POSITIONALS.get(command.name, []), "--home", str(missing)]
    assert _main.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert ("no sessions/ directory" if command.home is Home.SESSIONS else "no such directory") in err
    assert not missing.exists()


def test_one_commands_defaults_do_not_change_anothers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # install's `set_defaults(home=None)` once reached every command through their shared parent: a
    # bare `dagmem status` then crashed on `None.is_symlink()`.
    monkeypatch.delenv("DAGMEM_HOME", raising=False)
    # Outside any git worktree: in a linked one (a checkout made with `git worktree add`) the default is
    # the main worktree's home (tests/cli/test_cli_recall_git.py).
    monkeypatch.chdir(tmp_path)
    for argv in (["status"], ["sessions"], ["write"]):
        assert _main.parse_args(argv, every_command=True).home == Path(".dagmem")
        assert _main.parse_args(argv).home == Path(".dagmem")
    assert _main.parse_args(["install", "claude-code"], every_command=True).home is None
    assert _main.parse_args(["--home", "h", "install", "claude-code"]).home == Path("h")


def test_a_command_line_builds_only_its_own_commands_arguments() -> None:
    # `--help` lists every command from the records alone; a command's own parser is built only when
    # it is the one named, so no command loads another's choices (the benchmarks' names, the distillers'),
    # and a named command's process builds no other command's parser.
    code = (
        "import sys\nfrom dagmem.cli import _main\n"
        "_main._parser(['sessions', '--home', 'h'])\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('dagmem'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(done.stdout.split())
    assert "dagmem.cli.commands.sessions" in loaded
    # Nor another command's record: a fresh process running one command imports its module alone.
    assert {m for m in loaded if m.startswith("dagmem.cli.commands.")} == {"dagmem.cli.commands.sessions"}
    assert not {"dagmem.bench", "dagmem.bench._report", "dagmem.memory.write._distill"} & loaded
    write = _main._parser(["write"])._actions[-1]
    assert isinstance(write, argparse._SubParsersAction)
    assert "--distiller" in write.choices["write"].format_help()
    assert set(write.choices) == {"write"}  # a known name: no other command's parser is built at all
    everything = _main._parser(["no-such-command"])._actions[-1]  # any other word: all, to refuse it
    assert isinstance(everything, argparse._SubParsersAction)
    assert {c.name for c in COMMANDS} == set(everything.choices)
    assert "--distiller" not in everything.choices["reorganise"].format_help()
