"""`dagmem.cluster` on a local Ray instance (issues 16, 30): a pool of actors each serving many homes with
the ordinary runtime, calls routed by home id (rendezvous over the pool), homes closed when crowded out
(LRU by count and by memory) after a boundary write and opened again on demand, a second actor for a
served home refused at once, and the pool's worker processes SIGKILLed mid-write while client tasks
append to branching sessions of many homes: afterwards every home passes the oracle of `dagmem verify
--strict`, every append that returned is on disk and consumed exactly once, and each home is served by one
process."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

ray = pytest.importorskip(
    "ray", reason="Ray is not installed: pip install 'dagmem[ray]' to run the cluster tests"
)

import dagmem  # noqa: E402
from dagmem import FileSessionStore, HomeBusy, InvalidInput, UnknownNode, cluster  # noqa: E402
from dagmem.cluster._actor import HomesServer  # noqa: E402
from dagmem.cluster._load import Audit, Kill, Load, fault_run  # noqa: E402
from dagmem.memory.durable import read_workspace_id  # noqa: E402
from dagmem.memory.format import HomePaths  # noqa: E402
from dagmem.memory.write import pending_by_session  # noqa: E402

pytestmark = pytest.mark.anyio

KILLS = int(os.environ.get("DAGMEM_CLUSTER_KILLS", "6"))  # per backend, each with appends in flight
HOMES = int(os.environ.get("DAGMEM_CLUSTER_HOMES", "40"))  # through the pool's two actors
SEED = int(os.environ.get("DAGMEM_CLUSTER_SEED", "16"))


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[str]:
    """One small local Ray instance for the module (2 CPUs, no dashboard, a 100 MiB object store)."""
    context = ray.init(
        _node_ip_address="127.0.0.1",  # loopback only: no test traffic to the machine's other addresses
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=100 * 1024 * 1024,
        namespace=cluster.NAMESPACE,
        log_to_driver=False,
    )
    try:
        yield str(context.address_info["gcs_address"])
    finally:
        ray.shutdown()


@pytest.fixture
def client_root(ray_instance: str, tmp_path: Path) -> Iterator[Path]:
    """A root for the test's homes; every home actor is ended afterwards (they are detached)."""
    yield tmp_path / "homes"
    for entry in ray.util.list_named_actors(all_namespaces=True):
        if entry["namespace"] == cluster.NAMESPACE:
            try:
                handle = ray.get_actor(entry["name"], namespace=cluster.NAMESPACE)
            except ValueError:  # it died between the listing and the lookup
                continue
            ray.kill(handle, no_restart=True)


def workspace_id_path(home: Path) -> Path:
    return HomePaths(home).workspace.workspace_id


