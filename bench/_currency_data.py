"""The seeded conversations `dagmem bench currency` measures: facts whose value changes, and the truth.

One `Workload` is one user's home: a few sessions in which the user states facts about themselves (where
they live, their job, diet, drink, car, allergies, numbers such as rent or weekly kilometres) and about
other people (distractors: "my brother Tom lives in Madrid"), then changes them: explicit updates ("I
moved to …", "I no longer …", "I switched to …"), new numbers for the same quantity, retractions ("scratch
that", "actually no"), an edited prompt (a fork at a user turn whose new prompt says another value), a
retry (a second assistant reply, after which the user says another value), a sub-agent side branch
(`spawned=True`) and a child session (`spawned_from`). English and Chinese, each sentence drawn from
several templates, so the data does not mirror one rule's cue list.

Every turn that states a value is recorded as a `Statement`; `Workload.truth(slot, reader)` says which
statement nodes are current for a reader and which are stale, from the DAG the generator built (no text):
a statement on a left alternative is invisible, except to a reader whose tip lies inside that alternative,
for whom the alternatives it did not take are invisible instead; the current value is the newest visible
statement's. Deterministic: the same seed and index give the same workload.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from . import _kit as kit

__all__ = ["Reader", "Slot", "Truth", "Turn", "Workload", "generate"]

Lang = Literal["en", "zh"]
Kind = Literal["update", "numeric", "retraction"]
Reader = tuple[str | None, str | None]  # (session, tip): (None, None) is nobody in particular


@dataclass(frozen=True)
class _Attribute:
    """One kind of fact: its values and the sentences that state, change and ask it, per language.
    First-person templates say "I"; third-person ones take `{who}` ("my brother Tom") and `{name}`."""

    name: str
    kind: Kind
    values: dict[Lang, tuple[str, ...]]
    first: dict[Lang, tuple[str, ...]]
    change: dict[Lang, tuple[str, ...]]
    ask: dict[Lang, tuple[str, ...]]
    later: dict[Lang, tuple[str, ...]] = field(default_factory=dict)  # values a change may give
    third: dict[Lang, tuple[str, ...]] = field(default_factory=dict)
    third_change: dict[Lang, tuple[str, ...]] = field(default_factory=dict)
    third_ask: dict[Lang, tuple[str, ...]] = field(default_factory=dict)
    numbers: tuple[int, int, int] | None = None  # numeric: (low, high, step)


_CITIES_EN = ("Paris", "Berlin", "Lisbon", "Kyoto", "Oslo", "Toronto", "Madrid", "Vienna", "Dublin",
              "Prague", "Seoul", "Austin", "Melbourne", "Zurich", "Athens", "Warsaw", "Porto", "Nairobi")  # fmt: skip
_CITIES_ZH = ("北京", "上海", "广州", "深圳", "成都", "杭州", "南京", "武汉", "西安", "重庆", "厦门", "苏州")

ATTRIBUTES: tuple[_Attribute, ...] = (
    _Attribute(
        "city",
        "update",
        values={"en": _CITIES_EN, "zh": _CITIES_ZH},
        first={
            "en": (
                "I live in {v}.",
                "I'm based in {v} these days.",
                "Home for me is {v}.",
                "I've been living in {v} for a few years.",
                "My flat is in {v}.",
            ),
            "zh": ("我住在{v}。", "我现在在{v}生活。", "我家在{v}。"),
        },
        change={
            "en": (
                "Update: I moved to {v} last month.",
                "I relocated to {v} in the spring.",
                "Big news, we just moved to {v}!",
                "I no longer live in {old}; I'm in {v} now.",
                "Since the move I live in {v}.",
                "I'm not in {old} any more, I live in {v}.",
                "As of this week my address is in {v}.",
                "We left {old} and settled in {v}.",
            ),
            "zh": (
                "我上个月搬到{v}了。",
                "我已经不住在{old}了，现在住在{v}。",
                "我们刚搬去{v}。",
                "离开{old}以后，我定居在{v}。",
            ),
        },
        ask={
            "en": (
                "where do I live?",
                "which city am I based in?",
                "what city is home for me?",
                "where is my flat?",
            ),
            "zh": ("我住在哪里？", "我现在在哪个城市生活？", "我家在哪儿？"),
        },
        third={"en": ("{Who} lives in {v}.", "{Who} has a place in {v}."), "zh": ("{who}住在{v}。",)},
        third_change={
            "en": ("{name} moved to {v} last year.", "{Who} relocated to {v}."),
            "zh": ("{who}搬到{v}了。",),
        },
        third_ask={"en": ("where does {who} live?", "which city is {name} in?"), "zh": ("{who}住在哪里？",)},
    ),
    _Attribute(
        "job",
        "update",
        values={
            "en": (
                "nurse",
                "teacher",
                "software engineer",
                "architect",
                "pharmacist",
                "journalist",
                "chef",
                "accountant",
                "lawyer",
                "electrician",
                "dentist",
                "translator",
                "librarian",
            ),
            "zh": ("护士", "老师", "工程师", "医生", "会计", "律师", "厨师", "记者", "设计师"),
        },
        first={
            "en": (
                "I work as a {v}.",
                "I'm a {v} by trade.",
                "For work I'm a {v} at a small firm.",
                "I have been a {v} for six years.",
            ),
            "zh": ("我是一名{v}。", "我的工作是{v}。"),
        },
        change={
            "en": (
                "I switched careers, I'm a {v} now.",
                "I quit being a {old} and now work as a {v}.",
                "New job: I started as a {v} this month.",
                "I changed jobs, these days I'm a {v}.",
                "No more {old} work for me; I'm a {v} instead.",
            ),
            "zh": ("我换工作了，现在是{v}。", "我不再当{old}了，改做{v}。"),
        },
        ask={
            "en": ("what do I do for a living?", "what is my job?", "what's my profession?"),
            "zh": ("我是做什么工作的？", "我的职业是什么？"),
        },
        third={"en": ("{Who} works as a {v}.",), "zh": ("{who}是{v}。",)},
        third_change={
            "en": ("{name} is a {v} now.", "{Who} retrained as a {v}."),
            "zh": ("{who}现在当{v}了。",),
        },
        third_ask={
            "en": ("what does {who} do for work?", "what is {name}'s job?"),
            "zh": ("{who}做什么工作？",),
        },
    ),
    _Attribute(
        "diet",
        "retraction",
        values={"en": ("vegetarian", "vegan"), "zh": ("素食者",)},
        later={"en": ("fish", "chicken", "meat", "everything"), "zh": ("鱼", "肉", "鸡肉")},
        first={
            "en": ("I am {v}.", "I'm {v}, just so you know.", "I've been {v} since college."),
            "zh": ("我是{v}。", "我吃素，是{v}。"),
        },
        change={
            "en": (
                "Sorry, scratch that: I am not {old}, I eat {v}.",
                "Actually no, I'm not {old}; I eat {v}.",
                "Correction: I'm not {old} after all, I do eat {v}.",
                "Forget what I said about being {old}, I eat {v}.",
            ),
            "zh": ("说错了，我不是{old}，我吃{v}。", "更正一下：我其实不吃素，我吃{v}。"),
        },
        ask={
            "en": ("am I vegetarian?", "what is my diet?", "do I eat meat or fish?", "what do I eat?"),
            "zh": ("我吃素吗？", "我的饮食习惯是什么？"),
        },
    ),
    _Attribute(
        "drink",
        "update",
        values={
            "en": ("black coffee", "green tea", "oat latte", "espresso", "rooibos", "matcha", "cold brew"),
            "zh": ("咖啡", "绿茶", "奶茶", "红茶", "豆浆"),
        },
        first={
            "en": (
                "My favourite drink is {v}.",
                "I always start the day with {v}.",
                "I prefer {v} in the morning.",
            ),
            "zh": ("我最喜欢喝{v}。", "我每天早上都喝{v}。"),
        },
        change={
            "en": (
                "I switched to {v}.",
                "These days I drink {v} instead.",
                "I gave up {old}; now it's {v}.",
                "My morning drink changed to {v}.",
            ),
            "zh": ("我改喝{v}了。", "我不喝{old}了，现在喝{v}。"),
        },
        ask={
            "en": (
                "what do I like to drink?",
                "what is my favourite drink?",
                "what do I drink in the morning?",
            ),
            "zh": ("我喜欢喝什么？", "我早上喝什么？"),
        },
        third={"en": ("{Who} only drinks {v}.",)},
        third_change={"en": ("{name} switched to {v}.",)},
        third_ask={"en": ("what does {who} drink?",)},
    ),
    _Attribute(
        "car",
        "update",
        values={
            "en": (
                "Volvo",
                "Tesla",
                "Toyota Corolla",
                "Honda Civic",
                "Skoda Octavia",
                "Fiat Panda",
                "Kia Niro",
            ),
            "zh": ("比亚迪", "特斯拉", "丰田", "大众", "蔚来"),
        },
        first={"en": ("I drive a {v}.", "My car is a {v}."), "zh": ("我开一辆{v}。", "我的车是{v}。")},
        change={
            "en": (
                "I sold the {old} and bought a {v}.",
                "I traded in my {old} for a {v}.",
                "Got a new car: a {v}.",
            ),
            "zh": ("我把{old}卖了，换了一辆{v}。", "我新买了一辆{v}。"),
        },
        ask={"en": ("what car do I drive?", "what is my car?"), "zh": ("我开什么车？",)},
        third={"en": ("{Who} drives a {v}.",), "zh": ("{who}开{v}。",)},
        third_change={"en": ("{name} bought a {v}.",), "zh": ("{who}换了一辆{v}。",)},
        third_ask={"en": ("what car does {who} drive?",), "zh": ("{who}开什么车？",)},
    ),
    _Attribute(
        "allergy",
        "retraction",
        values={
            "en": ("peanuts", "pollen", "cats", "penicillin", "shellfish"),
            "zh": ("花生", "花粉", "猫毛"),
        },
        later={"en": ("nothing",), "zh": ("没有",)},
        first={"en": ("I'm allergic to {v}.", "I am allergic to {v}, badly."), "zh": ("我对{v}过敏。",)},
        change={
            "en": (
                "Actually no, I'm not allergic to {old} after all; the test was negative.",
                "Scratch that about {old}, I have no allergies.",
            ),
            "zh": ("其实我对{old}不过敏，检查结果是阴性。",),
        },
        ask={"en": ("what am I allergic to?", "do I have any allergies?"), "zh": ("我对什么过敏？",)},
    ),
    _Attribute(
        "rent",
        "numeric",
        values={},
        numbers=(600, 2600, 10),
        first={
            "en": ("My rent is {v} euros a month.", "I pay {v} euros in rent."),
            "zh": ("我的房租是每月{v}元。",),
        },
        change={
            "en": (
                "My rent went up to {v} euros.",
                "The landlord raised it: {v} euros a month.",
                "Now I pay {v} euros for the flat.",
            ),
            "zh": ("房租涨到{v}元了。", "现在每月房租{v}元。"),
        },
        ask={"en": ("how much is my rent?", "what do I pay for the flat?"), "zh": ("我的房租多少钱？",)},
        third={"en": ("{Who} pays {v} euros rent.",)},
        third_change={"en": ("{name}'s rent is {v} euros now.",)},
        third_ask={"en": ("how much rent does {who} pay?",)},
    ),
    _Attribute(
        "running",
        "numeric",
        values={},
        numbers=(5, 90, 1),
        first={
            "en": ("I run {v} km a week.", "Each week I cover about {v} km running."),
            "zh": ("我每周跑步{v}公里。",),
        },
        change={
            "en": (
                "I'm up to {v} km a week now.",
                "These days I only manage {v} km a week.",
                "My weekly running is {v} km since the injury.",
            ),
            "zh": ("现在我每周跑{v}公里。",),
        },
        ask={
            "en": ("how far do I run each week?", "how many km do I run weekly?"),
            "zh": ("我每周跑多少公里？",),
        },
    ),
    _Attribute(
        "commute",
        "numeric",
        values={},
        numbers=(10, 95, 5),
        first={"en": ("My commute takes {v} minutes.",), "zh": ("我上班通勤要{v}分钟。",)},
        change={
            "en": ("Since the new office my commute is {v} minutes.", "The commute is {v} minutes now."),
            "zh": ("现在通勤只要{v}分钟。",),
        },
        ask={"en": ("how long is my commute?",), "zh": ("我通勤要多久？",)},
    ),
)

_PEOPLE = {
    "en": (("brother", "Tom"), ("sister", "Anna"), ("colleague", "Mei"), ("neighbour", "Omar"),
           ("friend", "Lucia"), ("cousin", "Raj")),
    "zh": (("哥哥", "小王"), ("同事", "小李"), ("邻居", "老张"), ("表妹", "小美")),
}  # fmt: skip

_AN = re.compile(r"\b([aA]) ([aeiouAEIOU])")

_SMALL_TALK = {
    "en": ("Can you suggest something quick for dinner tonight?", "What's a good book for a long flight?",
           "Help me write a short note to my landlord about the heating.", "Any tips for sleeping better?",
           "How do I keep basil alive on a windowsill?", "Give me three ideas for a rainy weekend.",
           "Explain compound interest in two sentences.", "What should I pack for a weekend hike?"),
    "zh": ("今晚吃什么好？", "推荐一本适合长途飞行看的书。", "怎样才能睡得更好？", "周末下雨可以做什么？"),
}  # fmt: skip
_ACK = {
    "en": ("Noted, thanks for telling me.", "Got it.", "Thanks, I'll keep that in mind.", "Understood."),
    "zh": ("好的，记下了。", "明白了。", "谢谢告知。"),
}


@dataclass(frozen=True)
class Slot:
    """One fact that has a current value: `subject` is "user" or a person's name."""

    key: str  # "user:city", "Tom:job"
    attribute: str
    kind: Kind
    first_person: bool
    lang: Lang
    questions: tuple[str, ...]


