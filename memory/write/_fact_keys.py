"""Fact keys: which fact a user's sentence is about, so a newer value can be found in any topic file.

A key names a subject and an attribute, never a value: `"user/residence"` for "I live in Paris" and for
"We left Paris and settled in Lisbon"; `"maya/residence"` for "My sister Maya lives in Porto" and for
"Maya moved to Lisbon". `keys_of(text)` reads every sentence the user states as true now (no question,
hypothetical, plan or report: `_supersede.usable`) and gives, per key, whether the sentence carries a change
cue and which numbers it says. English and Chinese; deterministic regular expressions.

The subject is the person named ("my brother Tom", "Tom …", "我哥哥小王", "小王…"), else the user when the
sentence is in the first person ("I", "my", "we", "我"); a sentence about nobody has no key. The attributes
are the kinds of fact a person's situation changes in (where they live, their job and employer, diet,
drink, car, allergies, partner) and quantities that take a new number (rent, salary, commute,
distance run, weight, age, savings, budget).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final

from ._slots import clauses, sentences, strip_lead

__all__ = ["NUMERIC_ATTRIBUTES", "VALUE_WORDS", "KeyFact", "keys_of"]

_RELATIONS_EN: Final = (
    "brother|sister|mother|mom|mum|father|dad|son|daughter|wife|husband|partner|girlfriend|boyfriend|"
    "friend|best friend|colleague|coworker|co-worker|boss|manager|neighbour|neighbor|cousin|uncle|aunt|"
    "niece|nephew|grandma|grandmother|grandpa|grandfather|roommate|flatmate|classmate|teammate|fiancée|"
    "fiancee|fiancé|fiance|stepbrother|stepsister|dog|cat|puppy|kitten|parrot|rabbit|horse"
)
_RELATIONS_ZH: Final = (
    "哥哥|姐姐|妹妹|弟弟|妈妈|爸爸|母亲|父亲|儿子|女儿|妻子|丈夫|老婆|老公|男朋友|女朋友|朋友|同事|老板|"
    "邻居|表哥|表姐|表妹|表弟|堂哥|堂姐|堂妹|堂弟|叔叔|阿姨|舅舅|室友|同学"
)
_NAMED_EN: Final = re.compile(r"\b(?i:my)\s+(?:" + _RELATIONS_EN + r")\s+(?P<n>[A-Z][a-z]+)\b")
_NAMED_ZH: Final = re.compile(
    r"我的?(?:" + _RELATIONS_ZH + r")(?P<n>(?:小|老|阿)[\u3400-\u9fff]|[\u3400-\u9fff]{2})"
)
_RELATED_EN: Final = re.compile(
    r"\b(?i:my|our)\s+(?P<r>" + _RELATIONS_EN + r")\b(?!['’]s\s+(?:place|house|flat))", re.I
)
_RELATED_ZH: Final = re.compile(r"我的?(?P<r>" + _RELATIONS_ZH + r")")
_NAME_START_EN: Final = re.compile(
    r"^(?P<n>[A-Z][a-z]+)(?:['’]s\b|\s+(?:lives|moved|relocated|is|works|worked|drives|bought|has|had|"
    r"only|pays|switched|retrained|quit|left|started|got|now|just|still|changed|became|drinks|eats)\b)"
)
_NOT_NAMES: Final = frozenset(
    """i my we our the a an this that it he she they there here his her their your you what when where
    why how who which since as after before today yesterday tomorrow now then also and but so big new
    update correction sorry actually home for each these those no yes got monday tuesday wednesday
    thursday friday saturday sunday""".split()
)
_NAME_START_ZH: Final = re.compile(r"^(?P<n>(?:小|老|阿)[\u3400-\u9fff])")
_OPENING_NAME: Final = re.compile(r"^(?P<n>[A-Z][\w'’-]*)")
_FIRST_EN: Final = re.compile(r"\b(?:I|I['’](?:m|ve|d|ll)|my|we|we['’](?:re|ve)|our|me)\b", re.I)
_THIRD_PRONOUN_EN: Final = re.compile(r"^(?:he|she|they|his|her|their)\b", re.I)

_PROFESSIONS: Final = (
    "nurse|doctor|physician|surgeon|dentist|teacher|professor|lecturer|engineer|developer|programmer|"
    "designer|architect|lawyer|attorney|accountant|chef|cook|baker|waiter|waitress|barista|pilot|"
    "mechanic|electrician|plumber|carpenter|farmer|journalist|writer|editor|artist|musician|actor|"
    "photographer|scientist|researcher|analyst|consultant|pharmacist|therapist|psychologist|"
    "veterinarian|firefighter|police officer|paramedic|librarian|translator|secretary|receptionist|"
    "banker|entrepreneur|freelancer|data scientist|product manager|project manager|social worker|"
    "hairdresser|tutor|realtor|dietitian|midwife|optician|welder|cashier|clerk"
)
_ZH_PROF: Final = (
    "护士|医生|大夫|老师|教师|教授|工程师|程序员|设计师|律师|会计|厨师|司机|记者|警察|作家|演员|经理|"
    "销售|研究员|科学家|翻译|秘书|画家|摄影师|飞行员|建筑师|药剂师|兽医|消防员|公务员|服务员|咖啡师|编辑"
)
_CAR_BRANDS: Final = (
    "volvo|tesla|toyota|honda|skoda|fiat|kia|bmw|audi|mercedes|ford|nissan|mazda|subaru|hyundai|renault|"
    "peugeot|volkswagen|vw|porsche|jeep|chevrolet|chevy|lexus|mini|opel|citroen|seat|polestar|rivian"
)
# attribute -> what a sentence about it says (matched anywhere in the sentence, casefolded for English)
_ATTRIBUTES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (name, re.compile(pattern, re.I))
    for name, pattern in (
        (
            "residence",
            r"\b(?:lives?|living|lived|reside[sd]?|based in|home (?:for (?:me|us|him|her) )?is|my home|"
            r"(?:flat|apartment|house|address|place) is in|has a place in|moved (?:back )?(?:to|from|away)|"
            r"relocated|settled in|left \w+ and|not in \w+ any ?more)\b|(?<![记忍抓挡])住|搬|定居|家在|在\S{1,8}生活",
        ),
        (
            "job",
            r"\b(?:work(?:s|ed|ing)? as|job|profession|career|careers|by trade|retrained|started as|"
            r"quit being|(?:"
            + _PROFESSIONS
            + r")s?)\b|工作是|职业|转行|改做|当(?![然时地初中])|(?:"
            + _ZH_PROF
            + r")",
        ),
        (
            "employer",
            r"\b(?:work(?:s|ed|ing)? (?:at|for)|joined|employer|company i work)\b|在\S{1,10}(?:上班|工作)",
        ),
        (
            "diet",
            r"\b(?:vegetarian|vegan|pescatarian|pescetarian|eat (?:meat|fish|chicken|everything))\b|吃素|素食",
        ),
        (
            "drink",
            r"\b(?:drinks?|drinking|coffee|tea|latte|espresso|matcha|rooibos|cold brew|cappuccino)\b|喝",
        ),
        ("car", r"\b(?:drives?|driving|car|(?:" + _CAR_BRANDS + r"))\b|车|比亚迪|特斯拉|丰田|大众|蔚来"),
        ("allergy", r"\ballerg(?:y|ies|ic)\b|过敏"),
        (
            "partner",
            r"\b(?:wife|husband|girlfriend|boyfriend|fiancée?|fiancé|spouse|dating)\b|老婆|老公|男朋友|女朋友",
        ),
        (
            "rent",
            r"\b(?:rent|landlord|pay \S+ (?:\w+ )?(?:for|on) the (?:flat|apartment|place|house))\b|房租",
        ),
        ("salary", r"\b(?:salary|earn|earns|paid|pay rise|income)\b|工资|薪水|月薪|年薪"),
        ("commute", r"\bcommute\b|通勤"),
        (
            "distance",
            r"\b(?:km|kilometres|kilometers|miles)\b.*\b(?:week|weekly|day|daily|month)\b|\brun(?:ning)?\b|跑步|公里",
        ),
        ("weight", r"\b(?:weigh|weighs|weight|kg|kilos|pounds|lbs)\b|体重|公斤"),
        ("age", r"\b(?:years old|turned \d+|my age|birthday)\b|岁"),
        ("savings", r"\b(?:savings|saved up)\b|存款"),
        ("budget", r"\bbudget\b|预算"),
    )
)
NUMERIC_ATTRIBUTES: Final = frozenset(
    {"rent", "salary", "commute", "distance", "weight", "age", "savings", "budget"}
)
_NUMBER: Final = re.compile(r"\d+(?:[.,]\d+)*")
# Change cues beyond `_supersede`'s: how people say a situation changed without "now" or "moved".
_CHANGE: Final = re.compile(
    r"\b(?:since the move|settled in|traded in|sold (?:the|my)|got a new|new car|new job|retrained|"
    r"forget what i said|no more|went up|go(?:es|ne)? up|raised|is up to|i['’]m up to|dropped to|"
    r"only manage|since the|after all|left \w+ and|(?:bought|purchased|got) (?:a|an|my) new|"
    r"bought (?:a|an) \w+|replaced|new (?:position|role))\b|涨到|降到|换了|换成|改喝|改做|以后|新买|买了新",
    re.I,
)


_SAME: Final = re.compile(
    r"\b(?:also|too|as well|still|another|additionally|in addition)\b|还是|也|仍然|依然", re.I
)
# Words that are a value of some attribute (a job, a diet, a drink, a car): what `_across` compares.
VALUE_WORDS: Final = re.compile(
    r"\b(?:" + _PROFESSIONS + r"|vegetarian|vegan|pescatarian|coffee|tea|latte|espresso|matcha|rooibos|"
    r"cold brew|" + _CAR_BRANDS + r")\b|" + _ZH_PROF,
    re.I,
)


@dataclass(frozen=True)
class KeyFact:
    """What one text says of one key: whether some sentence of it about the key carries a change cue,
    and the numbers the sentences about it say."""

    key: str  # "<subject>/<attribute>", subject "user" or a casefolded name
    cue: bool
    numbers: frozenset[str]


def _subject(sentence: str) -> str | None:
    named = _NAMED_EN.search(sentence) or _NAMED_ZH.search(sentence)
    if named is not None:
        return named["n"].casefold()
    related = _RELATED_EN.search(sentence) or _RELATED_ZH.search(sentence)
    if related is not None:  # "my sister no longer lives in Paris": the sister's fact, not the user's
        return related["r"].casefold()
    bare = strip_lead(sentence)
    start = _NAME_START_EN.match(bare)
    if start is not None and start["n"].casefold() not in _NOT_NAMES:
        return start["n"].casefold()
    start_zh = _NAME_START_ZH.match(bare)
    if start_zh is not None:
        return start_zh["n"]
    if _THIRD_PRONOUN_EN.match(bare):
        return None  # "She moved to Rome": whose, the sentence alone does not say
    if _FIRST_EN.search(bare) or "我" in bare:
        return "user"
    # No one named: the user speaking of their own things ("Got a new car: a Tesla.", "The landlord
    # raised it", "现在通勤只要55分钟"), unless it opens with a name of something else ("Tesla raised prices").
    opening = _OPENING_NAME.match(bare)
    if opening is not None and opening["n"].casefold() not in _NOT_NAMES:
        return None
    return "user"


@functools.lru_cache(maxsize=4096)
def keys_of(text: str) -> tuple[KeyFact, ...]:
    """The keys the user's `text` states something about, each once (sorted by key)."""
    from ._supersede import cue_of, cue_only, usable  # _supersede imports this module

    found: dict[str, tuple[bool, set[str]]] = {}
    carried = False  # "Scratch that." lends its cue to the next sentence
    for sentence in sentences(text):
        if not usable(sentence):
            carried = False
            continue
        cue = carried or cue_of(sentence) is not None or _CHANGE.search(sentence) is not None
        if _SAME.search(sentence):  # "I now also like tea", "I am still vegetarian": no change of value
            cue = False
        parts = clauses(sentence)
        subject_of_sentence = _subject(sentence)
        said_any = False
        for part in parts:
            subject = _subject(part) if len(parts) > 1 else subject_of_sentence
            subject = subject or subject_of_sentence
            if subject is None:
                continue
            numbers = set(_NUMBER.findall(part))
            for attribute, pattern in _ATTRIBUTES:
                if attribute in NUMERIC_ATTRIBUTES and not numbers:
                    continue
                if pattern.search(part) is None:
                    continue
                said_any = True
                had_cue, had_numbers = found.get(f"{subject}/{attribute}", (False, set()))
                found[f"{subject}/{attribute}"] = (had_cue or cue, had_numbers | numbers)
        carried = not said_any and cue_only(sentence)
    return tuple(KeyFact(k, c, frozenset(n)) for k, (c, n) in sorted(found.items()))
