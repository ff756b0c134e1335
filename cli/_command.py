"""One command of the command line as a record: its name, its help, its arguments, what it asks of
`--home`, and how it runs. The parser and the dispatch are built from a table of these (`commands/`)."""

from __future__ import annotations

import argparse
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Command", "Home"]


class Home(enum.Enum):
    """What a command asks of `--home` before it runs."""

    ANY = "any"  # not read, or made when missing (demo, import, mcp, migrate) or unused (bench, sim, cluster)
    EXISTING = "existing"  # read only: an existing directory, and a missing one is never created
    SESSIONS = "sessions"  # as EXISTING, and it must hold sessions/ (a dagmem home, not any directory)


@dataclass(frozen=True)
class Command:
    """`run` imports the command's implementation when it is called, so building the parser (for
    `dagmem --help`) loads only these records."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    home: Home = Home.ANY
    description: str | None = None  # the command's own --help text; argparse shows none without it
    # A command with rules of its own for its command line (`hook`: exit 0 whatever goes wrong) is
    # handed its arguments unparsed; the parser still lists it, for --help.
    own_argv: Callable[[Sequence[str]], int] | None = None
    memory: bool = False  # a memory verb (writes or recalls): refused when DAGMEM_MEMORY=off
    # `--home` when it is not given: `$DAGMEM_HOME` or `./.dagmem` (True), or None (install: the hooks
    # then find each project's own home when they run).
    default_home: bool = True
