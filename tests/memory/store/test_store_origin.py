"""`append(..., origin=...)`: where a turn's text came from, checked like every argument (bad input writes
nothing), kept as the dagmem-owned `metadata["origin"]` only when it is not the role's default, and part
of what makes a retried append the same turn."""

from __future__ import annotations

from pathlib import Path

import pytest

import dagmem
from dagmem import FileSessionStore, InvalidInput

pytestmark = pytest.mark.anyio


def test_origin_is_kept_when_it_is_not_the_roles_default(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    pasted = store.append("s", "user", "a page", origin="tool")
    typed = store.append("s", "user", "my words", origin="user")
    assert pasted.metadata["origin"] == "tool"
    assert "origin" not in typed.metadata


@pytest.mark.parametrize("origin", ["web", "", 3, "User"])
def test_an_unknown_origin_is_refused_and_nothing_is_written(tmp_path: Path, origin: object) -> None:
    store = FileSessionStore(tmp_path)
    with pytest.raises(InvalidInput, match="origin"):
        store.append("s", "user", "hello", origin=origin)
    assert not (tmp_path / "sessions" / "s").exists()


def test_a_caller_may_not_set_the_origin_key_itself(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="'origin' is dagmem's own"):
        FileSessionStore(tmp_path).append("s", "user", "hi", metadata={"origin": "user"})


def test_a_retried_append_with_another_origin_is_refused(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path)
    store.append("s", "user", "a page", node_id="n1", origin="tool")
    assert store.append("s", "user", "a page", node_id="n1", origin="tool").id == "n1"  # the same turn
    with pytest.raises(InvalidInput, match="origin"):
        store.append("s", "user", "a page", node_id="n1")


async def test_the_runtime_takes_and_checks_the_origin(tmp_path: Path) -> None:
    async with dagmem.Runtime.open(tmp_path) as rt:
        nid = await rt.append("s", "user", "fetched text", origin="imported")
        with pytest.raises(InvalidInput, match="origin"):
            await rt.append("s", "user", "x", origin="robot")
    assert FileSessionStore(tmp_path).load("s").nodes[nid].metadata["origin"] == "imported"
