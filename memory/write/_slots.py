"""The first-person slots of the core, English and Chinese: what a user's sentence says about the user.

A slot is one fact about the user that has a value: where they live, their job, name, diet, age, partner,
pets, what they like. `facts_of(clause)` reads the slot statements of one clause (a sentence, or a part of
one joined by "and I"): `Fact("residence", "paris", negated=False)` for "I live in Paris". Deterministic
regular expressions, no model: a clause that is not in the first person (after the interjections a user
starts with) states no slot, so "my friend moved to Berlin" says nothing about the user.

Single-valued slots (a person lives in one place) can be updated by a new value; multi-valued ones (pets,
likes) only by a negation of the same value ("I no longer have a dog"), since "I now like tea" may add to
"I like coffee" as well as replace it. `NUMERIC` slots change with a new number alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["MULTI_VALUED", "NUMERIC", "READ_CHARS", "Fact", "clauses", "facts_of", "sentences", "strip_lead"]


@dataclass(frozen=True)
class Fact:
    slot: (
        str  # "residence", "job", "employer", "name", "diet", "age", "status", "partner", "pet", "likes", ...
    )
    value: str  # normalised: casefolded, articles and trailing time words dropped ("" when none)
    negated: bool = False


MULTI_VALUED: Final = frozenset({"pet", "likes", "language", "hobby"})
NUMERIC: Final = frozenset({"age", "children"})

# Interjections and cue phrases a statement may open with; dropped before the clause is read.
_LEAD: Final = re.compile(
    r"^(?:(?:actually|also|and|anyway|btw|by the way|fyi|oh|ok|okay|so|well|sorry|update|correction|"
    r"scratch that|wait|no|hmm|quick update|small correction|just to correct|to correct myself|"
    r"i was wrong|i misspoke|let me correct that|my mistake|news|heads up|one more thing|"
    r"oops|ah|hey|hi|hello|yes|yeah|so anyway|as of (?:today|now|this week|this month))\b[\s,:;.!—–-]*)+",
    re.I,
)
_ZH_LEAD: Final = re.compile(
    r"^(?:(?:其实|实际上|更正一下|更正|纠正一下|纠正|不好意思|抱歉|对不起|说错了|我说错了|刚才说错了|"
    r"我之前说错了|我错了|更新一下|更新|补充一下|另外|还有|对了|哦|嗯|好吧|那个|不对|告诉你|跟你说)"
    r"[\s，,:：;；。!！—-]*)+"
)

_EN_VALUE_END: Final = (
    r"(?=\s*(?:$|[,.;:!?—–()]|\s(?:and|but|since|last|this|next|for|with|because|now|recently|"
    r"already|anymore|any more|again|ago|instead|today|yesterday|these|nowadays|at the moment|"
    r"though|too|as well|either|from|in \d{4}|though)\b))"
)
_V: Final = r"(?P<v>[^\s,.;:!?()][^,.;:!?()]*?)" + _EN_VALUE_END
_NOW: Final = r"(?:(?:now|currently|actually|still|also|really|just|finally|recently|officially)\s+)*"
_AM: Final = r"(?:i['’]?m|i am)\s+" + _NOW
_NOT_AM: Final = r"(?:i['’]?m|i am)\s+(?:not|no longer)\s+(?:a\s+|an\s+)?" + _NOW
_DONT: Final = r"i\s+(?:don['’]?t|do not|no longer|never)\s+" + _NOW

_PROFESSIONS: Final = (
    "nurse|doctor|physician|surgeon|dentist|teacher|professor|lecturer|student|engineer|developer|"
    "programmer|designer|architect|lawyer|attorney|accountant|chef|cook|baker|waiter|waitress|barista|"
    "pilot|driver|mechanic|electrician|plumber|carpenter|farmer|journalist|writer|author|editor|artist|"
    "musician|actor|actress|photographer|scientist|researcher|analyst|consultant|manager|salesman|"
    "salesperson|cashier|clerk|pharmacist|therapist|psychologist|veterinarian|vet|firefighter|"
    "police officer|cop|soldier|paramedic|librarian|translator|secretary|receptionist|banker|"
    "entrepreneur|freelancer|data scientist|software engineer|product manager|project manager|"
    "nurse practitioner|social worker|hairdresser|tailor|retiree|intern|tutor|coach|trainer|"
    "plumber|welder|janitor|cleaner|guard|realtor|real estate agent|dietitian|midwife|optician"
)
_DIETS: Final = "vegetarian|vegan|pescatarian|pescetarian|omnivore|carnivore|flexitarian|keto|gluten-free"
_PARTNERS: Final = "wife|husband|partner|girlfriend|boyfriend|fiancée|fiancee|fiancé|fiance|spouse"
_PETS: Final = "dog|cat|puppy|kitten|parrot|rabbit|hamster|horse|goldfish|turtle|snake|bird|guinea pig"
_STATUS: Final = "married|single|divorced|engaged|widowed|separated"
_NUM_WORDS: Final = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10",
}  # fmt: skip

# (slot, negated, pattern): matched at the clause's start (EN, casefolded) or anywhere after "我" (ZH).
_EN: Final[list[tuple[str, bool, re.Pattern[str]]]] = [
    (s, n, re.compile(p, re.I))
    for s, n, p in [
        ("residence", True, _DONT + r"live\s+in\s+" + _V),
        ("residence", True, r"i\s+(?:moved|moved away|left)\s+(?:away\s+)?from\s+" + _V),
        ("residence", False, r"i\s+" + _NOW + r"(?:live|reside|stay)\s+in\s+" + _V),
        (
            "residence",
            False,
            r"i(?:['’]ve|\s+have)?\s+" + _NOW + r"(?:moved|relocated)\s+(?:back\s+)?to\s+" + _V,
        ),
        ("residence", False, _AM + r"(?:based|living)\s+in\s+" + _V),
        ("residence", False, r"my\s+(?:home|address)\s+is\s+(?:now\s+)?(?:in\s+)?" + _V),
        ("name", False, r"my\s+name\s+is\s+(?:now\s+)?" + _V),
        ("name", False, r"(?:please\s+)?call\s+me\s+" + _V),
        ("name", False, r"(?:i['’]?m|i am)\s+called\s+" + _V),
        ("name", False, r"i\s+go\s+by\s+" + _V),
        ("job", True, _NOT_AM + r"(?P<v>" + _PROFESSIONS + r")\b"),
        ("job", True, r"i\s+(?:quit|left)\s+my\s+job\s+as\s+(?:a\s+|an\s+)?" + _V),
        ("job", True, _DONT + r"work\s+as\s+(?:a\s+|an\s+)?" + _V),
        ("job", False, r"i\s+" + _NOW + r"work\s+as\s+(?:a\s+|an\s+)?" + _V),
        ("job", False, _AM + r"working\s+as\s+(?:a\s+|an\s+)?" + _V),
        ("job", False, r"my\s+(?:job|profession|occupation)\s+is\s+(?:now\s+)?(?:a\s+|an\s+)?" + _V),
        ("job", False, r"i(?:['’]ve|\s+have)?\s+" + _NOW + r"became\s+(?:a\s+|an\s+)" + _V),
        ("job", False, r"i\s+got\s+a\s+(?:new\s+)?job\s+as\s+(?:a\s+|an\s+)?" + _V),
        ("job", False, _AM + r"(?:a|an)\s+(?P<v>(?:\w+\s+)?(?:" + _PROFESSIONS + r"))\b"),
        ("employer", True, _DONT + r"work\s+(?:at|for)\s+" + _V),
        ("employer", True, r"i\s+(?:quit|left)\s+(?:my\s+job\s+at\s+)?" + _V),
        ("employer", False, r"i\s+" + _NOW + r"work\s+(?:at|for)\s+" + _V),
        ("employer", False, _AM + r"working\s+(?:at|for)\s+" + _V),
        ("employer", False, r"i\s+" + _NOW + r"(?:joined|started\s+(?:a\s+new\s+job\s+)?at)\s+" + _V),
        ("diet", True, _NOT_AM + r"(?P<v>" + _DIETS + r")\b"),
        ("diet", False, _AM + r"(?:a\s+)?(?P<v>" + _DIETS + r")\b"),
        ("diet", False, r"i\s+(?:went|turned|became|have\s+gone|['’]ve\s+gone)\s+(?P<v>" + _DIETS + r")\b"),
        ("eats", True, _DONT + r"eat\s+" + _V),
        ("eats", True, r"i\s+(?:stopped|quit|gave\s+up)\s+eating\s+" + _V),
        ("eats", False, r"i\s+" + _NOW + r"(?:eat|started\s+eating)\s+" + _V),
        (
            "age",
            False,
            _AM + r"(?P<v>\d{1,3})(?:\s+years?\s+old)?\b(?!\s*(?:%|kg|km|lb|cm|minutes|hours|days))",
        ),
        ("age", False, r"i\s+(?:just\s+)?turned\s+(?P<v>\d{1,3})\b"),
        ("status", True, _NOT_AM + r"(?P<v>" + _STATUS + r")\b"),
        ("status", False, _AM + r"(?P<v>" + _STATUS + r")\b"),
        ("status", False, r"i\s+(?:just\s+)?got\s+(?P<v>married|divorced|engaged)\b"),
        (
            "partner",
            False,
            r"my\s+(?:" + _PARTNERS + r")(?:['’]s\s+name)?\s+is\s+(?:called\s+|named\s+)?" + _V,
        ),
        ("pet", True, _DONT + r"(?:have|own)\s+(?:a|an|any)\s+(?P<v>" + _PETS + r")s?\b"),
        (
            "pet",
            False,
            r"i\s+" + _NOW + r"(?:have|own|got|adopted)\s+(?:a|an|\w+)\s+(?P<v>" + _PETS + r")s?\b",
        ),
        ("likes", True, _DONT + r"(?:like|love|enjoy)\s+" + _V),
        ("likes", True, r"i\s+" + _NOW + r"(?:hate|dislike|can['’]?t stand|cannot stand)\s+" + _V),
        ("likes", False, r"i\s+" + _NOW + r"(?:like|love|enjoy|adore)\s+" + _V),
        ("prefers", False, r"i\s+" + _NOW + r"prefer\s+" + _V),
        ("language", False, r"i\s+" + _NOW + r"speak\s+" + _V),
        (
            "children",
            False,
            r"i\s+" + _NOW + r"have\s+(?P<v>\d+|one|two|three|four|five|six)\s+(?:kids|children)\b",
        ),
    ]
]

_ZH_V: Final = r"(?P<v>[^\s，,。.；;！!？?、了的呢吧啊]{1,12}?)(?=了|的|呢|啊|吧|$|[，,。.；;！!？?、]|工作|上班|生活|住)"
_ZH_NOW: Final = r"(?:现在|目前|如今|已经|最近|刚刚|刚|也|还|其实|又|正式|上个月|上周|去年|今年|前几天|昨天|前不久|年初|月初)*"
_ZH_PROF: Final = (
    "护士|医生|大夫|老师|教师|教授|学生|工程师|程序员|设计师|律师|会计|厨师|司机|记者|警察|作家|演员|"
    "经理|销售|研究员|科学家|翻译|秘书|农民|画家|摄影师|飞行员|建筑师|药剂师|心理咨询师|兽医|消防员|"
    "公务员|售货员|服务员|咖啡师|编辑|主播|模特|软件工程师|产品经理|数据科学家|自由职业者"
)
_ZH: Final[list[tuple[str, bool, re.Pattern[str]]]] = [
    (s, n, re.compile(p))
    for s, n, p in [
        ("residence", True, r"^我" + _ZH_NOW + r"(?:不再|不|没)住在" + _ZH_V),
        ("residence", True, r"^我" + _ZH_NOW + r"(?:搬离|离开)了?" + _ZH_V),
        ("residence", False, r"^我" + _ZH_NOW + r"(?:住在|住|定居在|定居)" + _ZH_V),
        ("residence", False, r"^我" + _ZH_NOW + r"(?:搬到|搬去|搬回|迁到)了?" + _ZH_V),
        ("residence", False, r"^我" + _ZH_NOW + r"在" + _ZH_V + r"(?:住|生活)"),
        ("residence", False, r"^我家" + _ZH_NOW + r"在" + _ZH_V),
        ("name", False, r"^我" + _ZH_NOW + r"(?:叫|名叫)" + _ZH_V),
        ("name", False, r"^我的名字" + _ZH_NOW + r"(?:是|叫)" + _ZH_V),
        (
            "job",
            True,
            r"^我" + _ZH_NOW + r"(?:不再是|不是|不当|不做)(?:一名|一个|一位)?(?P<v>" + _ZH_PROF + r")",
        ),
        (
            "job",
            False,
            r"^我" + _ZH_NOW + r"(?:是|当|做|成为了|成了|改行当|转行做|在当)了?(?:一名|一个|一位|个|名)?"
            r"(?P<v>" + _ZH_PROF + r")",
        ),
        ("job", False, r"^我的(?:工作|职业)" + _ZH_NOW + r"是(?:一名|一个)?" + _ZH_V),
        ("employer", False, r"^我" + _ZH_NOW + r"在" + _ZH_V + r"(?:工作|上班)"),
        (
            "diet",
            True,
            r"^我" + _ZH_NOW + r"(?:不再|不是|不)(?:是)?(?:一个|一名)?(?P<v>素食者|素食主义者|吃素|纯素食者)",
        ),
        (
            "diet",
            False,
            r"^我" + _ZH_NOW + r"(?:是|开始)?(?:一个|一名)?(?P<v>素食者|素食主义者|吃素|纯素食者)",
        ),
        ("age", False, r"^我" + _ZH_NOW + r"(?:今年)?(?P<v>\d{1,3})岁"),
        ("status", False, r"^我" + _ZH_NOW + r"(?P<v>结婚|离婚|单身|订婚)"),
        (
            "partner",
            False,
            r"^我(?:的)?(?:妻子|丈夫|老婆|老公|男朋友|女朋友|伴侣|爱人)" + _ZH_NOW + r"(?:叫|是)" + _ZH_V,
        ),
        ("pet", True, r"^我" + _ZH_NOW + r"(?:不再|没有|不)养" + _ZH_V),
        ("pet", False, r"^我" + _ZH_NOW + r"(?:养了|养|有)(?:一只|一条|一匹|只|条)" + _ZH_V),
        ("likes", True, r"^我" + _ZH_NOW + r"(?:不再|不|不太)(?:喜欢|爱)" + _ZH_V),
        ("likes", True, r"^我" + _ZH_NOW + r"(?:讨厌|受不了)" + _ZH_V),
        ("likes", False, r"^我" + _ZH_NOW + r"(?:很|非常|特别|超)?(?:喜欢|爱|热爱)" + _ZH_V),
        ("prefers", False, r"^我" + _ZH_NOW + r"(?:更喜欢|更爱|偏爱)" + _ZH_V),
        ("language", False, r"^我" + _ZH_NOW + r"(?:会说|说)" + _ZH_V),
        ("eats", True, r"^我" + _ZH_NOW + r"(?:(?:不再|不|不能)吃|戒了)" + _ZH_V),
        ("eats", False, r"^我" + _ZH_NOW + r"(?:吃|开始吃)" + _ZH_V),
    ]
]
_ZH_DIET: Final = {
    "素食者": "vegetarian",
    "素食主义者": "vegetarian",
    "吃素": "vegetarian",
    "纯素食者": "vegan",
}
_DIET_ALIASES: Final = {"pescetarian": "pescatarian"}
_ARTICLE: Final = re.compile(r"^(?:the|a|an|my|some)\s+", re.I)
_CJK: Final = re.compile(r"[\u3400-\u9fff]")
# "…, and I …", "… and each week I …" (the user again within three words), "…; …", "…, I …" (a capital I),
# 而且我, ，我
_CLAUSE_JOIN: Final = re.compile(
    r"\s*(?:;|(?i:,?\s+and\s+(?=(?:[\w'’-]+\s+){0,3}(?:i\b|i['’]m\b|my\b)))|,\s*(?=I\b|I['’]m\b)|；|"
    r"，?(?:而且|并且|同时)(?=我)|，(?=我))\s*"
)
_FIRST_PERSON: Final = re.compile(r"(?<![\w'’])I(?=\s|['’](?:m|ve)\b)")
_SENTENCE: Final = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
# A turn longer than this is a pasted document or log, not a statement: its rest is archived, cited,
# indexed and recalled, but read for no fact (reading each of the largest turn's million lines for facts
# took the writer about 40 s).
READ_CHARS: Final = 20_000


def strip_lead(text: str) -> str:
    """`text` without the interjections and cue phrases it opens with ("Sorry, scratch that: I am ...")."""
    previous = None
    while previous != text:
        previous = text
        text = _ZH_LEAD.sub("", _LEAD.sub("", text.strip())).strip()
    return text


def sentences(text: str) -> list[str]:
    """The sentences of `text` that are read for what the person says (facts, cues, first-person
    statements): those of its first `READ_CHARS` characters."""
    return [" ".join(m.group().split()) for m in _SENTENCE.finditer(text, 0, READ_CHARS) if m.group().strip()]


def clauses(sentence: str) -> list[str]:
    """A sentence's first-person parts: "I live in Paris and I work as a nurse." is two facts."""
    parts = [p.strip() for p in _CLAUSE_JOIN.split(sentence) if p and p.strip()]
    return parts or [sentence]


