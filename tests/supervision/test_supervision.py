from __future__ import annotations

import itertools
import logging
import random
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc
import anyio.lowlevel
import pytest

from dagmem import supervision
from dagmem.memory.faults import InjectedCrash
from dagmem.supervision import (
    Backoff,
    ChildInfo,
    ChildSpec,
    Restart,
    RestartIntensityExceeded,
    Strategy,
    Supervisor,
    SupervisorEvent,
)
from dagmem.tests.package.test_faces import offered

pytestmark = pytest.mark.anyio

NO_DELAY = Backoff(initial=0.0, jitter=0.0)
Status = anyio.abc.TaskStatus[None]


class Worker:
    """A child that logs `start`/`ready`/`stop`/`crash`/`exit` and then waits to be told to crash or exit."""

    def __init__(self, name: str, log: list[str], *, startup: float = 0.0) -> None:
        self.name = name
        self.log = log
        self.startup = startup
        self.starts = 0
        self.state: dict[str, int] = {}
        self._order: anyio.Event | None = None
        self._error: BaseException | None = None

    async def __call__(self, *, task_status: Status = anyio.TASK_STATUS_IGNORED) -> None:
        self.starts += 1
        self.state = {}  # what an incarnation builds up; a restart must begin from nothing
        self.log.append(f"start {self.name}")
        order = self._order = anyio.Event()
        if self.startup:
            await anyio.sleep(self.startup)
            self.log.append(f"ready {self.name}")
        task_status.started()
        try:
            await order.wait()
        except anyio.get_cancelled_exc_class():
            self.log.append(f"stop {self.name}")
            raise
        if self._error is not None:
            self.log.append(f"crash {self.name}")
            raise self._error
        self.log.append(f"exit {self.name}")

    def crash(self, error: BaseException | None = None) -> BaseException:
        self._error = error if error is not None else RuntimeError(f"{self.name} crashed")
        assert self._order is not None
        self._order.set()
        return self._error

    def exit(self) -> None:
        self._error = None
        assert self._order is not None
        self._order.set()

    def spec(self, restart: Restart = Restart.PERMANENT) -> ChildSpec:
        return ChildSpec(self.name, self, restart)


class Events(list[SupervisorEvent]):
    def __call__(self, event: SupervisorEvent) -> None:
        self.append(event)

    def of(self, kind: str, child: str | None = None) -> list[SupervisorEvent]:
        return [e for e in self if e.kind == kind and (child is None or e.child == child)]


async def until(predicate: Callable[[], bool], *, within: float = 60.0, step: float = 0.001) -> None:
    """Poll `predicate` every `step` seconds (free on the virtual clock); fail after `within` seconds."""
    with anyio.fail_after(within):
        while True:
            if predicate():
                return
            await anyio.sleep(step)


def crashing(errors: list[BaseException], *, before_ready: bool = False) -> Callable[..., Awaitable[None]]:
    """A child that crashes at once, every time, with a new error recorded in `errors`."""

    async def start(*, task_status: Status = anyio.TASK_STATUS_IGNORED) -> None:
        if not before_ready:
            task_status.started()
        await anyio.lowlevel.checkpoint()
        errors.append(RuntimeError(f"crash {len(errors) + 1}"))
        raise errors[-1]

    return start


def test_public_names_are_pinned() -> None:
    # that `__all__` is exactly the face's public names: tests/package/test_faces.py
    assert offered(supervision) == [
        "Backoff",
        "ChildInfo",
        "ChildSpec",
        "EventKind",
        "Restart",
        "RestartIntensityExceeded",
        "Strategy",
        "Supervisor",
        "SupervisorEvent",
    ]


def test_backoff_grows_caps_jitters_and_is_reproducible() -> None:
    plain = Backoff(initial=0.1, factor=2.0, maximum=1.0, jitter=0.0)
    rng = random.Random(1)
    assert [plain.delay(n, rng) for n in range(1, 7)] == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 1.0])
    assert plain.delay(10_000, rng) == 1.0  # no OverflowError far past the cap
    with pytest.raises(ValueError, match="start at 1"):
        plain.delay(0, rng)

    jittered = Backoff(initial=1.0, jitter=0.1)
    first = [jittered.delay(1, random.Random(7)) for _ in range(3)]
    rng = random.Random(7)
    series = [jittered.delay(1, rng) for _ in range(200)]
    assert series[0] == first[0] == first[1]  # same seed, same delay
    assert all(0.9 <= d <= 1.1 for d in series)
    assert len(set(series)) > 100  # and it does spread
    with pytest.raises(ValueError, match="jitter"):
        Backoff(jitter=2.0)


