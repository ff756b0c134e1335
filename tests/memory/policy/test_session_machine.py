"""The session machine without an event loop: events in, actions out (DESIGN §3, §5). Every decision the
session actor performs is the machine's: which node is a record, when a branch is due, the abandon timer,
the wait-out of a full disk, the boundary's order, what status() may read."""

from __future__ import annotations

from dagmem.memory.format import MARKER_KEY, Node, Role, count_tokens
from dagmem.memory.outcomes import ReasonCode, WriteFailure
from dagmem.memory.policy import Batch, Carryover, DagView, SessionMachine, SessionPlanner
from dagmem.memory.policy import machine as m

TEXT = "the quick brown fox jumps over the lazy dog " * 5
TOKENS = count_tokens(TEXT)
THRESHOLD = TOKENS + 1  # one turn stays under it, two reach it
ABANDON = 60.0
IDLE = 1000.0
WS = "ws-1"


def _machine(gen: int = 1) -> SessionMachine[str]:
    planner = SessionPlanner(
        DagView("s"), None, threshold=THRESHOLD, abandon_after=ABANDON, max_attempts=2, backoff=lambda n: 4.0
    )
    return SessionMachine(
        "s", planner, Carryover(), workspace_id=WS, idle_after=IDLE, now=0.0, generation=gen
    )


def _node(
    node_id: str,
    predecessor: str | None,
    role: Role = Role.USER,
    text: str = TEXT,
    meta: dict[str, object] | None = None,
) -> Node:
    return Node(
        id=node_id,
        seq=0,
        role=role,
        content=text,
        predecessor=predecessor,
        created_at=0.0,
        metadata=meta or {},
    )


def _turn(machine: SessionMachine[str], node: Node, now: float = 0.0) -> list[m.Action[str]]:
    """An append that moved the head to the new node."""
    return machine.receive(m.NodeAdded(node, node.id, now), now, queued=0)


def _sent(actions: list[m.Action[str]]) -> list[Batch]:
    return [a.batch for a in actions if isinstance(a, m.SendBatch)]


def _timers(actions: list[m.Action[str]]) -> list[m.ArmTimer | m.CancelTimer]:
    return [a for a in actions if isinstance(a, m.ArmTimer | m.CancelTimer)]


def _emitted(actions: list[m.Action[str]]) -> list[str]:
    return [a.kind for a in actions if isinstance(a, m.Emit)]


def _published(actions: list[m.Action[str]]) -> list[int]:
    return [a.snapshot.pending_records for a in actions if isinstance(a, m.Publish)]


def test_a_turn_under_the_threshold_sends_no_batch_and_one_over_it_sends_the_branch() -> None:
    machine = _machine()
    machine.start(0.0)
    first = _turn(machine, _node("a", None))
    assert _sent(first) == []
    assert _emitted(first) == ["turn", "head"]
    assert _published(first) == [1]  # owed, not yet due
    second = _turn(machine, _node("b", "a"), 1.0)
    (batch,) = _sent(second)
    assert (batch.node_ids, batch.tokens, batch.forced) == (("a", "b"), 2 * TOKENS, False)


def test_which_node_is_a_record_is_the_machines_decision() -> None:
    machine = _machine()
    # Counted as records, any two of these would reach the threshold.
    for i, (node, record) in enumerate(
        [
            (_node("t", None, Role.TOOL), False),  # a tool row
            (_node("r", "t", meta={"display": "runtime"}), False),  # a runtime-scheduled turn
            (_node("w", "r", meta={MARKER_KEY: WS}), True),  # a record this workspace marked already
            (_node("v", "w", text="   "), False),  # blank
        ]
    ):
        actions = _turn(machine, node, float(i))
        assert _sent(actions) == []
        turns = [a.fields for a in actions if isinstance(a, m.Emit) and a.kind == "turn"]
        assert turns == [{"session": "s", "node": node.id, "predecessor": node.predecessor, "record": record}]
    assert machine.snapshot().pending_records == 0
    # The same node again (a retried append the store did nothing for): no turn, nothing changes.
    assert _emitted(_turn(machine, _node("w", "r"), 5.0)) == []


def test_a_head_move_off_a_branch_arms_the_abandon_timer_and_the_timer_forces_its_batch() -> None:
    machine = _machine()
    _turn(machine, _node("a", None))
    _turn(machine, _node("x", None), 10.0)  # a new root: the head leaves branch a (under the threshold)
    moved = machine.receive(m.HeadMoved("a", 11.0), 11.0, queued=0)  # back to a: x is abandoned now
    assert _emitted(moved) == ["head"]
    assert _timers(moved) == [m.ArmTimer(11.0 + ABANDON)]
    assert _sent(machine.receive(m.TimerFired(), 11.0 + ABANDON - 1, queued=0)) == []
    fired = machine.receive(m.TimerFired(), 11.0 + ABANDON, queued=0)
    (batch,) = _sent(fired)
    assert (batch.node_ids, batch.target, batch.forced) == (("x",), "x", True)
    assert _timers(fired) == [m.ArmTimer(11.0 + IDLE)]  # only the idle deadline is left