def _norm(slot: str, value: str) -> str:
    value = " ".join(_ARTICLE.sub("", value.strip().casefold()).split())
    value = value.rstrip(".!?,;:")
    if slot == "diet":
        value = _ZH_DIET.get(value, _DIET_ALIASES.get(value, value))
    if slot in NUMERIC:
        value = _NUM_WORDS.get(value, value)
    if slot == "name":
        value = value.split(" (", 1)[0]
    return value


def facts_of(clause: str) -> list[Fact]:
    """The slot statements of one clause (its lead interjections already stripped or not)."""
    text = strip_lead(clause)
    found: list[Fact] = []
    spans: list[tuple[int, int]] = []
    if _CJK.search(text):
        for slot, negated, pattern in _ZH:
            match = pattern.search(text)
            if match is None or any(a <= match.start() < b for a, b in spans):
                continue
            spans.append(match.span())
            found.append(Fact(slot, _norm(slot, match.group("v")), negated))
            if not negated or slot != "residence":
                break  # one statement per ZH clause, except "我不再住在巴黎" leading a new place
        return found
    # English: the clause's own start, and each later "I" ("I moved to Berlin, I no longer live in Paris";
    # "these days I am vegan"): a capital "I" standing alone is the user speaking.
    starts = [0] + [m.start() for m in _FIRST_PERSON.finditer(text) if m.start() > 0]
    for start in starts:
        for slot, negated, pattern in _EN:
            match = pattern.match(text, start)
            if match is None:
                continue
            value = _norm(slot, match.group("v"))
            if value:
                found.append(Fact(slot, value, negated))
            break
    return found
