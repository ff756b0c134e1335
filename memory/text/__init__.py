"""What words say, pure and below every layer that reads them: what a person's sentence states (a fact of
now, a question, a hypothetical, a plan, a past, someone else's words), about whom, with which cue of a
change; when a newer statement updates an older one; and the kinds of sentence a working session holds
(narration, the person's standing instructions, decisions, what did not work, causes, open threads); what a
search index reads of a text (its words and CJK runs, the function words it leaves out, the words of "I",
its sentences) and how words name a file. Languages are data (`lang/<code>.py`), read by one set of rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy

if TYPE_CHECKING:
    from ._claim import user_text as user_text
    from ._keywords import keywords as keywords
    from ._saying import Said as Said
    from ._saying import asks_about_now as asks_about_now
    from ._saying import language_of as language_of
    from ._saying import of_speaker as of_speaker
    from ._saying import sayings as sayings
    from ._slug import slug_of as slug_of
    from ._terms import FIRST_PERSON_WORDS as FIRST_PERSON_WORDS
    from ._terms import INDEX_STOPWORDS as INDEX_STOPWORDS
    from ._terms import cjk_bigrams as cjk_bigrams
    from ._terms import index_words as index_words
    from ._terms import sentence_runs as sentence_runs
    from ._update import COMMON_STATEMENTS as COMMON_STATEMENTS
    from ._update import Change as Change
    from ._update import Update as Update
    from ._update import change_keys as change_keys
    from ._update import changed_in as changed_in
    from ._update import changes as changes
    from ._update import held as held
    from ._update import said_keys as said_keys
    from ._update import same_fact as same_fact
    from ._update import states_of_self as states_of_self
    from ._update import update as update
    from ._work import NARRATION_CHARS as NARRATION_CHARS
    from ._work import WORK_GENERIC as WORK_GENERIC
    from ._work import clip as clip
    from ._work import is_cause as is_cause
    from ._work import is_decision as is_decision
    from ._work import is_failure_said as is_failure_said
    from ._work import is_instruction as is_instruction
    from ._work import is_narration as is_narration
    from ._work import is_open_thread as is_open_thread
    from ._work import is_question as is_question
    from ._work import work_sentences as work_sentences
else:
    __getattr__, __dir__, __all__ = lazy(
        __name__,
        globals(),
        {
            "user_text": "._claim",
            "keywords": "._keywords",
            "Said": "._saying",
            "asks_about_now": "._saying",
            "language_of": "._saying",
            "of_speaker": "._saying",
            "sayings": "._saying",
            "slug_of": "._slug",
            "FIRST_PERSON_WORDS": "._terms",
            "INDEX_STOPWORDS": "._terms",
            "cjk_bigrams": "._terms",
            "index_words": "._terms",
            "sentence_runs": "._terms",
            "COMMON_STATEMENTS": "._update",
            "Change": "._update",
            "Update": "._update",
            "change_keys": "._update",
            "changed_in": "._update",
            "changes": "._update",
            "held": "._update",
            "said_keys": "._update",
            "same_fact": "._update",
            "states_of_self": "._update",
            "update": "._update",
            "NARRATION_CHARS": "._work",
            "WORK_GENERIC": "._work",
            "is_cause": "._work",
            "is_decision": "._work",
            "is_failure_said": "._work",
            "is_instruction": "._work",
            "is_narration": "._work",
            "is_open_thread": "._work",
            "is_question": "._work",
            "clip": "._work",
            "work_sentences": "._work",
        },
    )
