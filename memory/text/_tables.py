"""The shape of a language's table: the words that tell what kind of sentence a person says.

Each `lang/<code>.py` gives one `Saying` of plain word lists; `_saying` reads every sentence with the table
of its language. For a language written with spaces (English, German, Spanish, French) an entry is a word
or a phrase matched on word boundaries, case-insensitively, accents as written; for Chinese and Japanese an
entry is a string matched anywhere. A new language is one more module, not a code path."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Saying"]


@dataclass(frozen=True)
class Saying:
    code: str
    spaced: bool  # words are separated by spaces (else: matched as substrings)
    # What makes a sentence about the speaker: first-person words (a language that drops its pronouns,
    # Spanish or Japanese, also counts a sentence about no one else as the speaker's).
    first_person: tuple[str, ...]
    # Someone else as the subject: relations, pronouns ("my sister", "he", "mi hermana", "他").
    others: tuple[str, ...]
    # A question: the words one opens with (a question mark anywhere at its end counts in every language).
    question_starts: tuple[str, ...]
    question_ends: tuple[str, ...] = ()  # sentence-final particles (吗, か)
    # Not a fact of now: a condition or a wish, a plan, a past that is over, words reported, a joke.
    hypothetical: tuple[str, ...] = ()
    plan: tuple[str, ...] = ()
    past: tuple[str, ...] = ()
    reported: tuple[str, ...] = ()
    joke: tuple[str, ...] = ()
    # A change: an update since, or a correction of what was said.
    update: tuple[str, ...] = ()
    retraction: tuple[str, ...] = ()
    negation: tuple[str, ...] = ()
    addition: tuple[str, ...] = ()  # "also", "too": one more, not instead
    # When, not what: the words of dates and times (a weekday, a month, "week", "year", "ago"); a date is a
    # value of a fact, never its topic.
    time: tuple[str, ...] = ()
    calendar: tuple[str, ...] = ()  # the names of weekdays and months (a number beside one is a date)
    # Function words (and the cue words above are left out too): what a sentence's topic is not.
    stop: frozenset[str] = field(default_factory=frozenset)
