"""Where the BPE table (`_bpe`) lives: once per machine, in the user's cache directory, not once per home.

The table is 1 MB derived from the tokenizer the wheel ships, the same bytes for every home: 10,000 homes
held 10 GB of copies, and a fresh home on a small disk spent its space on it. So the writer keeps one
copy in `$DAGMEM_CACHE_DIR` (else `$XDG_CACHE_HOME/dagmem`, else `~/.cache/dagmem`), named by the
tokenizer's sha256 (`bpe-<16 hex>.bin`), written atomically (temp file, rename), its CRC-32 checked by
every reader, and written again when it is missing or damaged. A home falls back to its own copy
(`memory/.dagmem/bpe-*.bin`, as before) only when the cache cannot be written; once the shared copy is
good, a home's own copy is removed. Nothing here ever fails a write: the table only saves a reader the
tokenizer's load."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ..durable import atomic_write
from ._bpe import Table, table_path

__all__ = ["CACHE_ENV", "cache_dir", "ensure_table", "read_table", "shared_path"]

log = logging.getLogger("dagmem.recall")

CACHE_ENV = "DAGMEM_CACHE_DIR"

# Files found good in this process, by path, with the (inode, size, mtime) they had then: a writer
# checks the shared table once, not at every install (a changed file is read and checked again).
_good: dict[Path, tuple[int, int, int]] = {}


def cache_dir(env: Mapping[str, str] = os.environ) -> Path:
    """The user's cache directory for dagmem (not created here)."""
    if env.get(CACHE_ENV):
        return Path(env[CACHE_ENV])
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(base) / "dagmem"


def shared_path(tokenizer_sha256: str, env: Mapping[str, str] = os.environ) -> Path:
    return cache_dir(env) / f"bpe-{tokenizer_sha256[:16]}.bin"


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def _good_table(path: Path, sha256: str, vocab: int) -> bool:
    """Whether `path` holds a whole table of this tokenizer (read and checked once while unchanged)."""
    signature = _signature(path)
    if signature is None:
        return False
    if _good.get(path) == signature:
        return True
    table = Table.read(path, sha256)
    if table is None or table.vocab != vocab:
        return False
    _good[path] = signature
    return True


def ensure_table(
    memory: Path, sha256: str, vocab: int, build: Callable[[], bytes | None], *, fsync: bool
) -> None:
    """Make the table of tokenizer `sha256` readable for the workspace at `memory`: the shared copy
    (written or rewritten when missing or damaged), else the home's own. `build` makes its bytes (None:
    this tokenizer gets no table). Never raises: any trouble is logged and the write goes on."""
    try:
        _ensure(memory, sha256, vocab, build, fsync=fsync)
    except Exception as exc:  # a cache is never worth a failed write (a simulated death still propagates)
        log.warning("recall: the BPE table was not written (readers load the tokenizer instead): %s", exc)


def _ensure(memory: Path, sha256: str, vocab: int, build: Callable[[], bytes | None], *, fsync: bool) -> None:
    shared = shared_path(sha256)
    own = table_path(memory, sha256)
    if not _good_table(shared, sha256, vocab):
        data = build()
        if data is None:
            return
        try:
            shared.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(shared, data, fsync=fsync, site="bpe")
        except OSError as exc:
            log.info("recall: the shared BPE table cannot be written (%s): the home keeps its own copy", exc)
            if not _good_table(own, sha256, vocab) and own.parent.is_dir():
                try:
                    atomic_write(own, data, fsync=fsync, site="bpe")
                except OSError as own_exc:  # a full disk: readers load the tokenizer meanwhile
                    log.warning("recall: no BPE table written (%s): readers load the tokenizer", own_exc)
            return
        if not _good_table(shared, sha256, vocab):
            return  # another writer replaced it meanwhile with something else: the next install sees
    try:  # the shared copy is good: a home's own (written before, or as a fall-back) is not needed
        own.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.info("recall: could not remove the home's own BPE table %s: %s", own, exc)


def read_table(memory: Path | None, sha256: str) -> Table | None:
    """The table a reader uses: the shared copy, else the home's own (an older home's, or a fall-back);
    None when neither is whole (the reader loads the tokenizer)."""
    table = Table.read(shared_path(sha256), sha256)
    if table is None and memory is not None:
        table = Table.read(table_path(memory, sha256), sha256)
    return table
