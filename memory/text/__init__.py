"""What words say, pure and below every layer that reads them: the kinds of sentence a working session
holds (narration, the person's standing instructions, decisions, what did not work, causes, open
threads). Languages are data (`lang/<code>.py`), read by one set of rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy

if TYPE_CHECKING:
    from ._keywords import keywords as keywords
    from ._work import NARRATION_CHARS as NARRATION_CHARS
    from ._work import WORK_GENERIC as WORK_GENERIC
    from ._work import is_cause as is_cause
    from ._work import is_decision as is_decision
    from ._work import is_failure_said as is_failure_said
    from ._work import is_instruction as is_instruction
    from ._work import is_narration as is_narration
    from ._work import is_open_thread as is_open_thread
    from ._work import is_question as is_question
    from ._work import work_sentences as work_sentences

__all__ = [
    "NARRATION_CHARS",
    "WORK_GENERIC",
    "is_cause",
    "is_decision",
    "is_failure_said",
    "is_instruction",
    "is_narration",
    "is_open_thread",
    "is_question",
    "keywords",
    "work_sentences",
]

__getattr__, __dir__ = lazy(
    __name__, globals(), {**dict.fromkeys(__all__, "._work"), "keywords": "._keywords"}
)
