"""On-disk formats, pure: node files and session meta, the evidence archive's frames (codec and strict
scanner), topic files (model, parse, validate), txlog lines, the core block, token counting, the layout of a home (`WorkspacePaths`).
Bytes in, models out; nothing here writes a file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy

if TYPE_CHECKING:
    from ._ancestry import PredecessorMap as PredecessorMap
    from ._ancestry import ancestors as ancestors
    from ._archive_codec import HEADER as HEADER
    from ._archive_codec import ORIGINS as ORIGINS
    from ._archive_codec import ArchiveRecord as ArchiveRecord
    from ._archive_codec import default_origin as default_origin
    from ._archive_codec import render_frame as render_frame
    from ._archive_codec import render_tombstone as render_tombstone
    from ._archive_scan import Frame as Frame
    from ._archive_scan import ScanResult as ScanResult
    from ._archive_scan import frame_git as frame_git
    from ._archive_scan import frame_meta as frame_meta
    from ._archive_scan import restore_final_newline as restore_final_newline
    from ._archive_scan import scan_archive as scan_archive
    from ._caches import clear_caches as clear_caches
    from ._core import plan_core as plan_core
    from ._core import render_core as render_core
    from ._forgotten import ForgetEntry as ForgetEntry
    from ._forgotten import ForgottenCorrupt as ForgottenCorrupt
    from ._forgotten import TextHash as TextHash
    from ._forgotten import parse_forgotten as parse_forgotten
    from ._forgotten import render_forgotten as render_forgotten
    from ._git_context import GIT_KEY as GIT_KEY
    from ._git_context import GitContext as GitContext
    from ._git_context import git_context_of as git_context_of
    from ._ids import anchor_of as anchor_of
    from ._ids import check_id as check_id
    from ._ids import is_valid_id as is_valid_id
    from ._layout import BRIEF_SLUG as BRIEF_SLUG
    from ._layout import BRIEF_TOPIC as BRIEF_TOPIC
    from ._layout import CORE_FILE as CORE_FILE
    from ._layout import CORE_MASTER as CORE_MASTER
    from ._layout import HELD_TOPIC as HELD_TOPIC
    from ._layout import REJECTED_TOPIC as REJECTED_TOPIC
    from ._layout import HomePaths as HomePaths
    from ._layout import WorkspacePaths as WorkspacePaths
    from ._layout import held_file_of as held_file_of
    from ._layout import is_brief_path as is_brief_path
    from ._layout import is_held_topic as is_held_topic
    from ._layout import page_of_held as page_of_held
    from ._limits import MAX_CONTENT_BYTES as MAX_CONTENT_BYTES
    from ._limits import MAX_METADATA_DEPTH as MAX_METADATA_DEPTH
    from ._limits import MAX_RECORD_LINES as MAX_RECORD_LINES
    from ._limits import check_content as check_content
    from ._limits import check_metadata as check_metadata
    from ._limits import content_problem as content_problem
    from ._node import FORGOTTEN_KEY as FORGOTTEN_KEY
    from ._node import HEAD as HEAD
    from ._node import MARKER_KEY as MARKER_KEY
    from ._node import ORIGIN_KEY as ORIGIN_KEY
    from ._node import SHARD_SIZE as SHARD_SIZE
    from ._node import SPAWNED_KEY as SPAWNED_KEY
    from ._node import HeadType as HeadType
    from ._node import Node as Node
    from ._node import Role as Role
    from ._node import node_filename as node_filename
    from ._node import node_relpath as node_relpath
    from ._node import parse_node_filename as parse_node_filename
    from ._node import shard_of as shard_of
    from ._problems import EpochSeconds as EpochSeconds
    from ._problems import validation_problem as validation_problem
    from ._session import BranchInfo as BranchInfo
    from ._session import Problem as Problem
    from ._session import SessionMeta as SessionMeta
    from ._session import SessionSnapshot as SessionSnapshot
    from ._session import Tip as Tip
    from ._session import check_spawned_from as check_spawned_from
    from ._session import graph_problems as graph_problems
    from ._session import parse_node as parse_node
    from ._session import walk_branch as walk_branch
    from ._tokens import count_tokens as count_tokens
    from ._tokens import encoding
    from ._tool_evidence import ANSWERED as ANSWERED
    from ._tool_evidence import EVIDENCE_KEY as EVIDENCE_KEY
    from ._tool_evidence import EVIDENCE_TOOL as EVIDENCE_TOOL
    from ._tool_evidence import EXCERPT_CHARS as EXCERPT_CHARS
    from ._tool_evidence import INPUT_CHARS as INPUT_CHARS
    from ._tool_evidence import ToolEvidence as ToolEvidence
    from ._tool_evidence import ToolKind as ToolKind
    from ._tool_evidence import excerpt_of as excerpt_of
    from ._tool_evidence import is_tool_evidence as is_tool_evidence
    from ._tool_evidence import output_counts as output_counts
    from ._tool_evidence import parse_tool_evidence as parse_tool_evidence
    from ._tool_evidence import tool_kind as tool_kind
    from ._topic_index import TOPIC_INDEX_BUDGET as TOPIC_INDEX_BUDGET
    from ._topic_index import TopicIndex as TopicIndex
    from ._topic_index import TopicSummary as TopicSummary
    from ._topic_index import entry_line as entry_line
    from ._topic_index import in_topic_index as in_topic_index
    from ._topic_index import merge_newest as merge_newest
    from ._topic_index import newest_first as newest_first
    from ._topic_index import parse_topic_index as parse_topic_index
    from ._topic_index import render_ordered as render_ordered
    from ._topic_index import render_topic_index as render_topic_index
    from ._topic_index import summarise_bytes as summarise_bytes
    from ._topic_index import summarise_topic as summarise_topic
    from ._topic_model import Block as Block
    from ._topic_model import Citation as Citation
    from ._topic_model import SourceRef as SourceRef
    from ._topic_model import SupersedeReason as SupersedeReason
    from ._topic_model import Supersession as Supersession
    from ._topic_model import Topic as Topic
    from ._topic_model import TopicFormatError as TopicFormatError
    from ._topic_model import block_chunk as block_chunk
    from ._topic_model import block_id as block_id
    from ._topic_model import block_links as block_links
    from ._topic_model import citation_id as citation_id
    from ._topic_model import inert as inert
    from ._topic_model import make_block as make_block
    from ._topic_model import render_block as render_block
    from ._topic_model import render_topic as render_topic
    from ._topic_model import topic_head as topic_head
    from ._topic_model import uninert as uninert
    from ._topic_parse import TopicLookup as TopicLookup
    from ._topic_parse import parse_topic as parse_topic
    from ._topic_path import TOPIC_INDEX as TOPIC_INDEX
    from ._topic_path import TOPIC_INDEX_SLUG as TOPIC_INDEX_SLUG
    from ._topic_path import TOPIC_SLUG_PATTERN as TOPIC_SLUG_PATTERN
    from ._topic_path import is_topic_path as is_topic_path
    from ._topic_path import is_topic_slug as is_topic_slug
    from ._topic_validate import validate_topic as validate_topic
    from ._txrecord import TxlogCorrupt as TxlogCorrupt
    from ._txrecord import TxRecord as TxRecord

    token_encoding = encoding
else:
    # Each name loads its module on first use: a hook reading the core needs the layout, not the pydantic
    # models of nodes and sessions.
    __getattr__, __dir__, __all__ = lazy(
        __name__,
        globals(),
        {
            "PredecessorMap": "._ancestry",
            "ancestors": "._ancestry",
            "HEADER": "._archive_codec",
            "ORIGINS": "._archive_codec",
            "ArchiveRecord": "._archive_codec",
            "default_origin": "._archive_codec",
            "render_frame": "._archive_codec",
            "render_tombstone": "._archive_codec",
            "Frame": "._archive_scan",
            "ScanResult": "._archive_scan",
            "frame_git": "._archive_scan",
            "frame_meta": "._archive_scan",
            "restore_final_newline": "._archive_scan",
            "scan_archive": "._archive_scan",
            "clear_caches": "._caches",
            "plan_core": "._core",
            "render_core": "._core",
            "ForgetEntry": "._forgotten",
            "ForgottenCorrupt": "._forgotten",
            "TextHash": "._forgotten",
            "parse_forgotten": "._forgotten",
            "render_forgotten": "._forgotten",
            "GIT_KEY": "._git_context",
            "GitContext": "._git_context",
            "git_context_of": "._git_context",
            "anchor_of": "._ids",
            "check_id": "._ids",
            "is_valid_id": "._ids",
            "BRIEF_SLUG": "._layout",
            "BRIEF_TOPIC": "._layout",
            "CORE_FILE": "._layout",
            "CORE_MASTER": "._layout",
            "HELD_TOPIC": "._layout",
            "REJECTED_TOPIC": "._layout",
            "HomePaths": "._layout",
            "WorkspacePaths": "._layout",
            "held_file_of": "._layout",
            "is_brief_path": "._layout",
            "is_held_topic": "._layout",
            "page_of_held": "._layout",
            "MAX_CONTENT_BYTES": "._limits",
            "MAX_METADATA_DEPTH": "._limits",
            "MAX_RECORD_LINES": "._limits",
            "check_content": "._limits",
            "check_metadata": "._limits",
            "content_problem": "._limits",
            "FORGOTTEN_KEY": "._node",
            "HEAD": "._node",
            "MARKER_KEY": "._node",
            "ORIGIN_KEY": "._node",
            "SHARD_SIZE": "._node",
            "SPAWNED_KEY": "._node",
            "HeadType": "._node",
            "Node": "._node",
            "Role": "._node",
            "node_filename": "._node",
            "node_relpath": "._node",
            "parse_node_filename": "._node",
            "shard_of": "._node",
            "EpochSeconds": "._problems",
            "validation_problem": "._problems",
            "BranchInfo": "._session",
            "Problem": "._session",
            "SessionMeta": "._session",
            "SessionSnapshot": "._session",
            "Tip": "._session",
            "check_spawned_from": "._session",
            "graph_problems": "._session",
            "parse_node": "._session",
            "walk_branch": "._session",
            "count_tokens": "._tokens",
            "token_encoding": "._tokens:encoding",
            "EVIDENCE_KEY": "._tool_evidence",
            "ANSWERED": "._tool_evidence",
            "EVIDENCE_TOOL": "._tool_evidence",
            "EXCERPT_CHARS": "._tool_evidence",
            "INPUT_CHARS": "._tool_evidence",
            "ToolEvidence": "._tool_evidence",
            "ToolKind": "._tool_evidence",
            "excerpt_of": "._tool_evidence",
            "is_tool_evidence": "._tool_evidence",
            "output_counts": "._tool_evidence",
            "parse_tool_evidence": "._tool_evidence",
            "tool_kind": "._tool_evidence",
            "TOPIC_INDEX_BUDGET": "._topic_index",
            "TopicIndex": "._topic_index",
            "TopicSummary": "._topic_index",
            "entry_line": "._topic_index",
            "in_topic_index": "._topic_index",
            "merge_newest": "._topic_index",
            "newest_first": "._topic_index",
            "parse_topic_index": "._topic_index",
            "render_ordered": "._topic_index",
            "render_topic_index": "._topic_index",
            "summarise_bytes": "._topic_index",
            "summarise_topic": "._topic_index",
            "Block": "._topic_model",
            "Citation": "._topic_model",
            "SourceRef": "._topic_model",
            "SupersedeReason": "._topic_model",
            "Supersession": "._topic_model",
            "Topic": "._topic_model",
            "TopicFormatError": "._topic_model",
            "block_chunk": "._topic_model",
            "block_id": "._topic_model",
            "block_links": "._topic_model",
            "citation_id": "._topic_model",
            "inert": "._topic_model",
            "make_block": "._topic_model",
            "render_block": "._topic_model",
            "render_topic": "._topic_model",
            "topic_head": "._topic_model",
            "uninert": "._topic_model",
            "TopicLookup": "._topic_parse",
            "parse_topic": "._topic_parse",
            "TOPIC_INDEX": "._topic_path",
            "TOPIC_INDEX_SLUG": "._topic_path",
            "TOPIC_SLUG_PATTERN": "._topic_path",
            "is_topic_path": "._topic_path",
            "is_topic_slug": "._topic_path",
            "validate_topic": "._topic_validate",
            "TxlogCorrupt": "._txrecord",
            "TxRecord": "._txrecord",
        },
    )
