"""The table of facts (`_facts`), its words each language's data (`lang/<code>.py`, `FACTS`): a sentence is
about an attribute by a value of it it names or by a trigger, in every language; a neutral sentence is about
none; and every entry is written so that it can match a casefolded sentence."""

from __future__ import annotations

import pytest

from dagmem.memory.text._facts import ATTRIBUTES, attributes_of, single, value_words
from dagmem.memory.text._lexicon import Lexicon
from dagmem.memory.text._saying import _fold
from dagmem.memory.text.lang import de, en, es, fr, ja, zh

TABLES: dict[str, dict[str, Lexicon]] = {
    "en": en.FACTS,
    "de": de.FACTS,
    "es": es.FACTS,
    "fr": fr.FACTS,
    "zh": zh.FACTS,
    "ja": ja.FACTS,
}
NAMES = {a.name for a in ATTRIBUTES}


def _about(sentence: str) -> frozenset[str]:
    folded = _fold(sentence)
    return attributes_of(folded, spaced=not any("\u3040" <= c <= "\u9fff" for c in folded))


def _values_of(name: str) -> set[str]:
    return set(next(a for a in ATTRIBUTES if a.name == name).values)


# A sentence that names a value of an attribute and none of its triggers.
BY_VALUE = [
    ("en", "Honestly Korean is so much harder than I expected", "language"),
    ("en", "Still obsessed with bouldering lol", "hobby"),
    ("en", "Got a Toyota Corolla last week", "car"),
    ("en", "I'm pescatarian these days", "diet"),
    ("en", "oat milk flat white every morning", "drink"),
    ("en", "I'm a data analyst", "job"),
    ("en", "we adopted a corgi!", "pet"),
    ("en", "I do everything in Obsidian now", "tool"),
    ("en", "navy, always navy", "favourite"),
    ("en", "finally finished my computer science degree", "study"),
    ("de", "Ich bin jetzt Vegetarierin", "diet"),
    ("de", "Japanisch ist echt schwer", "language"),
    ("de", "Ich bin Projektmanagerin bei einer Agentur", "job"),
    ("de", "Seit Januar gehe ich zum Töpfern", "hobby"),
    ("de", "Morgens gibt es bei mir nur noch Grüntee", "drink"),
    ("de", "Unser Dackel heißt Otto", "pet"),
    ("es", "Ahora soy vegana", "diet"),
    ("es", "El alemán me está costando mucho", "language"),
    ("es", "Soy cajera en un supermercado", "job"),
    ("es", "Los martes hago cerámica", "hobby"),
    ("es", "Por las mañanas tomo té verde", "drink"),
    ("es", "Tenemos un gato y un conejo", "pet"),
    ("fr", "Je suis végétarienne depuis un an", "diet"),
    ("fr", "J'apprends l'italien", "language"),
    ("fr", "Je suis infirmière à Lyon", "job"),
    ("fr", "Le mardi c'est poterie", "hobby"),
    ("fr", "Je suis passée au thé vert", "drink"),
    ("fr", "Ma couleur, c'est le bleu marine", "favourite"),
    ("zh", "最近在学韩语", "language"),
    ("zh", "早上一杯冰美式", "drink"),
    ("zh", "我养了一只柯基", "pet"),
    ("zh", "新买了一辆比亚迪", "car"),
    ("zh", "我是护士", "job"),
    ("zh", "周末去攀岩", "hobby"),
    ("ja", "最近ドイツ語を始めた", "language"),
    ("ja", "朝は抹茶ラテ", "drink"),
    ("ja", "プリウスに乗ってる", "car"),
    ("ja", "看護師です", "job"),
    ("ja", "週末はボルダリング", "hobby"),
    ("ja", "うちのハムスターが可愛い", "pet"),
]


@pytest.mark.parametrize(("lang", "sentence", "name"), BY_VALUE)
def test_a_sentence_naming_a_value_is_about_its_attribute(lang: str, sentence: str, name: str) -> None:
    named = value_words(_fold(sentence))
    assert named & _values_of(name), (lang, sentence)
    assert name in _about(sentence)


