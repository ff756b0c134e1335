"""The actor runtime: bounded mailboxes, one actor per session, one writer per workspace, the Runtime."""

from __future__ import annotations

from .._lazy import eager
from ._context import RuntimeConfig as RuntimeConfig
from ._mailbox import ActorStopped as ActorStopped
from ._mailbox import MailboxClosed as MailboxClosed
from ._runtime import EventHandler as EventHandler
from ._runtime import Runtime as Runtime
from ._runtime import RuntimeClosed as RuntimeClosed
from ._runtime import RuntimeCrashed as RuntimeCrashed
from ._runtime import RuntimeStatus as RuntimeStatus
from ._session import SessionCrashed as SessionCrashed

eager(globals())