def test_supervisor_rejects_duplicate_ids_and_bad_limits() -> None:
    log: list[str] = []
    with pytest.raises(ValueError, match="duplicate"):
        Supervisor("sup", [Worker("a", log).spec(), Worker("a", log).spec()])
    with pytest.raises(ValueError, match="period"):
        Supervisor("sup", period=0)


@pytest.mark.virtual_time
async def test_crashed_child_is_restarted_fresh() -> None:
    log: list[str] = []
    events = Events()
    worker = Worker("a", log)
    sup = Supervisor("sup", [worker.spec()], backoff=NO_DELAY, on_event=events)
    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        worker.state["seen"] = 42
        error = worker.crash()
        await until(lambda: worker.starts == 2)
        assert worker.state == {}
        assert log == ["start a", "crash a", "start a"]
        assert [(e.kind, e.child) for e in events] == [
            ("started", "a"),
            ("crashed", "a"),
            ("restarting", "a"),
            ("started", "a"),
        ]
        assert events.of("crashed")[0].error is error
        assert sup.which_children() == [ChildInfo("a", True, 1, Restart.PERMANENT)]
        sup.stop()


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (Strategy.ONE_FOR_ONE, ["crash b", "start b"]),
        (
            Strategy.ONE_FOR_ALL,
            ["crash b", "stop d", "stop c", "stop a", "start a", "start b", "start c", "start d"],
        ),
        (Strategy.REST_FOR_ONE, ["crash b", "stop d", "stop c", "start b", "start c", "start d"]),
    ],
)
async def test_strategy_restarts_exactly_its_children(strategy: Strategy, expected: list[str]) -> None:
    log: list[str] = []
    events = Events()
    workers = {name: Worker(name, log) for name in "abcd"}
    sup = Supervisor(
        "sup", [w.spec() for w in workers.values()], strategy=strategy, backoff=NO_DELAY, on_event=events
    )
    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        assert log == ["start a", "start b", "start c", "start d"]
        workers["b"].crash()
        restarted = sum(1 for line in expected if line.startswith("start"))
        await until(lambda: len(events.of("started")) == 4 + restarted)
        assert log[4:] == expected
        assert [e.child for e in events.of("terminated")] == [line[5:] for line in expected if "stop" in line]
        assert [info.restarts for info in sup.which_children()] == [
            int(f"start {name}" in expected) for name in "abcd"
        ]
        sup.stop()
    assert log[4 + len(expected) :] == ["stop d", "stop c", "stop b", "stop a"]


async def test_temporary_sibling_stopped_by_a_strategy_is_removed() -> None:
    log: list[str] = []
    a, t, c = Worker("a", log), Worker("t", log), Worker("c", log)
    sup = Supervisor(
        "sup",
        [a.spec(), t.spec(Restart.TEMPORARY), c.spec()],
        strategy=Strategy.ONE_FOR_ALL,
        backoff=NO_DELAY,
    )
    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        a.crash()
        await until(lambda: c.starts == 2)
        assert log[3:] == ["crash a", "stop c", "stop t", "start a", "start c"]
        assert [info.id for info in sup.which_children()] == ["a", "c"]
        assert t.starts == 1
        sup.stop()


