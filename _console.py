"""The rich console every command prints people's output through.

Asked for its width when its stream is not a terminal, rich answers 80 and hard-wraps every line there: a
path or a failure's detail piped to a file or `grep` came out cut in two. Piped, lines are whole (soft
wrap) and tables take the room they need."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["PIPED_WIDTH", "console"]

PIPED_WIDTH = 1_000  # room for a table when no terminal says how wide it is; tables take only what they need


def console(*, stderr: bool = False) -> Console:
    """A console on stdout (stderr with `stderr`): the terminal's width on a terminal, no wrapping otherwise."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    piped = not stream.isatty()
    return Console(stderr=stderr, highlight=False, soft_wrap=piped, width=PIPED_WIDTH if piped else None)
