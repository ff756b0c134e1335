"""OTP-style supervision on anyio: strategies, restart types, intensity, backoff and escalation."""

# Layering: `_spec` is the vocabulary (plain data), `_backoff` the restart delay, `_supervisor` the one
# class that runs children in an anyio task group. The actor layer builds its tree from these names only.

from __future__ import annotations

from .._lazy import eager
from ._backoff import Backoff as Backoff
from ._spec import ChildInfo as ChildInfo
from ._spec import ChildSpec as ChildSpec
from ._spec import EventKind as EventKind
from ._spec import Restart as Restart
from ._spec import RestartIntensityExceeded as RestartIntensityExceeded
from ._spec import Strategy as Strategy
from ._spec import SupervisorEvent as SupervisorEvent
from ._supervisor import Supervisor as Supervisor

eager(globals())