@pytest.mark.virtual_time
@pytest.mark.parametrize(
    ("restart", "outcome", "restarted", "kept"),
    [
        (Restart.PERMANENT, "exit", True, True),
        (Restart.PERMANENT, "crash", True, True),
        (Restart.TRANSIENT, "exit", False, True),
        (Restart.TRANSIENT, "crash", True, True),
        (Restart.TEMPORARY, "exit", False, False),
        (Restart.TEMPORARY, "crash", False, False),
    ],
)
async def test_restart_types(restart: Restart, outcome: str, restarted: bool, kept: bool) -> None:
    # one_for_all, so the sibling shows whether a restart happened, and that it is left alone otherwise.
    log: list[str] = []
    events = Events()
    x, s = Worker("x", log), Worker("s", log)
    sup = Supervisor(
        "sup", [x.spec(restart), s.spec()], strategy=Strategy.ONE_FOR_ALL, backoff=NO_DELAY, on_event=events
    )
    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        if outcome == "crash":
            x.crash()
        else:
            x.exit()
        await until(lambda: bool(events.of("crashed" if outcome == "crash" else "exited")))
        await anyio.sleep(10)  # time for any restart to happen
        if restarted:
            assert log[2:] == [f"{outcome} x", "stop s", "start x", "start s"]
            expected = [ChildInfo("x", True, 1, restart), ChildInfo("s", True, 1, Restart.PERMANENT)]
        else:
            assert log[2:] == [f"{outcome} x"]
            expected = [ChildInfo("x", False, 0, restart)] if kept else []
            expected.append(ChildInfo("s", True, 0, Restart.PERMANENT))
        assert sup.which_children() == expected
        sup.stop()


async def test_exceeding_intensity_escalates_after_stopping_children() -> None:
    log: list[str] = []
    events = Events()
    errors: list[BaseException] = []
    a, c = Worker("a", log), Worker("c", log)
    sup = Supervisor(
        "sup",
        [a.spec(), ChildSpec("b", crashing(errors)), c.spec()],
        intensity=2,
        period=5.0,
        backoff=NO_DELAY,
        on_event=events,
    )
    with pytest.raises(RestartIntensityExceeded) as info:
        await sup.run()
    error = info.value
    assert (error.supervisor, error.child, error.restarts, error.period) == ("sup", "b", 3, 5.0)
    assert len(errors) == 3  # started, restarted twice, the third crash is one too many
    assert error.__cause__ is errors[-1]
    assert log == ["start a", "start c", "stop c", "stop a"]
    assert [(e.kind, e.child) for e in events if e.kind in ("escalated", "terminated")] == [
        ("escalated", "b"),
        ("terminated", "c"),
        ("terminated", "a"),
    ]
    assert not any(info.running for info in sup.which_children())


async def test_crash_before_started_counts_as_a_crash() -> None:
    errors: list[BaseException] = []
    sup = Supervisor(
        "sup", [ChildSpec("b", crashing(errors, before_ready=True))], intensity=1, backoff=NO_DELAY
    )
    with pytest.raises(RestartIntensityExceeded) as info:
        await sup.run()
    assert len(errors) == 2
    assert info.value.__cause__ is errors[-1]

    # And one that fails its first two starts, then comes up: restarted until it does.
    attempts: list[int] = []

    async def flaky(*, task_status: Status = anyio.TASK_STATUS_IGNORED) -> None:
        attempts.append(len(attempts) + 1)
        if len(attempts) <= 2:
            raise OSError("not yet")
        task_status.started()
        await anyio.sleep_forever()

    events = Events()
    sup = Supervisor("sup", [ChildSpec("f", flaky)], intensity=3, backoff=NO_DELAY, on_event=events)
    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        await until(lambda: sup.which_children()[0].running)
        assert attempts == [1, 2, 3]
        assert [e.kind for e in events] == ["crashed", "restarting", "crashed", "restarting", "started"]
        assert sup.which_children() == [ChildInfo("f", True, 2, Restart.PERMANENT)]
        sup.stop()


@pytest.mark.virtual_time
@pytest.mark.parametrize(("lifetime", "escalates"), [(6.0, False), (1.0, True)])
async def test_intensity_counts_restarts_within_the_period_only(lifetime: float, escalates: bool) -> None:
    starts: list[float] = []

    async def short_lived(*, task_status: Status = anyio.TASK_STATUS_IGNORED) -> None:
        starts.append(anyio.current_time())
        task_status.started()
        await anyio.sleep(lifetime)
        raise RuntimeError("done for")

    sup = Supervisor("sup", [ChildSpec("s", short_lived)], intensity=1, period=5.0)
    t0 = anyio.current_time()
    if escalates:
        with pytest.raises(RestartIntensityExceeded):
            await sup.run()
        assert len(starts) == 2  # the second restart within 5 s is refused
    else:
        async with anyio.create_task_group() as tg:
            await tg.start(sup.run)
            await until(lambda: len(starts) == 6, within=100, step=0.5)
            sup.stop()
        assert sup.which_children() == [ChildInfo("s", False, 5, Restart.PERMANENT)]
    assert anyio.current_time() - t0 >= lifetime * (len(starts) - 1)


