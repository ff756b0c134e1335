"""The one write core (archive → distil → install → mark) and what feeds it: distillers, the batch
writer that drives it, and the `dagmem write` pass over a home. It never imports recall: the recall
index is kept up to date by the `on_install` hook of the workspace, which its opener gives."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy

if TYPE_CHECKING:
    from ._backfill import Backfilled as Backfilled
    from ._backfill import backfill as backfill
    from ._backfill import uncited_records as uncited_records
    from ._batch_writer import Applied as Applied
    from ._batch_writer import BatchWriter as BatchWriter
    from ._batch_writer import Installed as Installed
    from ._core import WriteOutcome as WriteOutcome
    from ._core import mark_nodes as mark_nodes
    from ._core import records_of as records_of
    from ._core import write_batch as write_batch
    from ._current import BriefLine as BriefLine
    from ._current import core_after as core_after
    from ._current import current_brief as current_brief
    from ._current import current_index as current_index
    from ._distill import RESERVED_TOPIC_SLUGS as RESERVED_TOPIC_SLUGS
    from ._distill import TOPIC_FILE_LIMIT as TOPIC_FILE_LIMIT
    from ._distill import BatchInput as BatchInput
    from ._distill import Distiller as Distiller
    from ._distill import Edits as Edits
    from ._distill import ExtractiveDistiller as ExtractiveDistiller
    from ._distill import TopicReader as TopicReader
    from ._distill import excerpt as excerpt
    from ._distill import exchange_claim as exchange_claim
    from ._distill import topic_slug as topic_slug
    from ._fact_keys import NUMERIC_ATTRIBUTES as NUMERIC_ATTRIBUTES
    from ._held import HeldItem as HeldItem
    from ._held import approve as approve
    from ._held import held_items as held_items
    from ._held import reject as reject
    from ._llm import LLMDistiller as LLMDistiller
    from ._llm_config import LLMConfigError as LLMConfigError
    from ._llm_config import LLMSettings as LLMSettings
    from ._llm_config import load_llm_settings as load_llm_settings
    from ._named import DISTILLERS as DISTILLERS
    from ._named import distiller_named as distiller_named
    from ._pass import SessionResult as SessionResult
    from ._pass import pending_by_session as pending_by_session
    from ._pass import write_pass as write_pass
    from ._pass import write_session as write_session
    from ._reorganise import DuplicateJudge as DuplicateJudge
    from ._reorganise import Reorganised as Reorganised
    from ._reorganise import identical_claims as identical_claims
    from ._reorganise import one_path_in as one_path_in
    from ._reorganise import reorganise as reorganise
    from ._subjects import FILLER_WORDS as FILLER_WORDS
    from ._subjects import may_name as may_name

__all__ = [
    "DISTILLERS",
    "FILLER_WORDS",
    "NUMERIC_ATTRIBUTES",
    "RESERVED_TOPIC_SLUGS",
    "TOPIC_FILE_LIMIT",
    "Applied",
    "Backfilled",
    "BatchInput",
    "BatchWriter",
    "BriefLine",
    "Distiller",
    "DuplicateJudge",
    "Edits",
    "ExtractiveDistiller",
    "HeldItem",
    "Installed",
    "LLMConfigError",
    "LLMDistiller",
    "LLMSettings",
    "Reorganised",
    "SessionResult",
    "TopicReader",
    "WriteOutcome",
    "approve",
    "backfill",
    "core_after",
    "current_brief",
    "current_index",
    "distiller_named",
    "excerpt",
    "exchange_claim",
    "held_items",
    "identical_claims",
    "load_llm_settings",
    "mark_nodes",
    "may_name",
    "one_path_in",
    "pending_by_session",
    "records_of",
    "reject",
    "reorganise",
    "topic_slug",
    "uncited_records",
    "write_batch",
    "write_pass",
    "write_session",
]

# Each name loads its module on first use: the LLM distiller loads httpx and pydantic-settings (~0.2 s),
# the write core the formats and the durable layer.
__getattr__, __dir__ = lazy(
    __name__,
    globals(),
    {
        "current_index": "._current",
        "current_brief": "._current",
        "BriefLine": "._current",
        "uncited_records": "._backfill",
        "backfill": "._backfill",
        "Backfilled": "._backfill",
        "Applied": "._batch_writer",
        "FILLER_WORDS": "._subjects",
        "NUMERIC_ATTRIBUTES": "._fact_keys",
        "BatchInput": "._distill",
        "BatchWriter": "._batch_writer",
        "DISTILLERS": "._named",
        "Distiller": "._distill",
        "DuplicateJudge": "._reorganise",
        "Edits": "._distill",
        "ExtractiveDistiller": "._distill",
        "HeldItem": "._held",
        "Installed": "._batch_writer",
        "LLMConfigError": "._llm_config",
        "LLMDistiller": "._llm",
        "LLMSettings": "._llm_config",
        "RESERVED_TOPIC_SLUGS": "._distill",
        "Reorganised": "._reorganise",
        "SessionResult": "._pass",
        "TOPIC_FILE_LIMIT": "._distill",
        "TopicReader": "._distill",
        "WriteOutcome": "._core",
        "approve": "._held",
        "core_after": "._current",
        "distiller_named": "._named",
        "excerpt": "._distill",
        "may_name": "._subjects",
        "topic_slug": "._distill",
        "exchange_claim": "._distill",
        "held_items": "._held",
        "identical_claims": "._reorganise",
        "load_llm_settings": "._llm_config",
        "mark_nodes": "._core",
        "one_path_in": "._reorganise",
        "pending_by_session": "._pass",
        "records_of": "._core",
        "reject": "._held",
        "reorganise": "._reorganise",
        "write_batch": "._core",
        "write_pass": "._pass",
        "write_session": "._pass",
    },
)