# A sentence that says which attribute it is about by a trigger.
BY_TRIGGER = [
    ("en", "I relocated to Glasgow in the spring", "residence"),
    ("en", "I'm back in Manchester now", "residence"),
    ("en", "I handed in my notice on Friday", "job"),
    ("en", "I started at a new company in March", "employer"),
    ("en", "my rent just went up again", "money"),
    ("en", "booked the dentist for Tuesday", "appointment"),
    ("en", "my boyfriend and I broke up", "partner"),
    ("en", "the new number is on my profile", "phone"),
    ("en", "flying to Lisbon for a long weekend", "trip"),
    ("en", "my new car has heated seats", "car"),
    ("de", "Ich wohne jetzt in Köln", "residence"),
    ("de", "Meine Miete ist gestiegen", "money"),
    ("de", "Ich habe einen Termin beim Zahnarzt", "appointment"),
    ("de", "Ich arbeite bei einer kleinen Firma", "employer"),
    ("de", "Wir fahren im August in den Urlaub", "trip"),
    ("de", "Meine Lieblingsfarbe ist Grün", "favourite"),
    ("es", "Me mudé a Valencia", "residence"),
    ("es", "El alquiler me sube en enero", "money"),
    ("es", "Tengo cita con el dentista el jueves", "appointment"),
    ("es", "Mi novio se llama Pablo", "partner"),
    ("es", "Este verano nos vamos de vacaciones a Grecia", "trip"),
    ("es", "Estoy haciendo un máster en Madrid", "study"),
    ("fr", "J'habite à Nantes maintenant", "residence"),
    ("fr", "Mon loyer a augmenté", "money"),
    ("fr", "J'ai rendez-vous chez le dentiste", "appointment"),
    ("fr", "Je travaille chez Airbus", "employer"),
    ("fr", "On part en voyage au Japon", "trip"),
    ("fr", "Ma voiture est en panne", "car"),
    ("zh", "我住在上海", "residence"),
    ("zh", "房租又涨了", "money"),
    ("zh", "我下周二约了牙医", "appointment"),
    ("zh", "我跳槽到一家新公司", "employer"),
    ("zh", "十月去日本旅游", "trip"),
    ("zh", "我最喜欢的颜色是绿色", "favourite"),
    ("ja", "大阪に住んでいます", "residence"),
    ("ja", "家賃が上がった", "money"),
    ("ja", "歯医者の予約をした", "appointment"),
    ("ja", "転職しました", "job"),
    ("ja", "来月、沖縄に旅行します", "trip"),
    ("ja", "彼氏と別れた", "partner"),
]


@pytest.mark.parametrize(("lang", "sentence", "name"), BY_TRIGGER)
def test_a_sentence_with_a_trigger_is_about_its_attribute(lang: str, sentence: str, name: str) -> None:
    assert name in _about(sentence), (lang, sentence)


@pytest.mark.parametrize(
    ("sentence", "form"),
    [
        ("Soy vegetariana desde hace años", "vegetariana"),
        ("Mi hermano es vegetariano", "vegetariano"),
        ("Je suis végétarienne", "végétarienne"),
        ("Il est végétarien", "végétarien"),
        ("Ich bin Vegetarierin", "vegetarierin"),
        ("Er ist Vegetarier", "vegetarier"),
        ("Trabajo de enfermera", "enfermera"),
        ("Trabajo de cajero", "cajero"),
        ("Je suis devenue infirmière", "infirmière"),
        ("Ich bin Lehrerin", "lehrerin"),
        ("Ich bin Projektmanagerin", "projektmanagerin"),
        ("Soy auxiliar administrativa", "auxiliar administrativa"),
    ],
)
def test_value_words_find_the_gendered_forms(sentence: str, form: str) -> None:
    assert form in value_words(_fold(sentence))


