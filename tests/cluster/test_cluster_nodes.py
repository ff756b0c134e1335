"""`dagmem.cluster` on `ray.cluster_utils.Cluster` with two simulated nodes (issue 16): homes on local disks
are pinned to the node their files live on (the placement recorded in the GCS, rendezvous-hashed for a new
home), killed mid-write and restarted there with nothing lost; when a node dies, a home on a shared root is
restarted on the other node and recovers from its files, while a home whose files were on the dead node's
disk is refused (`HomeUnavailable`), never recreated empty elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

ray = pytest.importorskip(
    "ray", reason="Ray is not installed: pip install 'dagmem[ray]' to run the cluster tests"
)

from ray.cluster_utils import Cluster  # noqa: E402

from dagmem import FileSessionStore, cluster  # noqa: E402
from dagmem.cluster._load import fault_run  # noqa: E402

# `ray.cluster_utils.Cluster` binds its nodes to the machine's network address, not loopback (pinning it to
# 127.0.0.1 leaves the second node waiting for the GCS): opt-in with --slow, where that traffic is fine.
pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[tuple[Cluster, Any]]:
    """A head and a worker node, one CPU each, on this machine; the test process connects as a driver."""
    sim = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "object_store_memory": 100 * MIB, "include_dashboard": False},
    )
    worker = sim.add_node(num_cpus=1, object_store_memory=100 * MIB)
    ray.init(address=sim.address, namespace=cluster.NAMESPACE, log_to_driver=False)
    try:
        yield sim, worker
    finally:
        ray.shutdown()
        sim.shutdown()  # type: ignore[no-untyped-call]


@pytest.fixture
def roots(two_nodes: tuple[Cluster, Any], tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    for entry in ray.util.list_named_actors(all_namespaces=True):
        if entry["namespace"] == cluster.NAMESPACE:
            ray.kill(ray.get_actor(entry["name"], namespace=cluster.NAMESPACE), no_restart=True)


def alive_nodes() -> list[str]:
    return sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])


def homes_on_each(nodes: list[str], per_node: int, prefix: str) -> list[str]:
    """Home ids that rendezvous hashing places `per_node` on each node."""
    chosen: dict[str, list[str]] = {node: [] for node in nodes}
    k = 0
    while any(len(v) < per_node for v in chosen.values()):
        name = f"{prefix}{k}"
        node = cluster.rendezvous(name, nodes)
        if len(chosen[node]) < per_node:
            chosen[node].append(name)
        k += 1
    return sorted(name for names in chosen.values() for name in names)


async def test_homes_on_local_disks_are_pinned_and_survive_kills_mid_write(roots: Path) -> None:
    nodes = alive_nodes()
    assert len(nodes) == 2
    c = await cluster.connect(roots / "local", local_disks=True, token_threshold=60, abandon_after=0.3)
    names = homes_on_each(nodes, 3, prefix="pin")
    load, killed, result = await fault_run(c, names, kills=6, seed=7)
    print(f"[two nodes] {len(killed)} kills, {load.turns} turns, checked {result.turns_checked}")
    assert len(killed) == 6
    assert result.verify_failures == {}
    assert result.lost == []
    assert result.consumed_twice == []
    assert result.turns_checked == load.turns > 0
    for name in names:  # each home runs, after its restarts too, on the node its placement names
        info = await c.info(name)
        assert info["node_id"] == cluster.rendezvous(name, nodes)
    assert {(await c.info(name))["node_id"] for name in names} == set(nodes)
    await c.close()


def test_when_a_node_dies_shared_homes_move_and_pinned_homes_are_refused(
    two_nodes: tuple[Cluster, Any], roots: Path
) -> None:
    """Last in this module: it removes the worker node."""
    sim, worker = two_nodes
    worker_id = next(
        n["NodeID"] for n in ray.nodes() if n["Alive"] and n["NodeManagerPort"] == worker.node_manager_port
    )

    async def before() -> tuple[list[str], str, dict[str, list[str]]]:
        shared = await cluster.connect(roots / "shared", token_threshold=100_000)
        names = [f"shared{k}" for k in range(6)]
        written: dict[str, list[str]] = {}
        for name in names:
            written[name] = [await shared.append(name, "s", "user", f"said in {name}")]
        moved = [name for name in names if (await shared.info(name))["node_id"] == worker_id]
        local = await cluster.connect(roots / "local", local_disks=True)
        pinned = next(
            name
            for name in homes_on_each(alive_nodes(), 1, "gone")
            if cluster.rendezvous(name, alive_nodes()) == worker_id
        )
        await local.append(pinned, "s", "user", "on the worker's disk")
        return moved, pinned, written

    moved, pinned, written = anyio.run(before)
    assert moved, "SPREAD placed no shared home on the worker node"
    sim.remove_node(worker)

    async def after() -> None:
        shared = await cluster.connect(roots / "shared", token_threshold=100_000)
        started = anyio.current_time()
        for name in moved:  # Ray restarts the actor on the head node; it recovers from the shared files
            with anyio.fail_after(120):
                written[name].append(await shared.append(name, "s", "assistant", "said after the node died"))
            assert (await shared.info(name))["node_id"] != worker_id
            print(f"[node death] {name} served again after {anyio.current_time() - started:.2f} s")
            await shared.flush(name, force=True)
            nodes = FileSessionStore(shared.home_path(name)).load("s").nodes
            assert set(written[name]) <= set(nodes)
        local = await cluster.connect(roots / "local", local_disks=True)
        # Pinned (not soft) to a dead node, its actor cannot be restarted: Ray ends it for good.
        assert pinned not in await local.homes()
        with pytest.raises(cluster.HomeUnavailable, match=worker_id):
            await local.append(pinned, "s", "user", "where is my home?")

    anyio.run(after)
