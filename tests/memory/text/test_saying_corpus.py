"""One table of sentences, in six languages, run against the text layer's readings and its update rule.

Each row is a sentence (or a pair: an older statement and a newer one) and what the layer must say of it.
The same rows run against `sayings` (what kind of sentence, about whom, with which cue), `update` (the
writer's rule: does the newer text change the older) and `same_fact` (recall's ordering), so a consumer
never disagrees with another about what a sentence says."""

from __future__ import annotations

import pytest

from dagmem.memory.text import language_of, same_fact, sayings, update

# (text, language, kind of its first sentence, subject of it, cue of it)
SENTENCES = [
    ("I live in Leeds.", "en", "fact", "speaker", None),
    ("Do you know a good bakery near me?", "en", "question", "speaker", None),
    ("If I moved to Oslo I would need a warmer coat.", "en", "hypothetical", "speaker", None),
    ("I'm going to learn the cello next year.", "en", "plan", "speaker", None),
    ("My brother lives in Cardiff now.", "en", "fact", "other", "update"),
    ("Actually, my number is 0161 496 0000.", "en", "fact", "speaker", "retraction"),
    ("Ich wohne jetzt in Köln.", "de", "fact", "speaker", "update"),
    ("Wohnst du gern in Köln?", "de", "question", "speaker", None),
    ("Mi hermana vive en Bilbao.", "es", "fact", "other", None),
    ("Ya no como carne.", "es", "fact", "speaker", "update"),
    ("Désormais je travaille chez Renault.", "fr", "fact", "speaker", "update"),
    ("Si j'habitais à Lyon, je prendrais le vélo.", "fr", "hypothetical", "speaker", None),
    ("我现在住在杭州。", "zh", "fact", "speaker", "update"),
    ("你觉得杭州怎么样？", "zh", "question", "speaker", None),
    ("今は福岡に住んでいます。", "ja", "fact", "speaker", "update"),
    ("福岡はどうですか？", "ja", "question", "speaker", None),
    ("What's the best way to keep my streak going", "en", "question", "speaker", None),  # no mark
    ("I visited New Gary Old Town on March 16.", "en", "fact", "speaker", None),  # "new" in a name
    ("I now work at New Look.", "en", "fact", "speaker", "update"),
]


@pytest.mark.parametrize(("text", "lang", "kind", "subject", "cue"), SENTENCES)
def test_each_sentence_is_read_as_what_it_says(
    text: str, lang: str, kind: str, subject: str, cue: str | None
) -> None:
    first = sayings(text)[0]
    assert language_of(text) == lang
    assert (first.kind, first.subject, first.cue) == (kind, subject, cue)


# (older, newer, the change, whether it replaces all the older said) — the person's own words each time
UPDATES = [
    ("I live in Leeds.", "I moved to Bristol last month.", "update", True),
    ("My email is sam@old.example.", "My email is sam@new.example.", "update", True),
    ("The rent is £900 a month.", "The rent went up, it's £975 now.", "update", True),
    (
        "The party is on Saturday 14 June.",
        "Sorry, I got it wrong: the party is on Sunday 15 June.",
        "retraction",
        True,
    ),
    ("I live in Paris and I work as a nurse.", "I moved to Berlin.", "update", False),
    (  # the fact is said in passing, before a request that stands
        "I live in Paris, can you recommend a bakery that makes raspberry birthday cakes with a chocolate "
        "mirror glaze for my daughter?",
        "I moved to Berlin.",
        "update",
        False,
    ),
    ("I live in Brighton.", "I'm back in Manchester now.", "update", True),  # one place at a time
    (  # one of several meetings: another, said with a cue, may be one more (part, not whole)
        "I have a dentist appointment on May 3.",
        "I've got a new meeting with Raymond on May 15.",
        "update",
        False,
    ),
    (  # the cue is the long sentence's, said of something else: the clause may be one more (part)
        "I live in Leeds.",
        "Honestly the last few months have been wild with the new baby, the garden project, endless "
        "paperwork and my sister visiting every weekend, I live in York.",
        "update",
        False,
    ),
    ("Ich wohne in Köln.", "Ich bin jetzt nach Bonn gezogen.", "update", True),
    ("Vivo en Valencia.", "Ahora vivo en Sevilla.", "update", True),
    ("J'habite à Lyon.", "Désormais j'habite à Nantes.", "update", True),
    ("我住在杭州。", "我现在住在苏州了。", "update", True),
    ("福岡に住んでいます。", "今は札幌に住んでいます。", "update", True),
]


@pytest.mark.parametrize(("old", "new", "change", "whole"), UPDATES)
def test_a_newer_value_said_as_a_change_updates_the_older(
    old: str, new: str, change: str, whole: bool
) -> None:
    found = update(old, new)
    assert found is not None
    assert (found.change, found.whole) == (change, whole)
    assert same_fact(old, new)


# Pairs in which the newer text changes nothing the person said of themselves.
NOT_UPDATES = [
    ("I live in Leeds.", "My sister moved to Bristol last month."),  # someone else
    ("I live in Leeds.", "If I moved to Bristol, would my rent go down?"),  # a question, a supposition
    ("I live in Leeds.", "I'm going to move to Bristol next year."),  # a plan
    ("I live in Leeds.", "I also have a flat in Bristol now."),  # one more, not instead
    ("I live in Leeds.", "Still in Leeds, still loving it."),  # said again
    ("I live in Leeds.", "I lived in Bristol as a student."),  # a past that is over
    ("I live in Leeds.", "My landlord wrote: 'I live in Spain now, send the rent there.'"),  # his words
    ("Should I spend $500 on the laptop upgrade?", "I've now spent $650 on the laptop upgrade."),  # asked
    (  # a question names a date and a number, as given: no fact of the person's to change
        "How can I make the most of the fan meet-and-greet on December 20 with 80 attendees?",
        "I've reserved the sports centre for the youth league starting January 5 now.",
    ),
    ("Ich wohne in Köln.", "Mein Bruder ist jetzt nach Bonn gezogen."),
    ("Vivo en Valencia.", "¿Y si me mudara a Sevilla?"),
    ("J'habite à Lyon.", "Mon frère habite maintenant à Nantes."),
    ("我住在杭州。", "我姐姐现在住在苏州。"),
    ("福岡に住んでいます。", "札幌に引っ越したらどうなるかな？"),
]


@pytest.mark.parametrize(("old", "new"), NOT_UPDATES)
def test_what_is_not_the_persons_new_value_changes_nothing(old: str, new: str) -> None:
    assert update(old, new) is None
    assert not same_fact(old, new)


def test_an_attribute_said_everywhere_relates_no_two_statements() -> None:
    """A long chat names a meeting in dozens of statements: where the writer finds an attribute that
    common (`a:appointment`), two statements of it are one fact only by their words."""
    old = "I have a dentist appointment on May 3."
    unrelated = "I've got a new meeting with Raymond on May 15."
    moved = "The dentist moved my appointment to May 10."
    common = frozenset({"a:appointment"})
    assert update(old, unrelated) is not None  # in a short chat, the attribute is the topic
    assert update(old, unrelated, common) is None
    found = update(old, moved, common)
    assert found is not None
    assert found.change == "update"
