"""The simulator's workload: seeded, realistic shapes of branching sessions, as timed scripts (DESIGN §6).

Pure: no I/O, no clock, no event loop. Session `i` of seed `s` draws every choice from its own
`random.Random` seeded with `(s, i)`, so adding sessions never changes the ones already there, and a
script is rebuilt bit for bit whenever it is asked for (the runner plans each session when it starts,
so a run of 10,000 sessions never holds 10,000 scripts).

A session is a run of exchanges (a user turn, sometimes tool turns, an assistant answer) with gaps drawn
from a mixture: bursts of a fraction of a second, ordinary pauses, long pauses, and silences longer than
the runtime's idle timeout (the session goes idle, is boundary-written, then revives). Between exchanges
the host sometimes retries the last answer (a sibling of the last assistant turn), edits an old question
(a fork at an old user turn), spawns a sub-agent side branch, moves the head to another branch and maybe
back, or rewinds the last turns. Some sessions end explicitly, a few are resumed after their end, the
rest never end. Every time is a continuous random draw, so no two events of a run share an instant
(trio breaks deadline ties by object identity, which differs between processes).

The planner mirrors the store's head rule (every append moves the head to the new node, a fork's too,
except a `spawned` one: a sub-agent's side branch leaves it where it was) so that every step it emits is
valid; text is only specified here (a length and a seed) and rendered by
`content`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Literal

from ..memory.format import ancestors
from ..memory.settings import DEFAULTS

__all__ = [
    "AT_HEAD",
    "Outline",
    "SessionScript",
    "Step",
    "WorkloadParams",
    "outline",
    "plan_session",
    "session_id",
]

AT_HEAD = "@head"  # an append's predecessor: the session's head (not a valid node id, so never ambiguous)

Op = Literal["append", "head", "rewind", "end"]


@dataclass(frozen=True, slots=True)
class Step:
    at: float  # virtual seconds since the start of the run
    op: Op
    node: str = ""  # append: the new node's id; head / rewind: the target
    role: str = ""
    parent: str | None = AT_HEAD  # append: AT_HEAD, a node id, or None (a new root)
    tokens: int = 0  # append: how long its text should be (content renders it)
    text: int = 0  # append: the seed of its text
    display: str | None = None  # append: metadata.display ("runtime" turns are not records)
    spawned: bool = False  # append: a side branch's turn (the head stays where it was)


@dataclass(frozen=True, slots=True)
class SessionScript:
    index: int
    session: str
    kind: str
    start: float
    flavor: int  # seeds the session's subjects in synthetic text, or its dialogue in LoCoMo text
    steps: tuple[Step, ...]

    @property
    def appends(self) -> int:
        return sum(1 for step in self.steps if step.op == "append")


@dataclass(frozen=True)
class WorkloadParams:
    horizon: float = 8 * 3600.0  # sessions start within the first `horizon` virtual seconds
    idle_after: float = DEFAULTS.idle_after  # the runtime's idle timeout: some silences are longer on purpose
    end_rate: float = 0.5  # sessions the host ends explicitly
    resume_rate: float = 0.1  # ended sessions that get more turns later
    # kind -> (weight, fewest exchanges, most exchanges)
    kinds: dict[str, tuple[float, int, int]] = field(
        default_factory=lambda: {
            "chat": (0.72, 1, 10),
            "agent": (0.22, 2, 16),
            "trunk": (0.055, 25, 120),
            "marathon": (0.005, 200, 600),
        }
    )


def session_id(index: int) -> str:
    return f"s{index:05d}"


def _rng(seed: int, index: int, salt: str = "plan") -> random.Random:
    # A string seed is hashed with SHA-512 by `random`: the same in every process, unlike `hash()`.
    return random.Random(f"dagmem-sim:{salt}:{seed}:{index}")


class _Planner:
    """Builds one session's steps while keeping the store's view of it: nodes, tips, head, rewinds."""

    def __init__(self, rng: random.Random, params: WorkloadParams, start: float) -> None:
        self.rng = rng
        self.params = params
        self.now = start
        self.steps: list[Step] = []
        self.parent: dict[str, str | None] = {}
        self.role: dict[str, str] = {}
        self.tips: dict[str, None] = {}  # insertion-ordered: deterministic choices
        self.rewound: set[str] = set()
        self.head: str | None = None
        self.count = 0

    # -- time ------------------------------------------------------------------------------------------

    def wait(self, low: float, high: float) -> None:
        self.now += self.rng.uniform(low, high)

    def pause(self, burst: bool) -> None:
        """The silence before a user turn."""
        if burst:
            self.wait(0.05, 2.0)
            return
        roll = self.rng.random()
        if roll < 0.78:
            self.wait(3.0, 120.0)
        elif roll < 0.95:
            self.wait(180.0, 1200.0)  # a long pause, shorter than the idle timeout
        else:
            idle = self.params.idle_after
            self.wait(idle * 1.05, idle * 3.0)  # the session goes idle, then revives

    # -- the store's head rule -----------------------------------------------------------------------

    def append(
        self,
        role: str,
        parent: str | None = AT_HEAD,
        *,
        tokens: int,
        display: str | None = None,
        spawned: bool = False,
    ) -> str:
        self.count += 1
        node = f"m{self.count}"
        actual = self.head if parent == AT_HEAD else parent
        self.parent[node] = actual
        self.role[node] = role
        if actual is not None:
            self.tips.pop(actual, None)
        self.tips[node] = None
        if not spawned:
            self.head = node
        self.steps.append(
            Step(self.now, "append", node, role, parent, tokens, self.rng.getrandbits(32), display, spawned)
        )
        return node

    def set_head(self, node: str | None) -> None:
        if node is None or node == self.head:
            return
        self.head = node
        self.steps.append(Step(self.now, "head", node))

    def head_path(self) -> list[str]:
        return [] if self.head is None else ancestors(self.parent, self.head)[::-1]

    def rewind(self, node: str) -> None:
        path = self.head_path()
        self.rewound.update(path[path.index(node) :])
        self.head = self.parent[node]
        self.steps.append(Step(self.now, "rewind", node))

    # -- text lengths ------------------------------------------------------------------------------------

    def tokens(self, role: str) -> int:
        rng = self.rng
        if role == "user":
            if rng.random() < 0.01:
                return rng.randint(2000, 4000)  # a pasted document: a batch by itself
            return max(3, int(rng.lognormvariate(math.log(28), 0.7)))
        if role == "assistant":
            return max(5, int(rng.lognormvariate(math.log(90), 0.6)))
        return max(5, int(rng.lognormvariate(math.log(60), 0.8)))

    # -- shapes ------------------------------------------------------------------------------------------

    def exchange(self, *, agent: bool) -> None:
        rng = self.rng
        display = "runtime" if rng.random() < 0.02 else None  # a runtime-scheduled prompt: not a record
        self.append("user", tokens=self.tokens("user"), display=display)
        if agent:
            for _ in range(rng.choice((0, 0, 1, 2, 3))):
                self.wait(0.2, 8.0)
                self.append("tool", tokens=self.tokens("tool"))
        if rng.random() < 0.01:
            self.append("system", tokens=12)
        self.wait(0.5, 25.0)
        self.append("assistant", tokens=self.tokens("assistant"))

    def retry(self) -> None:
        """Regenerate the last answer: a sibling of the last assistant turn, which becomes the head."""
        head = self.head
        if head is None or self.role[head] != "assistant":
            return
        self.wait(1.0, 30.0)
        old = head
        new = self.append("assistant", self.parent[head], tokens=self.tokens("assistant"))  # now the head
        if self.rng.random() < 0.3:  # the user flips back to the first answer, maybe again
            self.wait(2.0, 90.0)
            self.set_head(old)
            if self.rng.random() < 0.5:
                self.wait(2.0, 90.0)
                self.set_head(new)

    def edit(self) -> None:
        """Edit an old question: a new user turn forked where that question was asked."""
        users = [n for n in self.head_path()[:-2] if self.role[n] == "user"]
        if not users:
            return
        old = self.rng.choice(users)
        self.wait(5.0, 120.0)
        self.append("user", self.parent[old], tokens=self.tokens("user"))  # the head moves to it
        self.wait(0.5, 25.0)
        self.append("assistant", tokens=self.tokens("assistant"))

    def spawn(self) -> None:
        """A sub-agent works on its own side branch, forked at the question that asked for it; its turns
        are appended `spawned`, so the head stays where it was."""
        head = self.head
        if head is None:
            return
        fork = self.parent[head] if self.role[head] == "assistant" else head
        tip: str | None = fork
        for i in range(self.rng.randint(2, 12)):
            self.wait(0.1, 6.0)
            role = ("user", "tool", "assistant")[i % 3]
            tip = self.append(role, tip, tokens=self.tokens(role), spawned=True)

    def wander(self) -> None:
        """Look at another branch: stay there, or come back within a minute (the abandonment is forgiven)."""
        others = [t for t in self.tips if t != self.head and t not in self.rewound]
        if not others:
            return
        back = self.head
        self.wait(1.0, 40.0)
        self.set_head(self.rng.choice(others))
        if self.rng.random() < 0.5:
            self.wait(1.0, 55.0)
            self.set_head(back)

    def undo(self) -> None:
        path = self.head_path()
        if len(path) < 3:
            return
        self.wait(1.0, 20.0)
        self.rewind(path[-self.rng.randint(1, min(4, len(path) - 1))])

    def end(self) -> None:
        self.wait(1.0, 30.0)
        self.steps.append(Step(self.now, "end"))


@dataclass(frozen=True, slots=True)
class Outline:
    """A session's first draws: when it starts, its kind and how many exchanges it plans (cheap)."""

    index: int
    start: float
    kind: str
    exchanges: int


