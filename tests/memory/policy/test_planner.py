"""The pure core, without an event loop: the DAG view's running sums, the planner's batches and deadlines
(DESIGN §3), and the session's lifecycle as its machine decides it (idle, end, waiters, retirement;
DESIGN §5)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from dagmem.memory.outcomes import ReasonCode, WriteFailure
from dagmem.memory.policy import (
    Batch,
    Carryover,
    DagView,
    SessionMachine,
    SessionPlanner,
    Unwritten,
    split_batches,
)
from dagmem.memory.policy import machine as m

# -- the definitions, the slow obvious way ------------------------------------------------------------------


@dataclass
class Brute:
    """DESIGN §3 by definition: walk from a node toward the root, collecting records, until the first
    record marked for this workspace; oldest first."""

    parent: dict[str, str | None] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    marked: dict[str, bool] = field(default_factory=dict)

    def add(self, node: str, parent: str | None, tokens: int) -> None:
        self.parent[node], self.tokens[node], self.marked[node] = parent, tokens, False

    def unwritten(self, node: str) -> list[str]:
        out: list[str] = []
        current: str | None = node
        while current is not None:
            if self.tokens[current]:
                if self.marked[current]:
                    break
                out.append(current)
            current = self.parent[current]
        return out[::-1]

    def tips(self) -> list[str]:
        parents = set(self.parent.values())
        return [n for n in self.parent if n not in parents]

    def branch(self, node: str) -> list[str]:
        out: list[str] = []
        current: str | None = node
        while current is not None:
            out.append(current)
            current = self.parent[current]
        return out[::-1]

    def first_batch(self, ids: list[str], threshold: int) -> list[str]:
        """The shortest run reaching the threshold; a record alone above it is a batch by itself."""
        run: list[str] = []
        total = 0
        for i in ids:
            if self.tokens[i] > threshold:
                return run or [i]
            run.append(i)
            total += self.tokens[i]
            if total >= threshold:
                return run
        return run


THRESHOLD = 50

# Each operation is (kind, a, b); a and b pick a node, a token count or an amount from the current state,
# so every sequence hypothesis draws is a valid history.
operations = st.lists(st.tuples(st.integers(0, 8), st.integers(0, 1_000), st.integers(0, 1_000)), max_size=80)


def _tokens(b: int) -> int:
    return 0 if b % 4 == 0 else b % (THRESHOLD * 2) + 1  # some non-records, some records above threshold


@settings(max_examples=300, database=None, derandomize=True, deadline=None)
@given(operations)
def test_running_sums_match_the_definition_after_any_history(ops: list[tuple[int, int, int]]) -> None:
    view = DagView("s")
    planner = SessionPlanner(view, None, threshold=THRESHOLD, abandon_after=10.0, max_attempts=3)
    brute = Brute()
    now = 0.0
    for step, (kind, a, b) in enumerate(ops):
        nodes = list(brute.parent)
        if kind <= 2 or not nodes:  # an append: a new root, continuing the head, or a fork anywhere
            node = f"n{step}"
            if not nodes or kind == 0:
                parent = None
            elif kind == 1:
                parent = planner.head
            else:
                parent = nodes[a % len(nodes)]
            tokens = _tokens(b)
            planner.on_turn(node, parent, tokens)
            brute.add(node, parent, tokens)
            if kind == 1 or parent is None:
                planner.on_head(node, now)
        elif kind == 3:  # a head move (or no head)
            planner.on_head(None if b % 7 == 0 else nodes[a % len(nodes)], now)
        elif kind == 4:  # a rewind: the branch from a node to its tip is no longer records
            target = nodes[a % len(nodes)]
            below = [n for n in nodes if target in brute.branch(n)]
            rewound = below[: 1 + b % len(below)]
            planner.on_rewound(rewound)
            for n in rewound:
                brute.tokens[n] = 0
            planner.on_head(brute.parent[target], now)
        elif kind == 5:  # the writer's answer for the batch in flight, or the next batch
            if planner.inflight is not None:
                batch = planner.inflight
                if b % 4 == 0:
                    planner.on_failed(batch, retryable=b % 8 == 0, now=now)
                    continue
                landed = batch.node_ids if b % 4 != 1 else batch.node_ids[: 1 + a % len(batch.node_ids)]
                planner.on_written(batch, landed)
                for n in landed:
                    brute.marked[n] = brute.tokens[n] > 0
            else:
                batch_ = planner.next_batch(now)
                if batch_ is not None:
                    _check_batch(batch_, brute)
        elif kind == 6:  # marks of arbitrary records (a host's own files), not a prefix
            records = [n for n in nodes if brute.tokens[n]]
            picked = [records[(a + i * b) % len(records)] for i in range(1 + b % 3)] if records else []
            view.mark(picked)
            for n in picked:
                brute.marked[n] = True
        elif kind == 7:
            now += a % 30
        else:
            planner.on_boundary()
        _check_sums(view, brute)


def _check_sums(view: DagView, brute: Brute) -> None:
    assert sorted(view.tips()) == sorted(brute.tips())
    for tip in brute.tips():
        ids = brute.unwritten(tip)
        assert view.unwritten(tip) == Unwritten(sum(brute.tokens[i] for i in ids), len(ids))
        assert view.unwritten_records(tip) == ids


def _check_batch(batch: Batch, brute: Brute) -> None:
    expected = brute.first_batch(brute.unwritten(batch.target), THRESHOLD)
    assert list(batch.node_ids) == expected
    assert batch.tokens == sum(brute.tokens[i] for i in expected)
    if not batch.forced:  # per turn, only a complete batch is written
        assert batch.tokens >= THRESHOLD or len(expected) == 1


# -- batches ----------------------------------------------------------------------------------------------


def test_a_batch_is_the_shortest_run_that_reaches_the_threshold() -> None:
    records = [("a", 30), ("b", 20), ("c", 10), ("d", 45), ("e", 5)]
    assert split_batches(records, 50) == [(["a", "b"], True), (["c", "d"], True), (["e"], False)]


def test_a_record_alone_above_the_threshold_is_a_batch_by_itself() -> None:
    records = [("a", 10), ("b", 80), ("c", 10), ("d", 51)]
    assert split_batches(records, 50) == [(["a"], True), (["b"], True), (["c"], True), (["d"], True)]
    assert split_batches([("x", 51)], 50) == [(["x"], True)]


def _chain(view: DagView, prefix: str, parent: str | None, tokens: list[int]) -> str | None:
    for i, n in enumerate(tokens):
        view.add(f"{prefix}{i}", parent, tokens=n)
        parent = f"{prefix}{i}"
    return parent


def _drain(planner: SessionPlanner, now: float = 0.0) -> list[Batch]:
    batches = []
    while (batch := planner.next_batch(now)) is not None:
        batches.append(batch)
        planner.on_written(batch)
    return batches


def test_forced_mode_writes_until_nothing_is_owed_and_its_last_batch_may_be_smaller() -> None:
    view = DagView("s")
    tip = _chain(view, "m", None, [20] * 7)  # 140 tokens
    planner = SessionPlanner(view, tip, threshold=50)
    planner.check_all_tips()
    assert [b.node_ids for b in _drain(planner)] == [("m0", "m1", "m2"), ("m3", "m4", "m5")]  # per turn
    planner.on_boundary()
    (last,) = _drain(planner)
    assert (last.node_ids, last.tokens, last.forced) == (("m6",), 20, True)
    assert not planner.owes()
    assert not planner.busy()


def test_per_turn_a_branch_is_due_when_its_unwritten_tokens_reach_the_threshold() -> None:
    view = DagView("s")
    planner = SessionPlanner(view, None, threshold=50)
    planner.on_turn("a", None, 30)
    planner.on_head("a", 0.0)
    planner.on_turn("t", "a", 0)  # a tool row: not a record, adds nothing
    assert planner.next_batch(0.0) is None
    assert not planner.busy()
    planner.on_turn("b", "t", 20)
    assert planner.busy()
    batch = planner.next_batch(0.0)
    assert batch is not None
    assert (batch.node_ids, batch.tokens, batch.target, batch.forced) == (("a", "b"), 50, "b", False)
    assert planner.next_batch(0.0) is None  # one at a time: the next waits for this answer
    planner.on_written(batch)
    assert view.unwritten("b") == Unwritten(0, 0)
    planner.on_turn("c", "b", 49)
    assert planner.next_batch(0.0) is None  # 49 < 50: owed, not due
    assert planner.owes()


# -- head moves -------------------------------------------------------------------------------------------


def _forked() -> tuple[DagView, SessionPlanner]:
    """r0 -> a0 (the old head) and r0 -> b0 (the new one), both below the threshold."""
    view = DagView("s")
    view.add("r0", None, tokens=10)
    view.add("a0", "r0", tokens=10)
    view.add("b0", "r0", tokens=10)
    return view, SessionPlanner(view, "a0", threshold=1000, abandon_after=60.0)


def test_an_abandoned_branch_is_force_written_after_abandon_after() -> None:
    _view, planner = _forked()
    planner.on_head("b0", 5.0)  # the user went back and asked again
    assert planner.next_deadline() == 65.0
    assert planner.next_batch(64.9) is None
    batch = planner.next_batch(65.0)
    assert batch is not None
    assert (batch.node_ids, batch.target, batch.forced) == (("r0", "a0"), "a0", True)
    planner.on_written(batch)
    assert planner.next_batch(65.0) is None
    assert planner.next_deadline() is None
    assert planner.view.unwritten("b0") == Unwritten(10, 1)  # the shared r0 went once, with a0


def test_an_abandoned_branch_is_forgiven_when_the_head_returns_to_it() -> None:
    _view, planner = _forked()
    planner.on_head("b0", 5.0)
    planner.on_head("a0", 30.0)  # back before the deadline: a0 is forgiven, b0 is abandoned now
    assert planner.next_deadline() == 90.0
    assert planner.next_batch(65.0) is None
    batch = planner.next_batch(90.0)
    assert batch is not None
    assert batch.target == "b0"


def test_continuing_the_head_abandons_nothing() -> None:
    view, planner = _forked()
    view.add("a1", "a0", tokens=10)
    planner.on_head("a1", 5.0)
    assert planner.next_deadline() is None


# -- the session boundary ---------------------------------------------------------------------------------


def test_a_boundary_writes_the_head_branch_first_then_every_other_tip() -> None:
    view = DagView("s")
    view.add("r", None, tokens=10)
    a = _chain(view, "a", "r", [10, 10])
    b = _chain(view, "b", "r", [10])
    c = _chain(view, "c", "r", [10, 10, 10])
    assert view.tips() == [a, b, c]
    planner = SessionPlanner(view, b, threshold=1000)
    planner.on_boundary()
    batches = _drain(planner)
    assert [x.target for x in batches] == [b, a, c]
    assert [x.node_ids for x in batches] == [("r", "b0"), ("a0", "a1"), ("c0", "c1", "c2")]  # r once
    assert all(x.forced for x in batches)
    assert not planner.owes()
    assert not planner.busy()


def test_a_head_that_is_not_a_tip_is_written_first_too() -> None:
    view = DagView("s")
    _chain(view, "m", None, [10, 10, 10])
    planner = SessionPlanner(view, "m1", threshold=1000)  # rewound to m1, say: m2 is still a tip
    planner.on_boundary()
    assert [(x.target, x.node_ids) for x in _drain(planner)] == [("m1", ("m0", "m1")), ("m2", ("m2",))]


# -- failures ---------------------------------------------------------------------------------------------


def _due() -> tuple[SessionPlanner, Batch]:
    view = DagView("s")
    _chain(view, "m", None, [60])
    planner = SessionPlanner(view, "m0", threshold=50, max_attempts=3, backoff=lambda n: 10.0 * 2**n)
    planner.check_all_tips()
    batch = planner.next_batch(0.0)
    assert batch is not None
    return planner, batch


def test_a_retryable_failure_is_retried_with_backoff_then_parks() -> None:
    planner, batch = _due()
    planner.on_failed(batch, retryable=True, now=1.0)
    assert planner.next_deadline() == 21.0
    assert planner.busy()
    assert planner.next_batch(20.9) is None
    assert planner.next_batch(21.0) == batch
    planner.on_failed(batch, retryable=True, now=22.0)
    assert planner.next_deadline() == 62.0  # 22 + 10 * 2**2
    assert planner.next_batch(62.0) == batch
    planner.on_failed(batch, retryable=True, now=63.0)  # the third attempt: max_attempts
    assert planner.parked
    assert planner.next_batch(1e9) is None
    assert planner.next_deadline() is None
    assert not planner.busy()
    assert planner.owes()  # parked, not forgotten


def test_a_permanent_failure_parks_until_the_next_boundary() -> None:
    planner, batch = _due()
    planner.on_failed(batch, retryable=False, now=1.0)
    assert (planner.parked, planner.next_batch(1.0), planner.busy()) == (True, None, False)
    planner.on_turn("m1", "m0", 60)  # more turns do not unpark it
    assert planner.next_batch(2.0) is None
    planner.on_boundary()
    assert not planner.parked
    assert [x.node_ids for x in _drain(planner, 3.0)] == [("m0",), ("m1",)]


def test_a_failed_boundary_batch_parks_and_ends_the_boundary() -> None:
    view = DagView("s")
    _chain(view, "m", None, [10])
    planner = SessionPlanner(view, "m0", threshold=50)
    planner.on_boundary()
    batch = planner.next_batch(0.0)
    assert batch is not None
    assert batch.forced
    planner.on_failed(batch, retryable=False, now=0.0)
    assert not planner.busy()  # what flush() waits for is over: the failure is reported, not waited on


# -- the lifecycle, as the session machine decides it ----------------------------------------------------

IDLE = 100.0
FAILED = WriteFailure(ReasonCode.IO_ERROR, "EIO", retryable=True)  # retried, never waited out
LOST = WriteFailure(ReasonCode.IO_ERROR, "EIO", retryable=False)


@dataclass(frozen=True)
class Decided:
    """What the machine decided after an event: the batch it starts, the callers it answers, the timer,
    whether it retires."""

    start: Batch | None = None
    answer: tuple[str, ...] = ()
    timer: float | None = None
    retire: bool = False


def _decided(actions: list[m.Action[str]]) -> Decided:
    started = [a.batch for a in actions if isinstance(a, m.SendBatch)]
    return Decided(
        started[0] if started else None,
        tuple(a.waiter for a in actions if isinstance(a, m.Reply)),
        next((a.at for a in actions if isinstance(a, m.ArmTimer)), None),
        any(isinstance(a, m.Retire) for a in actions),
    )


def _life(
    tokens: list[int] | None = None, carry: Carryover[str] | None = None, **kw: bool
) -> SessionMachine[str]:
    """A machine over a one-branch session of these record tokens (threshold 50), started at t=0."""
    view = DagView("s")
    tip = _chain(view, "m", None, tokens or [])
    planner = SessionPlanner(view, tip, threshold=50, max_attempts=2, backoff=lambda n: 5.0)
    return SessionMachine(
        "s", planner, carry or Carryover(), workspace_id="ws", idle_after=IDLE, now=0.0, **kw
    )


def _on(life: SessionMachine[str], event: m.Event[str], now: float, queued: int = 0) -> Decided:
    return _decided(life.receive(event, now, queued=queued))


def _answer(life: SessionMachine[str], now: float, queued: int = 0) -> Decided:
    """The writer's answer for the batch in flight: written."""
    assert life.planner is not None
    batch = life.planner.inflight
    assert batch is not None
    return _on(life, m.BatchWritten(batch, batch.node_ids, "tx", 0), now, queued)


