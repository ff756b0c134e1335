"""English: the words of a coding session's turns that say what kind of sentence each is."""

from __future__ import annotations

from typing import Final

# An assistant turn that only says what it is about to do, or that a step went well: "Let me look at the
# router:", "Now I'll run the tests.", "Perfect!". Matched at the turn's start, case-insensitively.
NARRATION_OPENERS: Final = (
    "let me", "let's", "now let me", "now let's", "now i", "now,", "i'll", "i will", "i'm going to",
    "i am going to", "i need to", "i see", "first,", "first let me", "next,", "next let me", "then",
    "perfect", "great", "excellent", "good", "done", "ok", "okay", "alright", "all right", "awesome",
    "nice", "looks good", "you're absolutely right", "you are absolutely right", "you're right",
    "now", "finally", "i can see", "i found", "found it", "got it", "thanks", "the file", "the test",
)  # fmt: skip

# A sentence the person says to set how the work is done (a convention, an order that stands), not a task
# of the moment: a negation ("don't", "no console logs"), a standing word ("always", "from now on"), or
# a choice ("use X", "instead of", "prefer").
INSTRUCTION_STARTS: Final = (
    "don't", "do not", "dont", "never", "no ", "avoid", "stop ", "please don't", "please do not",
    "always", "make sure", "be sure", "remember to", "remember that", "from now on", "going forward",
    "use ", "please use", "prefer", "keep ", "only ", "we use", "we always", "we never", "we don't",
    "i want", "i'd like", "i would like", "i prefer", "i'd prefer", "i like", "i don't like",
    "i don't want", "i do not want", "let's always", "let's not", "let's use", "must ", "you must",
    "you should", "you shouldn't", "should ", "shouldn't", "it should", "they should", "each ", "every ",
)  # fmt: skip
INSTRUCTION_WORDS: Final = (
    "always", "never", "from now on", "instead of", "rather than", "make sure", "don't", "do not",
    "should", "shouldn't", "must", "mustn't", "no need to", "prefer", "not allowed", "is allowed",
    "every time", "whenever", "by default",
)  # fmt: skip

# A sentence that states a choice made and, often, why.
DECISION_WORDS: Final = (
    "decided", "decision", "we chose", "i chose", "chosen", "going with", "opted", "settled on",
    "instead of", "rather than", "switched to", "in favor of", "in favour of", "trade-off", "tradeoff",
    "the approach is", "the approach was", "won't use", "will not use", "avoid using", "better than",
    "prefer", "preferred",
)  # fmt: skip

# A sentence that says something did not work.
FAILED_WORDS: Final = (
    "didn't work", "did not work", "doesn't work", "does not work", "not working", "won't work",
    "failed to", "fails to", "still fails", "still failing", "still broken", "no luck", "gave up",
    "abandon", "reverted", "revert ", "rolled back", "that approach", "can't", "cannot", "unable to",
)  # fmt: skip

# A sentence that explains a problem's cause.
CAUSE_WORDS: Final = (
    "the issue", "the problem", "the cause", "the error", "because", "caused by", "is due to", "was due to",
    "root cause", "the bug", "the reason", "this means", "that's why", "which is why", "turns out",
    "the fix", "fixed by", "the culprit",
)  # fmt: skip

# A sentence of a summary that leaves something for later.
OPEN_WORDS: Final = (
    "next step", "next steps", "remaining", "still need", "still needs", "todo", "to do", "left to",
    "not yet", "follow-up", "follow up", "later", "pending", "open question", "outstanding",
)  # fmt: skip

# Words that say nothing of what a text is about: function words, the speakers' labels a claim quotes
# with, narration and the most general words of a working session.
STOPWORDS: Final = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers him his how i if in into is it its itself just me more most my no nor not
    now of off on once only or other our ours out over own same she should so some such than that the
    their theirs them then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours user assistant tool agent
    let lets let's now then also just okay ok sure yes yeah perfect great good excellent done need needs
    want wants like make makes made look looks looking check checking see run runs running use used using
    file files code line lines test tests change changes update updated fix fixed add added work works
    thing things something well first next last still really actually already going into onto within
    without there here this that these those very much many more most some such only other another every
    each same different new old true false none null return returns""".split()
)  # fmt: skip

# Words of a working session too general to name a page: measured on 15 real coding-agent sessions of three
# projects (the words in at least 60 % of the sessions and in every project: "test", "file", "function",
# "changes", "fix", "message", "data", "project", "summary", ...), and the vocabulary of any codebase beside
# them. A page is named by what it is about: a file, a module, a name.
WORK_GENERIC: Final = frozenset(
    """add added adding change changes changed check checks checking code codes command commands complete
    completed create created current data error errors file files first fix fixes fixed fixing function
    functions html issue issues message messages name names new project projects run runs running summary
    test tests testing update updates updated use used uses using user working work works method methods
    class classes module modules component components template templates config configuration setting
    settings option options feature features task tasks step steps bug bugs build builds script scripts tool
    tools call calls handler handlers helper helpers util utils logic implementation approach scenario
    scenarios suite case cases existing line lines output input result results value values type types
    diff edit edits write read pass passes passed fail fails failed failure failures debug debugging log logs
    item items list lists field fields param params parameter parameters argument arguments return returns
    string strings object objects array arrays number numbers version versions directory folder path paths
    repo repository commit commits branch branches main problem problems solution solutions thing things
    stuff way ways part parts place places point points section sections page pages view views state
    status event events process processes time times done full instead simple specific failing formatted
    functionality codebase support""".split()
)  # fmt: skip
