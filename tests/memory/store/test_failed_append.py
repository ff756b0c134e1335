"""An append that raises leaves nothing (issue 28): its node file is written before `meta.json`, and when
that write fails (a full disk, a permission) the node file goes too. Otherwise the session holds a turn
the host was told failed (and retries: it would be there twice), or a tip the runtime does not know of
(owed, but `pending_turns=0`), written later all the same."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dagmem import FileSessionStore, MemorySessionStore, Runtime, SessionStore
from dagmem.memory import faults
from dagmem.memory.durable import read_workspace_id
from dagmem.memory.outcomes import ReasonCode, WriteFailure
from dagmem.sim import check_home

ERRORS = [errno.ENOSPC, errno.EACCES]
SITES = ["meta:write", "meta:rename"]


@contextmanager
def failing(site: str, code: int) -> Iterator[None]:
    """Every hit of `site` raises OSError(code), as the real write would."""

    def hook(hit: str) -> None:
        if hit == site:
            raise OSError(code, os.strerror(code), hit)

    with faults.armed(hook):
        yield


def contents(store: SessionStore, sid: str) -> list[str]:
    return sorted(node.content for node in store.load(sid).nodes.values())


@pytest.mark.parametrize("site", SITES)
@pytest.mark.parametrize("code", ERRORS, ids=["ENOSPC", "EACCES"])
def test_an_append_whose_meta_write_fails_leaves_nothing(store: SessionStore, site: str, code: int) -> None:
    store.append("s", "user", "one")
    store.append("s", "assistant", "two")
    before = store.load("s")
    with failing(site, code), pytest.raises(OSError, match=os.strerror(code)) as raised:
        store.append("s", "user", "three")
    assert raised.value.errno == code
    after = store.load("s")
    assert after.problems == []
    assert sorted(after.nodes) == sorted(before.nodes)
    assert after.meta.head == before.meta.head
    if isinstance(store, FileSessionStore):  # what another process reads from the files
        fresh = FileSessionStore(store.home).load("s")
        assert sorted(fresh.nodes) == sorted(before.nodes)
        assert fresh.problems == []
    # The host retries: the turn is there once, after the head, and the session stays valid.
    node = store.append("s", "user", "three")
    assert node.predecessor == before.meta.head
    assert contents(store, "s") == ["one", "three", "two"]
    assert store.load("s").problems == []


@pytest.mark.parametrize("code", ERRORS, ids=["ENOSPC", "EACCES"])
def test_a_first_append_whose_meta_write_fails_leaves_no_node(tmp_path: Path, code: int) -> None:
    store = FileSessionStore(tmp_path)
    with failing("meta:rename", code), pytest.raises(OSError, match=os.strerror(code)):
        store.append("s", "user", "first")
    fresh = FileSessionStore(tmp_path)
    assert not fresh.has_session("s") or fresh.load("s").nodes == {}
    store.append("s", "user", "first")
    assert contents(FileSessionStore(tmp_path), "s") == ["first"]


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["file", "memory"])
@pytest.mark.parametrize("code", ERRORS, ids=["ENOSPC", "EACCES"])
async def test_a_runtime_append_that_raises_is_never_written(tmp_path: Path, kind: str, code: int) -> None:
    """Through `Runtime.append`: the failed turn is neither owed nor written later; the retried one is
    written once; nothing is owed afterwards."""
    store: SessionStore = FileSessionStore(tmp_path) if kind == "file" else MemorySessionStore()
    async with Runtime.open(tmp_path, store=store, token_threshold=10_000) as rt:
        await rt.append("s", "user", "hello there")
        with failing("meta:rename", code), pytest.raises(WriteFailure) as raised:
            await rt.append("s", "assistant", "the failed reply")
        assert raised.value.code is (
            ReasonCode.DISK_FULL if code == errno.ENOSPC else ReasonCode.PERMISSION_DENIED
        )
        assert contents(store, "s") == ["hello there"]
        await rt.append("s", "assistant", "the failed reply")  # the host retries
        await rt.append("s", "user", "thanks")
        await rt.flush(force=True)
        assert rt.status().pending_turns == 0
    assert contents(store, "s") == ["hello there", "thanks", "the failed reply"]
    workspace_id = read_workspace_id(tmp_path / "memory" / ".dagmem" / "workspace-id")
    assert workspace_id is not None
    report = check_home(store, tmp_path / "memory", workspace_id, drained=True)
    assert report.violations == []