def _idle(life: SessionMachine[str], now: float) -> bool:
    """The timer fires at `now`: did it begin the idle boundary?"""
    return any(
        isinstance(a, m.Emit) and a.kind == "idle" for a in life.receive(m.TimerFired(), now, queued=0)
    )


def test_a_session_goes_idle_after_idle_after_without_activity_and_then_retires() -> None:
    life = _life([10])
    assert life.idle_armed  # revived from disk with nodes: it ends after idle_after too
    assert _decided(life.start(0.0)) == Decided(timer=IDLE)
    assert _on(life, m.Refused(40.0), 40.0).timer == 40.0 + IDLE  # activity, even a refused call
    assert not _idle(life, 139.9)
    actions = life.receive(m.TimerFired(), 140.0, queued=0)  # the idle boundary begins
    assert [a.kind for a in actions if isinstance(a, m.Emit)] == ["idle"]
    assert (life.ending, life.idle_armed) == (True, False)
    decided = _decided(actions)
    assert decided.start is not None
    assert decided.start.forced
    assert not decided.retire
    assert decided.timer is None  # its answer is the next event
    assert not _idle(life, 500.0)
    assert not _answer(life, 141.0, queued=1).retire  # a message waits: it is handled first
    assert _on(life, m.TimerFired(), 141.0).retire