def lock_free(home: Path) -> bool:
    fd = os.open(HomePaths(home).workspace.serving_lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def serving_pid(home: Path) -> int:
    text = (home / "memory" / ".dagmem" / "runtime.lock").read_text()
    return int(text.split()[1])


async def test_calls_go_to_the_home_actor_running_the_runtime(client_root: Path) -> None:
    c = await cluster.connect(client_root)
    first = await c.append("alpha", "s", "user", "where do the trams of Lisbon go?")
    answer = await c.append("alpha", "s", "assistant", "up the hills of Alfama", node_id="a1")
    fork = await c.append("alpha", "s", "user", "and the funiculars?", predecessor=first)
    await c.set_head("alpha", "s", answer)
    assert c.home_path("alpha") == client_root / "alpha"
    name = cluster.actor_name("alpha")
    assert name in ("dagmem:actor-0", "dagmem:actor-1")  # one of the pool's two
    handle = ray.get_actor(name, namespace="dagmem")
    assert ray.get(handle.info.remote("alpha"))["path"] == str(client_root / "alpha")
    # A retried append (same id, same turn) is a no-op; another turn under that id is refused.
    assert await c.append("alpha", "s", "assistant", "up the hills of Alfama", node_id="a1") == "a1"
    with pytest.raises(InvalidInput, match="another content"):
        await c.append("alpha", "s", "assistant", "down to the river", node_id="a1")
    with pytest.raises(UnknownNode) as caught:  # the actor's error, as itself, with its attributes
        await c.set_head("alpha", "s", "ghost")
    assert (caught.value.session_id, caught.value.node_id) == ("s", "ghost")
    await c.end_session("alpha", "s")
    await c.flush("alpha", force=True)
    status = await c.status("alpha")
    assert isinstance(status, dagmem.RuntimeStatus)
    assert (status.last_outcome, status.pending_turns) == ("success", 0)
    hits = await c.recall("alpha", "trams Lisbon", session_id="s")
    assert hits
    assert all(isinstance(hit, dagmem.Hit) for hit in hits)
    assert any(ev.node == first for hit in hits for ev in hit.evidence)  # the turn that said it
    assert {hit.status for hit in hits} == {"current"}  # nothing was superseded or left here
    history = await c.recall("alpha", "trams Lisbon", session_id="s", history=True)  # passed through
    assert [(h.block_id, h.status) for h in history] == [(h.block_id, h.status) for h in hits]
    asked = dagmem.RecallQuery("trams Lisbon", session_id="s", k=1)  # one value, whole over the wire
    assert [h.block_id for h in await c.recall_query("alpha", asked)] == [hits[0].block_id]
    core = anyio.Path(client_root / "alpha" / "memory" / "core.md")
    assert await c.core("alpha") == (await core.read_text() if await core.exists() else "")
    # A turn crosses the wire as one value, every field of it (a git context `append` does not take).
    where = dagmem.GitContext("/src/app/.git", "main")
    side = await c.append_turn("alpha", "s2", dagmem.Turn("user", "a side note", spawned=True, git=where))
    store = dagmem.FileSessionStore(client_root / "alpha")
    said = store.load("s2").nodes[side]
    assert (said.content, said.metadata) == ("a side note", {"spawned": True, "git": where.to_json()})
    snapshot = store.load("s")
    assert set(snapshot.nodes) == {first, answer, fork}
    assert snapshot.meta.head == answer
    assert await c.homes() == ["alpha"]
    info = await c.info("alpha")
    assert info["pid"] == serving_pid(client_root / "alpha") != os.getpid()
    await c.close()
    assert ray.is_initialized()  # the client did not start this instance, so it leaves it running


async def test_bad_input_is_refused_before_it_reaches_an_actor(client_root: Path) -> None:
    c = await cluster.connect(client_root)
    with pytest.raises(InvalidInput, match="home id"):
        await c.append("../etc", "s", "user", "x")
    with pytest.raises(InvalidInput, match="role"):
        await c.append("beta", "s", "robot", "x")
    with pytest.raises(InvalidInput, match="query is empty"):
        await c.recall("beta", " ")
    assert await c.homes() == []  # no actor was made for any of it
    assert not await anyio.Path(client_root).exists()


async def test_a_second_actor_for_a_served_home_fails_fast(client_root: Path) -> None:
    c = await cluster.connect(client_root)
    await c.append("gamma", "s", "user", "hello")
    path = c.home_path("gamma")
    # Another actor (another name, so Ray does not stop it) on the same root: the home's runtime cannot open.
    twin = (
        ray.remote(HomesServer)
        .options(name="twin", namespace="dagmem", num_cpus=0)
        .remote(str(client_root), {})
    )
    with anyio.fail_after(30):
        tag, failure = await anyio.to_thread.run_sync(
            ray.get,
            twin.append.remote("gamma", "s", dagmem.Turn("user", "twice", node_id="x")),
        )
    assert tag == "error"
    assert failure.name == "HomeBusy"
    assert f"pid {serving_pid(path)}" in failure.message
    with pytest.raises(HomeBusy):  # and so does a runtime in this process
        async with dagmem.Runtime.open(path):
            pass
    assert "x" not in dagmem.FileSessionStore(path).load("s").nodes


def assert_no_loss(load: Load, killed: list[Kill], result: Audit, kills: int) -> None:
    print(
        f"[cluster kill] {len(killed)} SIGKILLs, {sum(k.in_flight > 0 for k in killed)} with appends in "
        f"flight, {load.turns} turns ({load.forks} forks, {load.head_moves} head moves), "
        f"restart {max(k.restart_s for k in killed):.2f} s at most; checked {result.turns_checked}"
    )
    assert len(killed) == kills
    assert all(k.new_pid != k.pid for k in killed)
    assert any(k.in_flight > 0 for k in killed), "no kill landed while appends were in flight"
    assert result.verify_failures == {}  # the oracle, `dagmem verify --strict`, on every home
    assert result.lost == []  # every append that returned is on disk and consumed
    assert result.consumed_twice == []
    assert result.turns_checked == load.turns > 0


async def assert_served_once(c: cluster.Cluster, names: list[str]) -> None:
    """One process serves each home: the one holding its serving lock; no other runtime can open it."""
    for name in names:
        info = await c.info(name)
        assert info["pid"] == serving_pid(c.home_path(name))
        with pytest.raises(HomeBusy):
            async with dagmem.Runtime.open(c.home_path(name)):
                pass


async def test_pool_actors_killed_mid_write_lose_nothing_over_many_homes(client_root: Path) -> None:
    """Many homes through two actors, branching sessions appended from four client tasks at once, the
    actors' processes SIGKILLed mid-write (Ray restarts each; each home recovers from disk when next used).
    Each home is checked by the oracle of `dagmem verify --strict` run in this process (`check_home`,
    drained: what the command's exit code says), not by a verify process per home (half a second each)."""
    c = await cluster.connect(client_root, token_threshold=60, abandon_after=0.3)
    names = [f"h{k}" for k in range(HOMES)]
    load, killed, result = await fault_run(c, names, kills=KILLS, seed=SEED, processes=False)
    assert_no_loss(load, killed, result, KILLS)
    await assert_served_once(c, names)
    await c.close()


async def test_an_actor_closes_its_least_recently_used_home_after_a_boundary_write_and_reopens_it(
    client_root: Path,
) -> None:
    c = await cluster.connect(client_root, actors=1, max_open=2, token_threshold=100_000)
    for home in ("lru1", "lru2"):
        await c.append(home, "s", "user", f"a turn in {home}, under the threshold")
    assert (await c.info("lru1"))["serving"]
    assert (await c.info("lru2"))["serving"]
    await c.append("lru3", "s", "user", "a third home: the least recently used one closes")
    assert await c.homes() == ["lru2", "lru3"]
    assert not (await c.info("lru1"))["serving"]
    await c.stop("lru1")  # closed already: this waits for its close (the boundary write) to end
    # Closed after a boundary write: its turn is in memory, though under the threshold.
    assert pending_by_session(
        client_root / "lru1", read_workspace_id(workspace_id_path(client_root / "lru1"))
    ) == {"s": 0}
    assert lock_free(client_root / "lru1")  # no runtime holds it: closed, not just forgotten
    await c.append("lru1", "s", "assistant", "reopened on demand")  # recovers from disk, as after a crash
    assert await c.homes() == ["lru1", "lru3"]
    (stats,) = (await c.stats()).values()
    assert stats["counts"]["closed_lru"] == 2
    assert stats["open"] == 2
    assert len(FileSessionStore(client_root / "lru1").load("s").nodes) == 2
    await c.close()


async def test_an_actor_over_its_memory_budget_closes_a_home_for_each_it_opens(client_root: Path) -> None:
    c = await cluster.connect(client_root, actors=1, max_rss_mib=1, token_threshold=100_000)
    for home in ("m1", "m2", "m3"):
        await c.append(home, "s", "user", f"a turn in {home}")
    assert await c.homes() == ["m3"]  # every process is over 1 MiB: each open closed the one before
    (stats,) = (await c.stats()).values()
    assert stats["counts"]["closed_memory"] == 2
    await c.close()


async def test_an_idle_home_is_closed_and_its_next_call_opens_it(client_root: Path) -> None:
    c = await cluster.connect(client_root, actors=1, idle_close_after=0.2, token_threshold=100_000)
    await c.append("idle", "s", "user", "then nothing for a while")
    with anyio.fail_after(60):
        while (await c.info("idle"))["serving"]:  # noqa: ASYNC110 (the actor's reaper closes it, over Ray)
            await anyio.sleep(0.05)
    await c.stop("idle")  # closed already: this waits for its close (the boundary write) to end
    (stats,) = (await c.stats()).values()
    assert stats["counts"]["closed_idle"] >= 1
    assert pending_by_session(
        client_root / "idle", read_workspace_id(workspace_id_path(client_root / "idle"))
    ) == {"s": 0}
    await c.append("idle", "s", "assistant", "and back")
    assert len(FileSessionStore(client_root / "idle").load("s").nodes) == 2
    await c.close()


def test_cluster_status_lists_homes_where_they_live_and_what_they_owe(
    ray_instance: str, client_root: Path
) -> None:
    async def setup() -> None:
        c = await cluster.connect(client_root, token_threshold=100_000)
        for home in ("north", "south"):
            await c.append(home, "s", "user", f"a turn in the {home}")
        await c.close()

    anyio.run(setup)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run(
        [sys.executable, "-m", "dagmem", "cluster", "status", "--json", "--address", ray_instance],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "SIGTERM" not in proc.stderr  # Ray's warning that it set no handler off the main thread
    report = json.loads(proc.stdout)
    homes = {entry["home_id"]: entry for entry in report["homes"]}
    assert sorted(homes) == ["north", "south"]
    node = ray.get_runtime_context().get_node_id()
    for home in ("north", "south"):
        assert homes[home]["node_id"] == node
        assert homes[home]["path"] == str(client_root / home)
        assert homes[home]["pending_turns"] == 1  # under the threshold: owed, not yet due