def _inflight(machine: SessionMachine[str]) -> Batch:
    _turn(machine, _node("a", None))
    (batch,) = _sent(_turn(machine, _node("b", "a"), 1.0))
    return batch


def test_a_full_disk_is_waited_out_never_parked() -> None:
    machine = _machine()
    batch = _inflight(machine)
    for attempt in range(5):  # far past max_attempts=2
        now = 10.0 * (attempt + 1)
        failure = WriteFailure(ReasonCode.DISK_FULL, "no space left on device")
        actions = machine.receive(m.BatchFailed(batch, failure, 1), now, queued=0)
        assert m.WaitOut(ReasonCode.DISK_FULL, 4.0) in actions
        assert _timers(actions) == [m.ArmTimer(now + 4.0)]
        (batch,) = _sent(machine.receive(m.TimerFired(), now + 4.0, queued=0))
    assert machine.planner is not None
    assert not machine.planner.parked


def test_another_retryable_failure_is_retried_then_parked_without_a_wait_out() -> None:
    machine = _machine()
    batch = _inflight(machine)
    failure = WriteFailure(ReasonCode.IO_ERROR, "EIO")
    actions = machine.receive(m.BatchFailed(batch, failure, 1), 5.0, queued=0)
    assert not any(isinstance(a, m.WaitOut) for a in actions)
    assert _timers(actions) == [m.ArmTimer(9.0)]
    (batch,) = _sent(machine.receive(m.TimerFired(), 9.0, queued=0))
    parked = machine.receive(m.BatchFailed(batch, failure, 1), 10.0, queued=0)
    assert _sent(parked) == []
    assert machine.planner is not None
    assert machine.planner.parked


def test_a_crashed_writer_is_a_retryable_failure_and_an_earlier_incarnations_answer_is_ignored() -> None:
    machine = _machine(gen=2)
    batch = _inflight(machine)
    stale = machine.receive(m.BatchWritten(batch, batch.node_ids, "tx-old", 1), 2.0, queued=0)
    assert _emitted(stale) == []
    assert machine.snapshot().pending_records == 2
    crashed = machine.receive(m.BatchCrashed(batch, "writer stopped", 2), 3.0, queued=0)
    assert [a.fields["code"] for a in crashed if isinstance(a, m.Emit)] == ["WRITER_CRASHED"]
    assert _timers(crashed) == [m.ArmTimer(7.0)]
    (batch,) = _sent(machine.receive(m.TimerFired(), 7.0, queued=0))
    written = machine.receive(m.BatchWritten(batch, batch.node_ids, "tx-1", 2), 8.0, queued=0)
    assert _emitted(written) == ["written"]
    assert _published(written) == [0]


def test_end_boundary_writes_the_head_branch_first_then_answers_and_retires() -> None:
    machine = _machine()
    _turn(machine, _node("a", None))
    _turn(machine, _node("h", None), 1.0)  # the head's branch, a new root; branch a is another tip
    ended = machine.receive(m.EndAsked("caller"), 2.0, queued=0)
    (first,) = _sent(ended)
    assert (first.node_ids, first.target, first.forced) == (("h",), "h", True)
    assert not any(isinstance(a, m.Reply) for a in ended)
    (second,) = _sent(machine.receive(m.BatchWritten(first, first.node_ids, "tx-1", 1), 3.0, queued=0))
    assert (second.node_ids, second.target) == (("a",), "a")
    done = machine.receive(m.BatchWritten(second, second.node_ids, "tx-2", 1), 4.0, queued=0)
    assert m.Reply("caller") in done
    assert isinstance(done[-1], m.Retire)
    assert _published(done) == [0]


def test_a_refused_call_is_activity_and_an_idle_session_boundary_writes_itself() -> None:
    machine = _machine()
    _turn(machine, _node("a", None))
    refused = machine.receive(m.Refused(500.0), 500.0, queued=0)
    assert _timers(refused) == [m.ArmTimer(500.0 + IDLE)]
    assert _sent(machine.receive(m.TimerFired(), 500.0 + IDLE - 1, queued=0)) == []
    idle = machine.receive(m.TimerFired(), 500.0 + IDLE, queued=0)
    assert _emitted(idle) == ["idle"]
    (batch,) = _sent(idle)
    assert batch.forced


def test_an_invalid_session_answers_its_waiters_at_once_and_publishes_nothing_owed() -> None:
    machine: SessionMachine[str] = SessionMachine(
        "s", None, Carryover(), workspace_id=WS, idle_after=IDLE, now=0.0
    )
    assert _published(machine.start(0.0)) == [0]
    actions = machine.receive(m.FlushAsked("caller", force=True), 1.0, queued=0)
    assert actions == [m.Reply("caller"), m.CancelTimer()]