def test_an_empty_new_session_is_not_idle_until_its_first_activity() -> None:
    life = _life()
    assert not life.idle_armed
    assert _decided(life.start(0.0)).timer is None
    assert not _idle(life, 1e6)
    assert _on(life, m.Refused(5.0), 5.0).timer == 5.0 + IDLE


def test_end_answers_the_caller_when_nothing_is_owed_then_retires() -> None:
    life = _life([30, 30, 30])
    decided = _on(life, m.EndAsked("caller"), 1.0)
    assert (life.carry.ended, life.carry.boundary, life.ending) == (True, True, True)
    assert decided.start is not None
    assert decided.start.node_ids == ("m0", "m1")
    assert decided.answer == ()
    assert not decided.retire
    decided = _answer(life, 2.0)
    assert decided.start is not None
    assert decided.start.node_ids == ("m2",)
    assert decided.answer == ()
    decided = _answer(life, 3.0)
    assert (decided.start, decided.answer, decided.retire) == (None, ("caller",), True)
    assert life.carry.boundary is False
    assert life.carry.waiters == []


def test_a_flush_answers_once_nothing_is_due_and_does_not_retire() -> None:
    life = _life([10])
    decided = _on(life, m.FlushAsked("early"), 0.0)
    assert (decided.answer, decided.retire) == (("early",), False)  # 10 tokens: owed, not due
    decided = _on(life, m.FlushAsked("forced", force=True), 1.0)
    assert decided.start is not None
    assert decided.answer == ()
    decided = _answer(life, 2.0)
    assert (decided.answer, decided.retire) == (("forced",), False)  # not ended: it stays live


