"""`dagmem ARGS...` run in this process (`dagmem.cli.main`), what it prints captured: for the tests that check
a command's exit code and output but need no process of their own (a `python -m dagmem` start costs about
a second on a loaded machine). A test that needs a real process (a signal, a kill, a second writer, a fresh
interpreter's imports) starts one itself."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from unittest import mock

from dagmem.cli import main

__all__ = ["dagmem_run"]


def dagmem_run(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """As `subprocess.run(["dagmem", *args], capture_output=True, text=True)` would return it. `env`, as
    for a process: the whole environment the command sees."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        if cwd is not None:
            stack.enter_context(contextlib.chdir(cwd))
        if env is not None:
            stack.enter_context(mock.patch.dict(os.environ, env, clear=True))
        stack.enter_context(_fresh_logging())
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's own exits (--help, --version)
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return subprocess.CompletedProcess(["dagmem", *args], code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _fresh_logging() -> Iterator[None]:
    """The root logger as a new process has it (no handler), so the command's own `logging.basicConfig`
    sends its warnings to its stderr, as it would in a process of its own; then put back as it was."""
    root, ours = logging.getLogger(), logging.getLogger("dagmem")  # `dagmem sim` quiets its own
    handlers, levels = root.handlers[:], (root.level, ours.level)
    root.handlers = []
    try:
        yield
    finally:
        root.handlers = handlers
        root.setLevel(levels[0])
        ours.setLevel(levels[1])