@pytest.mark.virtual_time
async def test_child_supervisor_escalation_reaches_the_parent_which_restarts_it() -> None:
    starts: list[int] = []

    async def fails_three_times(*, task_status: Status = anyio.TASK_STATUS_IGNORED) -> None:
        starts.append(len(starts) + 1)
        task_status.started()
        if len(starts) <= 3:
            raise InjectedCrash(f"start {len(starts)}")
        await anyio.sleep_forever()

    inner_events, outer_events = Events(), Events()
    inner = Supervisor(
        "inner", [ChildSpec("w", fails_three_times)], intensity=1, period=10.0, on_event=inner_events
    )
    outer = Supervisor("outer", [ChildSpec("inner", inner.run)], intensity=3, on_event=outer_events)
    async with anyio.create_task_group() as tg:
        await tg.start(outer.run)
        await until(lambda: len(starts) == 4)
        await until(lambda: inner.which_children() == [ChildInfo("w", True, 1, Restart.PERMANENT)])
        # inner: crash, restart, crash, escalate; outer restarts inner: crash, restart, up.
        assert [e.kind for e in inner_events if e.kind != "terminated"] == [
            *("started", "crashed", "restarting", "started", "crashed", "escalated"),
            *("started", "crashed", "restarting", "started"),
        ]
        crashed = outer_events.of("crashed", "inner")
        assert len(crashed) == 1
        assert isinstance(crashed[0].error, RestartIntensityExceeded)
        assert crashed[0].error.supervisor == "inner"
        assert isinstance(crashed[0].error.__cause__, InjectedCrash)
        assert outer.which_children() == [ChildInfo("inner", True, 1, Restart.PERMANENT)]
        outer.stop()
    assert not inner.which_children()[0].running


async def test_escalation_through_every_level_reaches_the_root_caller() -> None:
    errors: list[BaseException] = []
    inner = Supervisor("inner", [ChildSpec("w", crashing(errors))], intensity=0, backoff=NO_DELAY)
    outer = Supervisor("outer", [ChildSpec("inner", inner.run)], intensity=1, backoff=NO_DELAY)
    with pytest.raises(RestartIntensityExceeded) as info:
        await outer.run()
    assert info.value.supervisor == "outer"
    cause = info.value.__cause__
    assert isinstance(cause, RestartIntensityExceeded)
    assert cause.supervisor == "inner"
    assert cause.__cause__ is errors[-1]
    assert len(errors) == 2  # inner ran twice: started, then restarted once by outer


@pytest.mark.virtual_time
async def test_backoff_delays_grow_then_reset_after_a_long_healthy_run() -> None:
    starts: list[float] = []
    lifetimes = [0.0, 0.0, 0.0, 0.0, 60.0, 0.0]  # then it stays up

    async def child(*, task_status: Status = anyio.TASK_STATUS_IGNORED) -> None:
        starts.append(anyio.current_time())
        task_status.started()
        if len(starts) > len(lifetimes):
            await anyio.sleep_forever()
        await anyio.sleep(lifetimes[len(starts) - 1])
        raise RuntimeError("crash")

    backoff = Backoff(initial=1.0, factor=2.0, maximum=100.0, jitter=0.0, reset_after=50.0)
    sup = Supervisor("sup", [ChildSpec("c", child)], intensity=20, period=1000.0, backoff=backoff)
    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        await until(lambda: len(starts) == 7, within=1000, step=0.5)
        sup.stop()
    gaps = [later - earlier for earlier, later in itertools.pairwise(starts)]
    # 1, 2, 4, 8 s; then it ran 60 s (>= reset_after), so back to 1 s; then 2 s.
    assert gaps == pytest.approx([1.0, 2.0, 4.0, 8.0, 60.0 + 1.0, 2.0], abs=1e-3)