def test_a_session_started_only_to_be_flushed_retires_once_done() -> None:
    life = _life([10], retire_when_done=True)
    decided = _on(life, m.FlushAsked("flush", force=True), 0.0)
    assert decided.start is not None
    assert not decided.retire
    decided = _answer(life, 1.0)
    assert (decided.answer, decided.retire) == (("flush",), True)


def test_a_restart_mid_boundary_carries_on_and_answers_only_when_done() -> None:
    carry: Carryover[str] = Carryover()
    life = _life([10, 10], carry)
    assert _on(life, m.EndAsked("caller"), 0.0).start is not None
    # The actor crashed with the batch in flight; its successor rebuilds from disk (nothing marked).
    life = _life([10, 10], carry)
    assert life.ending  # it was ended
    decided = _decided(life.start(1.0))
    assert decided.start is not None
    assert decided.start.forced
    assert decided.answer == ()
    decided = _answer(life, 2.0)
    assert (decided.answer, decided.retire) == (("caller",), True)


def test_the_timer_is_the_earliest_of_idle_and_the_planners_deadlines() -> None:
    life = _life([60])  # due at once
    decided = _decided(life.start(0.0))
    assert decided.start is not None
    assert decided.timer == IDLE
    assert life.planner is not None
    assert _on(life, m.BatchFailed(decided.start, FAILED, 0), 1.0).timer == 6.0  # the retry comes before idle
    decided = _on(life, m.TimerFired(), 6.0)
    assert decided.start is not None
    assert _on(life, m.BatchFailed(decided.start, FAILED, 0), 7.0).timer == IDLE  # max_attempts: parked
    assert life.planner.parked


def test_a_parked_session_answers_its_waiters_but_does_not_retire_while_it_owes() -> None:
    life = _life([10])
    decided = _on(life, m.EndAsked("caller"), 0.0)
    assert decided.start is not None
    decided = _on(life, m.BatchFailed(decided.start, LOST, 0), 1.0)
    assert (decided.answer, decided.retire) == (("caller",), False)


def test_an_invalid_session_answers_at_once_and_retires_when_ended() -> None:
    life: SessionMachine[str] = SessionMachine(
        "s", None, Carryover(), workspace_id="ws", idle_after=IDLE, now=0.0
    )
    assert not _idle(life, 1e6)
    decided = _on(life, m.FlushAsked("flush", force=True), 0.0)
    assert decided == Decided(answer=("flush",))
    assert _on(life, m.EndAsked("end"), 0.0) == Decided(answer=("end",), retire=True)
