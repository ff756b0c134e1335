"""Trust: where a memory came from, who may read it, what may reach the core.

- `_instruction`: does a text read as an instruction to the agent (normalised against Unicode tricks)?
- `_hold`: the rule that keeps a candidate core fact out of the core unless the person typed it.
- `_scope`: a reader's scope (sessions, origins, held items, the core, read-only) and its file format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy

if TYPE_CHECKING:
    from ._hold import hold_reason as hold_reason
    from ._hold import page_hold_reason as page_hold_reason
    from ._instruction import looks_like_instruction as looks_like_instruction
    from ._instruction import normalise as normalise
    from ._scope import OWNER as OWNER
    from ._scope import Origin as Origin
    from ._scope import OutOfScope as OutOfScope
    from ._scope import Scope as Scope
    from ._scope import load_scope as load_scope
else:
    # Each name loads its module on first use: a reader's scope needs not the instruction tripwire's patterns.
    __getattr__, __dir__, __all__ = lazy(
        __name__,
        globals(),
        {
            "hold_reason": "._hold",
            "page_hold_reason": "._hold",
            "looks_like_instruction": "._instruction",
            "normalise": "._instruction",
            "OWNER": "._scope",
            "Origin": "._scope",
            "OutOfScope": "._scope",
            "Scope": "._scope",
            "load_scope": "._scope",
        },
    )
