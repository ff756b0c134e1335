"""`python -m dagmem` is the `dagmem` command."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not `typing`'s: `--version` and a hook import almost nothing
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:  # answered before any command module loads: a fresh process stays cheap
        from ._version import __version__

        print(f"dagmem {__version__}")
        return 0
    if args[:1] == ["hook"]:  # a host's hook, on every prompt: served without loading the command line
        from .hooks import hook_main

        return hook_main(args[1:])
    from .cli import main as cli_main

    return cli_main(args)


def _cwd() -> str | None:
    """The working directory; None when it was deleted (a hook run in a directory removed under its
    host: it must still exit 0)."""
    try:
        return __import__("os").getcwd()  # type: ignore[no-any-return]
    except OSError:
        return None


if __name__ == "__main__":
    # `python -m` puts the working directory first on `sys.path`: hooks installed before they ran with `-P`
    # run in a project's directory, whose own `queue.py` or `types.py` would shadow the standard library.
    # dagmem is imported already (its package directory serves its modules), so the entry can go.
    if not sys.flags.safe_path and sys.path and sys.path[0] == _cwd():
        del sys.path[0]
    sys.exit(main())