def _outline(rng: random.Random, index: int, params: WorkloadParams) -> Outline:
    start = rng.uniform(0.0, params.horizon)
    kinds = list(params.kinds)
    kind = rng.choices(kinds, weights=[params.kinds[k][0] for k in kinds])[0]
    _weight, low, high = params.kinds[kind]
    return Outline(index, start, kind, rng.randint(low, high))


def outline(seed: int, index: int, params: WorkloadParams | None = None) -> Outline:
    """The outline of `plan_session(seed, index)`, without planning its steps."""
    return _outline(_rng(seed, index), index, params or WorkloadParams())


def plan_session(seed: int, index: int, params: WorkloadParams | None = None) -> SessionScript:
    """The script of session `index` of run `seed` (the same every time it is asked for)."""
    params = params or WorkloadParams()
    rng = _rng(seed, index)
    head = _outline(rng, index, params)
    start, kind, exchanges = head.start, head.kind, head.exchanges
    flavor = rng.getrandbits(32)
    agent = kind == "agent"
    plan = _Planner(rng, params, start)
    # Per exchange: retry, edit, spawn, wander, rewind.
    odds = (0.06, 0.035, 0.12 if agent else 0.015, 0.03, 0.02)
    burst = 0
    ended = False
    for n in range(exchanges):
        if n:
            if burst == 0 and rng.random() < 0.05:
                burst = rng.randint(3, 10)
            plan.pause(burst > 0)
            burst = max(0, burst - 1)
        plan.exchange(agent=agent)
        roll = rng.random()
        for chance, action in zip(
            odds, (plan.retry, plan.edit, plan.spawn, plan.wander, plan.undo), strict=True
        ):
            if roll < chance:
                action()
                break
            roll -= chance
        if n == exchanges - 1 and rng.random() < params.end_rate:
            plan.end()
            ended = True
    if ended and rng.random() < params.resume_rate:
        plan.wait(60.0, 1500.0)
        for _ in range(rng.randint(1, 4)):
            plan.exchange(agent=agent)
            plan.pause(False)
        if rng.random() < 0.5:
            plan.end()
    return SessionScript(index, session_id(index), kind, start, flavor, tuple(plan.steps))