@dataclass(frozen=True)
class Turn:
    """One append, in order: explicit node id and predecessor, so the generator knows the DAG."""

    session: str
    node: str
    role: str
    text: str
    predecessor: str | None
    spawned: bool = False
    spawned_from: str | None = None
    states: tuple[tuple[str, str], ...] = ()  # (slot key, value) the turn states
    event: str = ""  # first / update / numeric / retraction / edited / retry / spawned / child


@dataclass(frozen=True)
class Truth:
    current: frozenset[tuple[str, str]]  # (session, node) stating the value current for the reader
    stale: frozenset[tuple[str, str]]  # every other statement of the slot
    event: str  # what made the current value: the event of its newest statement


@dataclass
class Workload:
    name: str
    turns: list[Turn] = field(default_factory=list)
    slots: dict[str, Slot] = field(default_factory=dict)
    probe: str = "probe"  # a session that states nothing: the "another session" reader
    # session -> its forks between alternatives: (the first node of each alternative, the one the head took)
    forks: dict[str, list[tuple[tuple[str, ...], int]]] = field(default_factory=dict)

    def sessions(self) -> list[str]:
        return list(dict.fromkeys(turn.session for turn in self.turns))

    def leaves(self, session: str) -> list[str]:
        nodes = [t for t in self.turns if t.session == session]
        parents = {t.predecessor for t in nodes}
        return [t.node for t in nodes if t.node not in parents]

    def path(self, session: str, tip: str) -> set[str]:
        """`tip` and its ancestors."""
        preds = {t.node: t.predecessor for t in self.turns if t.session == session}
        out: set[str] = set()
        node: str | None = tip
        while node is not None:
            out.add(node)
            node = preds[node]
        return out

    def hidden(self, session: str, node: str, reader: Reader) -> bool:
        """Whether the reader cannot see `node`: it lies in an alternative other than the reader's (the
        reader's own when its tip lies inside one of that fork's alternatives, else the head's)."""
        forks = self.forks.get(session, [])
        if not forks:
            return False
        where = self.path(session, node)
        sees = self.path(session, reader[1]) if reader[0] == session and reader[1] is not None else set()
        for starts, taken in forks:
            mine = next((i for i, start in enumerate(starts) if start in where), None)
            theirs = next((i for i, start in enumerate(starts) if start in sees), taken)
            if mine is not None and mine != theirs:
                return True
        return False

    def truth(self, slot: str, reader: Reader) -> Truth:
        said = [(t, v) for t in self.turns for k, v in t.states if k == slot]
        visible = [(t, v) for t, v in said if not self.hidden(t.session, t.node, reader)]
        newest_turn, value = visible[-1]
        current = {(t.session, t.node) for t, v in visible if v == value}
        stale = {(t.session, t.node) for t, _ in said} - current
        return Truth(frozenset(current), frozenset(stale), newest_turn.event)

    def readers(self, slot: str) -> list[Reader]:
        """Nobody in particular, another session (the probe), and each tip of each session stating it."""
        out: list[Reader] = [(None, None), (self.probe, None)]
        for session in dict.fromkeys(t.session for t in self.turns if any(k == slot for k, _ in t.states)):
            out.extend((session, leaf) for leaf in self.leaves(session))
        return out

    def reader_kind(self, reader: Reader) -> str:
        session, tip = reader
        if session is None or tip is None:
            return "nobody" if session is None else "another session"
        return "a left tip" if self.hidden(session, tip, (None, None)) else "a tip"


