"""Forget (`dagmem forget`, `Runtime.forget`): the one operation that removes evidence, from every copy a
home keeps, crash-safely, and the scan that proves no copy is left (`dagmem verify --forgotten`).

- `_forms`: the forms a text takes in a home and their hashes (the texts themselves are never stored);
- `_scan`: every byte under a home (git objects decompressed) searched for those hashes;
- `_topics`: blocks citing forgotten evidence removed or re-distilled;
- `_forget`: the plan, the journal (`forgotten.json`) and the steps, finished by a rerun after a crash.

It sits on the store, the workspace, the write core's claim rule and recall's rebuild."""

from __future__ import annotations

from ..._lazy import eager
from ._forget import ForgetPlan as ForgetPlan
from ._forget import ForgetReport as ForgetReport
from ._forget import finish_pending as finish_pending
from ._forget import forget as forget
from ._forget import forgotten_check as forgotten_check
from ._forget import plan_forget as plan_forget
from ._forget import verify_forgotten as verify_forgotten
from ._forms import MIN_BYTES as MIN_BYTES
from ._scan import Copy as Copy

eager(globals())
