"""`dagmem install HOST [--user | --project DIR] [--home H] [--uninstall] [--dry-run]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._command import Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("host", choices=["claude-code", "codex", "pi"], help="the agent host")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--user", action="store_true", help="the user's configuration (the default)")
    scope.add_argument("--project", type=Path, metavar="DIR", help="the project DIR's configuration")
    parser.add_argument("--uninstall", action="store_true", help="take dagmem's entries out again")
    parser.add_argument("--dry-run", action="store_true", help="print the change only; write nothing")


def _run(args: argparse.Namespace) -> int:
    from .._install import install_command

    return install_command(args)


COMMAND = Command(
    name="install",
    help="merge dagmem's hooks into an agent host's configuration (claude-code, codex, pi)",
    add_arguments=_arguments,
    run=_run,
    # --home (every command's option) here names the home the hooks use; not given: each project's own
    # <project>/.dagmem (or $DAGMEM_HOME) when the hook runs.
    default_home=False,
    description="Merge the hook entries into the host's configuration, keeping everything else, and print "
    "the change as a diff. Idempotent; --uninstall takes out only dagmem's entries. Without --home each "
    "project's memory lives in <project>/.dagmem.",
)