@pytest.mark.virtual_time
async def test_jittered_backoff_is_reproducible_with_a_seeded_rng() -> None:
    async def gaps(seed: int) -> list[float]:
        errors: list[BaseException] = []
        times: list[float] = []
        crash = crashing(errors)

        async def child(*, task_status: Status = anyio.TASK_STATUS_IGNORED) -> None:
            times.append(anyio.current_time())
            await crash(task_status=task_status)

        backoff = Backoff(initial=1.0, jitter=0.5, maximum=100.0)
        sup = Supervisor(
            "sup",
            [ChildSpec("c", child)],
            intensity=4,
            period=1000.0,
            backoff=backoff,
            rng=random.Random(seed),
        )
        with pytest.raises(RestartIntensityExceeded):
            await sup.run()
        return [b - a for a, b in itertools.pairwise(times)]

    first, again, other = await gaps(3), await gaps(3), await gaps(4)
    assert first == pytest.approx(again, abs=1e-6)
    assert first != pytest.approx(other, abs=1e-6)
    assert len(first) == 4


async def test_injected_crash_is_a_crash() -> None:
    log: list[str] = []
    events = Events()
    worker = Worker("a", log)
    sup = Supervisor("sup", [worker.spec(Restart.TRANSIENT)], backoff=NO_DELAY, on_event=events)
    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        crash = worker.crash(InjectedCrash("writer.fsync"))
        await until(lambda: worker.starts == 2)
        assert events.of("crashed")[0].error is crash
        assert sup.which_children() == [ChildInfo("a", True, 1, Restart.TRANSIENT)]
        sup.stop()


async def test_system_exit_is_not_a_crash_it_stops_everything_and_propagates() -> None:
    log: list[str] = []
    a, c = Worker("a", log), Worker("c", log)

    async def quits(*, task_status: Status = anyio.TASK_STATUS_IGNORED) -> None:
        log.append("start b")
        task_status.started()
        await anyio.lowlevel.checkpoint()
        raise SystemExit(3)

    sup = Supervisor("sup", [a.spec(), ChildSpec("b", quits), c.spec()], backoff=NO_DELAY)
    with pytest.raises(SystemExit) as info:
        await sup.run()
    assert info.value.code == 3
    assert log == ["start a", "start b", "start c", "stop c", "stop a"]  # and b not restarted


async def test_start_child_terminate_child_which_children() -> None:
    log: list[str] = []
    events = Events()
    a, b, d = Worker("a", log), Worker("b", log, startup=0.01), Worker("d", log)
    sup = Supervisor("sup", [a.spec()], backoff=NO_DELAY, on_event=events)
    with pytest.raises(RuntimeError, match="not running"):
        await sup.start_child(b.spec())
    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        await sup.start_child(b.spec(Restart.TRANSIENT))
        assert log == ["start a", "start b", "ready b"]  # returned only once b was ready
        await sup.start_child(d.spec())
        assert sup.which_children() == [
            ChildInfo("a", True, 0, Restart.PERMANENT),
            ChildInfo("b", True, 0, Restart.TRANSIENT),
            ChildInfo("d", True, 0, Restart.PERMANENT),
        ]
        with pytest.raises(ValueError, match="already has"):
            await sup.start_child(Worker("a", log).spec())

        b.crash()  # a dynamic child is supervised like the others
        await until(lambda: b.starts == 2)
        await sup.terminate_child("b")
        assert log[-1] == "stop b"
        assert [info.id for info in sup.which_children()] == ["a", "d"]
        assert events.of("terminated", "b")
        with pytest.raises(KeyError):
            await sup.terminate_child("b")

        # A child that cannot start is discarded and its error raised (as OTP's start_child does).
        async def broken(*, task_status: Status = anyio.TASK_STATUS_IGNORED) -> None:
            raise OSError("no disk")

        async def quitter(*, task_status: Status = anyio.TASK_STATUS_IGNORED) -> None:
            return

        with pytest.raises(OSError, match="no disk"):
            await sup.start_child(ChildSpec("broken", broken))
        with pytest.raises(RuntimeError, match="before calling"):
            await sup.start_child(ChildSpec("quitter", quitter))
        await anyio.sleep(0.01)
        assert [info.id for info in sup.which_children()] == ["a", "d"]
        assert not events.of("restarting", "broken")
        sup.stop()
    assert log[-2:] == ["stop d", "stop a"]