class _Builder:
    def __init__(self, rng: random.Random, workload: Workload) -> None:
        self.rng = rng
        self.w = workload
        self.count = 0

    def add(
        self,
        session: str,
        role: str,
        text: str,
        predecessor: str | None,
        *,
        spawned: bool = False,
        spawned_from: str | None = None,
        states: tuple[tuple[str, str], ...] = (),
        event: str = "",
    ) -> str:
        self.count += 1
        node = f"{session}-t{self.count}"
        self.w.turns.append(
            Turn(session, node, role, text, predecessor, spawned, spawned_from, states, event)
        )
        return node

    def reply(self, session: str, lang: Lang, predecessor: str, *, spawned: bool = False) -> str:
        if lang == "zh" or self.rng.random() < 0.5:
            text = self.rng.choice(_ACK[lang])
        else:  # a longer answer of chat filler: no first-person sentence, so never a core fact
            text = kit.topic_text(self.rng, self.rng.choice(kit.WORDS[40:80]), 1, numbers=False)
        return self.add(session, "assistant", text, predecessor, spawned=spawned)


class _Fact:
    """A slot being generated: its attribute, subject and the values said so far."""

    def __init__(
        self, rng: random.Random, attr: _Attribute, key: str, lang: Lang, who: tuple[str, str] | None
    ):
        self.attr, self.key, self.lang, self.who = attr, key, lang, who
        self.rng = rng
        self.said: list[str] = []

    def _value(self, later: bool) -> str:
        if self.attr.numbers is not None:
            low, high, step = self.attr.numbers
            choices = [str(n) for n in range(low, high + 1, step)]
        else:
            pool = self.attr.later if later and self.attr.later else self.attr.values
            choices = list(pool[self.lang])
        fresh = [c for c in choices if c not in self.said] or choices
        return self.rng.choice(fresh)

    def sentence(self, change: bool, old: str | None = None) -> tuple[str, str]:
        """(text, value) of a first statement or of a change, on from `old` (default: the newest value
        said)."""
        value = self._value(change)
        if old is None:
            old = self.said[-1] if self.said else value
        if self.who is None:
            templates = self.attr.change if change else self.attr.first
        else:
            templates = self.attr.third_change if change else self.attr.third
        rel, name = self.who or ("", "")
        who = f"my {rel} {name}" if self.lang == "en" else f"我{rel}{name}"
        text = self.rng.choice(templates[self.lang]).format(
            v=value, old=old, who=who, Who=who[:1].upper() + who[1:], name=name
        )
        if self.lang == "en":
            text = _AN.sub(r"\1n \2", text)
        return text, value


