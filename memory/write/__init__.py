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
    from ._current import current_topics as current_topics
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
else:
    # Each name loads its module on first use: the LLM distiller loads httpx and pydantic-settings (~0.2 s),
    # the write core the formats and the durable layer.
    __getattr__, __dir__, __all__ = lazy(
        __name__,
        globals(),
        {
            "Backfilled": "._backfill",
            "backfill": "._backfill",
            "uncited_records": "._backfill",
            "Applied": "._batch_writer",
            "BatchWriter": "._batch_writer",
            "Installed": "._batch_writer",
            "WriteOutcome": "._core",
            "mark_nodes": "._core",
            "records_of": "._core",
            "write_batch": "._core",
            "BriefLine": "._current",
            "core_after": "._current",
            "current_brief": "._current",
            "current_topics": "._current",
            "RESERVED_TOPIC_SLUGS": "._distill",
            "TOPIC_FILE_LIMIT": "._distill",
            "BatchInput": "._distill",
            "Distiller": "._distill",
            "Edits": "._distill",
            "ExtractiveDistiller": "._distill",
            "TopicReader": "._distill",
            "excerpt": "._distill",
            "exchange_claim": "._distill",
            "topic_slug": "._distill",
            "NUMERIC_ATTRIBUTES": "._fact_keys",
            "HeldItem": "._held",
            "approve": "._held",
            "held_items": "._held",
            "reject": "._held",
            "LLMDistiller": "._llm",
            "LLMConfigError": "._llm_config",
            "LLMSettings": "._llm_config",
            "load_llm_settings": "._llm_config",
            "DISTILLERS": "._named",
            "distiller_named": "._named",
            "SessionResult": "._pass",
            "pending_by_session": "._pass",
            "write_pass": "._pass",
            "write_session": "._pass",
            "DuplicateJudge": "._reorganise",
            "Reorganised": "._reorganise",
            "identical_claims": "._reorganise",
            "one_path_in": "._reorganise",
            "reorganise": "._reorganise",
            "FILLER_WORDS": "._subjects",
            "may_name": "._subjects",
        },
    )