@pytest.mark.virtual_time
async def test_stop_starts_in_order_stops_in_reverse_and_run_returns() -> None:
    log: list[str] = []
    workers = [Worker(name, log, startup=1.0) for name in "abc"]
    sup = Supervisor("sup", [w.spec() for w in workers])
    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        # each child was ready before the next one started
        assert log == ["start a", "ready a", "start b", "ready b", "start c", "ready c"]
        sup.stop()
    assert log[6:] == ["stop c", "stop b", "stop a"]
    assert [info.running for info in sup.which_children()] == [False, False, False]
    # and the supervisor can run again, but only once at a time
    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        assert [info.running for info in sup.which_children()] == [True, True, True]
        with pytest.raises(RuntimeError, match="already running"):
            await sup.run()
        sup.stop()
    assert log[9:] == [*log[:6], "stop c", "stop b", "stop a"]
    # stop() before run(): run() reports started, starts nothing, returns
    sup.stop()
    await sup.run()
    assert len(log) == 18


@pytest.mark.virtual_time
async def test_stop_interrupts_a_backoff_delay() -> None:
    log: list[str] = []
    worker = Worker("a", log)
    sup = Supervisor("sup", [worker.spec()], backoff=Backoff(initial=1000.0, jitter=0.0))
    t0 = anyio.current_time()
    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        worker.crash()
        await anyio.sleep(1)
        sup.stop()
    assert anyio.current_time() - t0 < 10
    assert worker.starts == 1


async def test_cancelling_the_surrounding_scope_stops_everything_in_reverse() -> None:
    log: list[str] = []
    workers = [Worker(name, log) for name in "abc"]
    inner_log: list[str] = []
    inner_worker = Worker("i", inner_log)
    inner = Supervisor("inner", [inner_worker.spec()])
    sup = Supervisor("sup", [*(w.spec() for w in workers), ChildSpec("inner", inner.run)])
    tasks_before = len(anyio.get_running_tasks())
    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        assert len(anyio.get_running_tasks()) > tasks_before
        tg.cancel_scope.cancel()
    assert log == ["start a", "start b", "start c", "stop c", "stop b", "stop a"]
    assert inner_log == ["start i", "stop i"]
    assert len(anyio.get_running_tasks()) == tasks_before
    assert not any(info.running for info in sup.which_children())


async def test_a_failing_observer_does_not_break_supervision(caplog: pytest.LogCaptureFixture) -> None:
    def observer(event: SupervisorEvent) -> None:
        raise ValueError("observer bug")

    log: list[str] = []
    worker = Worker("a", log)
    sup = Supervisor("sup", [worker.spec()], backoff=NO_DELAY, on_event=observer)
    with caplog.at_level(logging.INFO, logger="dagmem.supervision"):
        async with anyio.create_task_group() as tg:
            await tg.start(sup.run)
            worker.crash()
            await until(lambda: worker.starts == 2)
            sup.stop()
    messages = [r.getMessage() for r in caplog.records]
    assert any("on_event failed" in m for m in messages)
    assert any("restarting ['a']" in m for m in messages)


@pytest.mark.virtual_time
async def test_cancellation_during_a_backoff_delay_stops_the_rest_in_reverse() -> None:
    log: list[str] = []
    a, b, c = Worker("a", log), Worker("b", log), Worker("c", log)
    sup = Supervisor("sup", [a.spec(), b.spec(), c.spec()], backoff=Backoff(initial=1000.0, jitter=0.0))
    t0 = anyio.current_time()
    with anyio.move_on_after(5):
        async with anyio.create_task_group() as tg:
            await tg.start(sup.run)
            b.crash()
    assert anyio.current_time() - t0 == pytest.approx(5, abs=0.01)
    assert log == ["start a", "start b", "start c", "crash b", "stop c", "stop a"]


async def test_stop_while_start_child_waits_for_its_child() -> None:
    log: list[str] = []
    a = Worker("a", log)
    sup = Supervisor("sup", [a.spec()])
    failures: list[BaseException] = []

    async def never_ready(*, task_status: Status = anyio.TASK_STATUS_IGNORED) -> None:
        log.append("start slow")
        await anyio.sleep_forever()

    async def add_slow() -> None:
        try:
            await sup.start_child(ChildSpec("slow", never_ready))
        except RuntimeError as error:
            failures.append(error)

    async with anyio.create_task_group() as tg:
        await tg.start(sup.run)
        tg.start_soon(add_slow)
        await until(lambda: log[-1] == "start slow")
        sup.stop()
    assert log == ["start a", "start slow", "stop a"]
    assert len(failures) == 1
    assert "stopped before calling task_status.started()" in str(failures[0])
    assert [info.id for info in sup.which_children()] == ["a"]