def _lower_first(text: str) -> str:
    return text if text.startswith(("I ", "I'")) else text[:1].lower() + text[1:]


def _ask(attr: _Attribute, lang: Lang, who: tuple[str, str] | None) -> tuple[str, ...]:
    if who is None:
        return attr.ask[lang]
    rel, name = who
    text = f"my {rel} {name}" if lang == "en" else f"我{rel}{name}"
    return tuple(q.format(who=text, name=name) for q in attr.third_ask[lang])


def generate(seed: int, index: int, sessions: int = 5) -> Workload:
    """The workload of home `index` under `seed`: `sessions` sessions (at least 3) of the user's facts and
    their changes, a probe session, a child session and the forks described in the module docstring."""
    rng = random.Random(f"currency:{seed}:{index}")
    w = Workload(f"home-{index}")
    b = _Builder(rng, w)
    sessions = max(3, sessions)
    facts: list[_Fact] = []
    for attr in rng.sample(ATTRIBUTES, rng.randint(5, 7)):
        facts.append(_Fact(rng, attr, f"user:{attr.name}", "zh" if rng.random() < 0.3 else "en", None))
    third = [a for a in ATTRIBUTES if a.third]
    for people in rng.sample(["en", "en", "zh"], 2):
        lang: Lang = "en" if people == "en" else "zh"
        person = rng.choice(_PEOPLE[lang])
        for attr in rng.sample([a for a in third if lang in a.third], 2):
            facts.append(_Fact(rng, attr, f"{person[1]}:{attr.name}", lang, person))
    for fact in facts:
        w.slots[fact.key] = Slot(fact.key, fact.attr.name, fact.attr.kind, fact.who is None, fact.lang,
                                 _ask(fact.attr, fact.lang, fact.who))  # fmt: skip

    # Which session states what: first statements early, changes later (some in the same session).
    plan: dict[int, list[tuple[_Fact, bool]]] = {i: [] for i in range(sessions)}
    for fact in facts:
        at = rng.randrange(max(1, sessions // 2))
        plan[at].append((fact, False))
        # A retraction is said once: there is nothing left to take back.
        for _ in range(rng.choice((0, 1)) if fact.attr.kind == "retraction" else rng.choice((0, 1, 1, 2))):
            at = rng.randrange(at, sessions)
            plan[at].append((fact, True))
    specials = {rng.randrange(1, sessions): "edited", rng.randrange(1, sessions): "retry"}
    if len(specials) == 1:  # both drew one session: the retry goes to the last
        specials[sessions - 1 if next(iter(specials)) != sessions - 1 else 1] = "retry"
    side_at = rng.randrange(sessions)
    parent: str | None = None

    def changeable() -> list[_Fact]:
        return [f for f in facts if f.who is None and f.attr.kind != "retraction" and f.said]

    for number in range(sessions):
        sid = f"s{number + 1}"
        tail: str | None = None
        steps = list(plan[number])
        rng.shuffle(steps)
        steps.sort(key=lambda step: step[1])  # a fact's first statement before its change
        while steps:
            fact, change = steps.pop(0)
            text, value = fact.sentence(change)
            fact.said.append(value)
            states = [(fact.key, value)]
            # Two first statements of the user may share one turn ("I live in Paris and I work as a nurse.").
            partner = next(
                (s for s in steps if not s[1] and s[0].who is None and s[0].lang == fact.lang), None
            )
            if not change and fact.who is None and partner is not None and rng.random() < 0.4:
                steps.remove(partner)
                more, other = partner[0].sentence(False)
                partner[0].said.append(other)
                glue = " and " if fact.lang == "en" else "，"
                text = text.rstrip(".。") + glue + (_lower_first(more) if fact.lang == "en" else more)
                states.append((partner[0].key, other))
            event = fact.attr.kind if change else "first"
            tail = b.add(sid, "user", text, tail, states=tuple(states), event=event)
            tail = b.reply(sid, fact.lang, tail)
            if rng.random() < 0.35:
                tail = b.add(sid, "user", rng.choice(_SMALL_TALK["en"]), tail)
                tail = b.reply(sid, "en", tail)
        if tail is None:
            tail = b.add(sid, "user", rng.choice(_SMALL_TALK["en"]), None)
            tail = b.reply(sid, "en", tail)
        special = specials.get(number)
        if special is not None and changeable():
            fact = rng.choice(changeable())
            if special == "edited":  # a user prompt, then that prompt edited to say another value
                before = fact.said[-1]  # the edit replaces the first prompt: both change this value
                first_text, first_value = fact.sentence(True)
                fact.said.append(first_value)
                u1 = b.add(sid, "user", first_text, tail, states=((fact.key, first_value),), event="edited")
                b.reply(sid, fact.lang, u1)
                text, value = fact.sentence(True, before)
                fact.said.append(value)
                u2 = b.add(sid, "user", text, tail, states=((fact.key, value),), event="edited")
                w.forks.setdefault(sid, []).append(((u1, u2), 1))
                tail = b.reply(sid, fact.lang, u2)
            else:  # a question and a reply the user retried; after each reply the user says a value
                ask = b.add(sid, "user", rng.choice(_SMALL_TALK[fact.lang]), tail)
                r1 = b.reply(sid, fact.lang, ask)
                before = fact.said[-1]
                first_text, first_value = fact.sentence(True)
                fact.said.append(first_value)
                b.add(sid, "user", first_text, r1, states=((fact.key, first_value),), event="retry")
                r2 = b.reply(sid, fact.lang, ask)
                text, value = fact.sentence(True, before)
                fact.said.append(value)
                tail = b.add(sid, "user", text, r2, states=((fact.key, value),), event="retry")
                w.forks.setdefault(sid, []).append(((r1, r2), 1))
                tail = b.reply(sid, fact.lang, tail)
        if (
            number == side_at and changeable()
        ):  # a sub-agent's side branch off a user turn: not an alternative
            # Off the turn before the last user prompt: its main child is a user turn too, so only
            # `spawned` tells the two apart.
            last = next(
                t for t in reversed(w.turns) if t.session == sid and t.role == "user" and not t.spawned
            )
            base = last.predecessor or last.node
            fact = rng.choice(changeable())
            text, value = fact.sentence(True)
            fact.said.append(value)
            side = b.add(sid, "user", text, base, spawned=True, states=((fact.key, value),), event="spawned")
            b.reply(sid, fact.lang, side, spawned=True)
        parent = parent or f"{sid}/{tail}"
    if changeable():  # a child session spawned from the first session's last turn, with a change of its own
        fact = rng.choice(changeable())
        text, value = fact.sentence(True)
        fact.said.append(value)
        kid = b.add(
            "kid", "user", text, None, spawned_from=parent, states=((fact.key, value),), event="child"
        )
        b.reply("kid", fact.lang, kid)
    probe = b.add(w.probe, "user", rng.choice(_SMALL_TALK["en"]), None)
    b.reply(w.probe, "en", probe)
    return w


def questions(workload: Workload, rng: random.Random) -> list[tuple[str, Reader, str]]:
    """(slot, reader, question) for every slot and each of its readers, the wording drawn from the slot's."""
    out: list[tuple[str, Reader, str]] = []
    for key, slot in workload.slots.items():
        if not any(k == key for t in workload.turns for k, _ in t.states):
            continue
        for reader in workload.readers(key):
            out.append((key, reader, rng.choice(slot.questions)))
    return out


def statement_nodes(workload: Workload) -> dict[tuple[str, str], Sequence[tuple[str, str]]]:
    """(session, node) -> the (slot, value) pairs it states."""
    return {(t.session, t.node): t.states for t in workload.turns if t.states}