# Sentences about none of a person's facts, or only about the one named.
NEUTRAL = [
    ("en", "The weather is nice today.", set()),
    ("en", "Can you help me write an email to my boss?", {"email"}),
    ("en", "Of course, that makes sense.", set()),
    ("en", "What does this error mean?", set()),
    ("en", "Let's chat tomorrow about the plan.", set()),
    ("en", "My career goals are a bit fuzzy right now.", {"job"}),
    ("en", "I noticed the team moved the meeting.", {"appointment"}),
    ("de", "Das Wetter ist heute schön.", set()),
    ("de", "Kannst du mir den Text kürzer machen?", set()),
    ("de", "Das lohnt sich wirklich.", set()),
    ("es", "Hace buen tiempo hoy.", set()),
    ("es", "¿Puedes resumir este artículo?", set()),
    ("es", "Vino a verme ayer por la tarde.", set()),
    ("fr", "Il fait beau aujourd'hui.", set()),
    ("fr", "Tu peux corriger ce paragraphe ?", set()),
    ("fr", "Bien sûr, on en parle demain.", set()),
    ("zh", "今天天气很好。", set()),
    ("zh", "你能帮我总结一下这篇文章吗？", set()),
    ("ja", "今日はいい天気ですね。", set()),
    ("ja", "この文章を要約してください。", set()),
]


@pytest.mark.parametrize(("lang", "sentence", "expected"), NEUTRAL)
def test_a_neutral_sentence_is_about_no_fact(lang: str, sentence: str, expected: set[str]) -> None:
    assert set(_about(sentence)) == expected, (lang, sentence)


@pytest.mark.parametrize(
    ("sentence", "about", "not_about"),
    [
        ("We hired a new person for the team", "job", "drink"),  # "tea" is no value of "team"
        ("I'm thinking about a career change", "job", "car"),  # "car" is no trigger of "career"
        ("I relocated last year", "residence", "job"),  # a trigger matches at a word's start
        ("green tea after lunch", "drink", "favourite"),  # the longest value: a drink, not a colour
        ("I keep my notes in google drive", "tool", "car"),  # a trigger inside a value counts for nothing
        ("my mother-in-law is visiting", None, "study"),  # "law" is no value inside "in-law"
        ("Of course I'll be there", None, "study"),  # an ignored phrase: "course" of "of course"
        ("我现在喝咖啡色的杯子", "favourite", None),  # "咖啡色" a colour
    ],
)
def test_how_entries_match(sentence: str, about: str | None, not_about: str | None) -> None:
    found = _about(sentence)
    assert about is None or about in found
    assert not_about is None or not_about not in found


def test_value_words_keep_the_longest_of_overlapping_values() -> None:
    assert value_words(_fold("a green tea latte")) == {"green tea", "latte"}
    assert value_words(_fold("我最喜欢咖啡色")) == {"咖啡色"}


def test_every_language_names_only_attributes_of_the_table_and_speaks_of_each() -> None:
    for lang, table in TABLES.items():
        assert set(table) <= NAMES, lang
        assert {name for name, lexicon in table.items() if lexicon.triggers} == NAMES, lang


def test_every_entry_is_a_casefolded_word_or_phrase_without_surrounding_space() -> None:
    for lang, table in TABLES.items():
        for name, lexicon in table.items():
            for entry in (*lexicon.triggers, *lexicon.values, *lexicon.ignore):
                assert entry, (lang, name)
                assert entry == entry.strip(), (lang, name, entry)
                assert "  " not in entry, (lang, name, entry)
                assert _fold(entry) == entry, (lang, name, entry)


def test_the_table_merges_every_language_and_keeps_how_values_behave() -> None:
    merged = {a.name: a for a in ATTRIBUTES}
    for table in TABLES.values():
        for name, lexicon in table.items():
            assert set(lexicon.triggers) <= set(merged[name].triggers)
            assert set(lexicon.values) <= set(merged[name].values)
    assert [a.name for a in ATTRIBUTES if not a.single] == ["pet", "language", "hobby"]
    assert single("email")
    assert single("residence")
    assert not single("pet")
    assert not single("unknown")
