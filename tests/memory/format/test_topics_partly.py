"""The partly superseded line of a topic block: its render, strict parse, one-file rules and the workspace
rules `validate_topic` adds (the successor exists and is not the block itself; no chain, no cycle)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from dagmem.memory.format import (
    Block,
    Supersession,
    Topic,
    TopicFormatError,
    block_id,
    inert,
    make_block,
    parse_topic,
    render_block,
    render_topic,
    validate_topic,
)
from dagmem.memory.format._topic_parse import _parse_by_blocks, _parse_lines

PATH = "topics/home.md"
STATUS = "**Superseded** on `2026-11-22` by [b-77777777](rome.md#^b-77777777) (retraction):"
PARTLY = "**Partly superseded** on `2026-11-20` by [b-89ab12cd](berlin.md#^b-89ab12cd) (update):"
CLAIM = "I live in Paris and I work as a nurse. [^c-0123456789] ^b-1234abcd"
DEF = "[^c-0123456789]: Time: `2026-11-01`; Sources: [user](../sources/s1.md#src-0123456789abcdef)"
SAMPLE = f"""\
# Home

{PARTLY}
{CLAIM}
{DEF}

I eat fish. [^c-aaaaaaaaaa] ^b-0000ffff
[^c-aaaaaaaaaa]: Time: `2026-11-21`; Sources: [user](../sources/s2.md#src-1111111111111111)
"""
BOTH = SAMPLE.replace(PARTLY, f"{STATUS}\n{PARTLY}")
BERLIN = Supersession("b-89ab12cd", "topics/berlin.md", "2026-11-20", "update")
ROME = Supersession("b-77777777", "topics/rome.md", "2026-11-22", "retraction")


def nothing(_relpath: str, _block_id: str) -> Supersession | None:
    return None


def check(
    new: Topic,
    old: Topic | None = None,
    *,
    block_exists: Callable[[str, str], bool] = lambda _p, _b: False,
    superseded_by: Callable[[str, str], Supersession | None] = nothing,
) -> None:
    validate_topic(
        PATH,
        new,
        old,
        batch_sources=("s1/n1", "s1/n2", "s1/n3"),
        is_archived=lambda _s, _a: True,
        block_exists=block_exists,
        superseded_by=superseded_by,
    )


def blocks(*claims: str) -> list[Block]:
    taken: set[str] = set()
    return [
        make_block(PATH, claim, [("2026-11-01", [("user", f"s1/n{n}")])], taken)
        for n, claim in enumerate(claims, start=1)
    ]


def partly(block: Block, by: Block, *, topic: str = PATH) -> Block:
    return dataclasses.replace(block, partly=Supersession(by.id, topic, "2026-11-20", "update"))


def superseded(block: Block, by: Block) -> Block:
    return dataclasses.replace(block, superseded=Supersession(by.id, PATH, "2026-11-21", "update"))


# --- render and parse ---------------------------------------------------------------------------------


def test_a_partly_superseded_block_parses_current_with_its_successor_and_renders_back() -> None:
    topic = parse_topic(SAMPLE, PATH)
    old, other = topic.blocks
    assert old.partly == BERLIN
    assert old.superseded is None  # still current
    assert (old.id, old.claim) == ("b-1234abcd", "I live in Paris and I work as a nurse.")
    assert other.partly is None
    assert render_topic(topic) == SAMPLE
    assert render_block(old).split("\n") == [PARTLY, CLAIM, DEF]


def test_both_lines_parse_the_superseded_line_first_and_render_back() -> None:
    old = parse_topic(BOTH, PATH).blocks[0]
    assert (old.superseded, old.partly) == (ROME, BERLIN)
    assert render_block(old).split("\n") == [STATUS, PARTLY, CLAIM, DEF]
    assert render_topic(parse_topic(BOTH, PATH)) == BOTH


def test_from_the_workspace_root_the_partly_link_points_into_topics() -> None:
    old = parse_topic(SAMPLE, PATH).blocks[0]
    first = render_block(old, base="topics/").split("\n")[0]
    assert first == PARTLY.replace("(berlin.md#", "(topics/berlin.md#")


def test_marking_a_block_partly_superseded_keeps_its_id_and_round_trips() -> None:
    old, new = blocks("I live in Paris and I work as a nurse.", "I moved to Berlin.")
    marked = partly(old, new)
    assert marked.id == old.id == block_id(PATH, old.claim, set())
    topic = Topic("Home", (marked, new))
    check(topic)
    assert parse_topic(render_topic(topic), PATH) == topic


def test_a_block_made_positionally_has_no_partly_line_and_renders_as_before() -> None:
    (old,) = blocks("I live in Paris.")
    positional = Block(old.id, old.claim, old.citations, None)
    assert positional.partly is None
    assert positional == old
    assert render_block(positional) == render_block(old)


def test_files_without_the_line_round_trip_byte_for_byte() -> None:
    text = SAMPLE.replace(PARTLY + "\n", "")
    topic = parse_topic(text, PATH)
    assert all(block.partly is None for block in topic.blocks)
    assert render_topic(topic) == text


@pytest.mark.parametrize("text", [SAMPLE, BOTH])
def test_the_block_by_block_parser_reads_partly_superseded_blocks_too(text: str) -> None:
    fast = _parse_by_blocks(text, PATH)
    assert fast is not None
    assert fast == _parse_lines(text, PATH)


def edit(old: str, new: str, text: str = SAMPLE) -> str:
    assert old in text
    return text.replace(old, new, 1)


MALFORMED = [
    (edit("`2026-11-20`", "2026-11-20"), 3, "malformed partly superseded line"),
    (edit("(update):", "(update)"), 3, "malformed partly superseded line"),
    (edit("(update):", "(update): and more"), 3, "malformed partly superseded line"),
    (edit("**Partly superseded** on", "**Partly superseded**  on"), 3, "malformed partly superseded line"),
    (edit("**Partly superseded**", " **Partly superseded**"), 3, "malformed partly superseded line"),
    (edit("**Partly superseded**", "**Partly superseded**:"), 3, "malformed partly superseded line"),
    (edit("(update)", "(moved)"), 3, "partly superseded line: supersession reason 'moved' is not one of"),
    (edit("[b-89ab12cd](", "[Berlin]("), 3, "partly superseded line's link text 'Berlin' is not its block"),
    (edit("(berlin.md#", "(../berlin.md#"), 3, "partly superseded line's link '../berlin.md#^b-89ab12cd'"),
    (SAMPLE.replace("b-89ab12cd", "b-89AB12CD"), 3, "partly superseded line: malformed successor block id"),
    (edit("`2026-11-20`", "`2026-02-30`"), 3, "partly superseded line: date '2026-02-30' is not a real"),
    (edit(PARTLY + "\n", PARTLY + "\n" + PARTLY + "\n"), 4, "more than one partly superseded line"),
    (edit(CLAIM + "\n" + DEF + "\n", ""), 3, "partly superseded line is not followed by its block's claim"),
    (edit(PARTLY + "\n", PARTLY + "\n" + STATUS + "\n"), 4, "superseded line after the partly superseded"),
    (edit(PARTLY + "\n" + CLAIM, CLAIM + "\n" + PARTLY), 4, "malformed definition line"),
    (edit(PARTLY + "\n", PARTLY + "\n\n"), 3, "not followed by its block's claim line"),
    (edit(CLAIM, "**Partly superseded** I live. [^c-0123456789] ^b-1234abcd"), 4, "more than one partly"),
    (edit(f"{STATUS}\n{PARTLY}", f"{PARTLY}\n{STATUS}", BOTH), 4, "superseded line after the partly"),
    (edit("`2026-11-20`", "`20261120`", BOTH), 4, "partly superseded line: date '20261120' is not"),
]


@pytest.mark.parametrize(("text", "line", "fragment"), MALFORMED)
def test_a_malformed_partly_line_is_refused_naming_its_line_and_rule(
    text: str, line: int, fragment: str
) -> None:
    with pytest.raises(TopicFormatError) as error:
        parse_topic(text, PATH)
    assert fragment in error.value.reason
    assert (error.value.path, error.value.line) == (PATH, line)
    assert _parse_by_blocks(text, PATH) is None  # the fast path hands it to the line parser


@pytest.mark.parametrize(
    ("mark", "fragment"),
    [
        (dataclasses.replace(BERLIN, by="b-1"), "partly superseded line: malformed successor block id 'b-1'"),
        (
            dataclasses.replace(BERLIN, topic="berlin.md"),
            "partly superseded line: successor topic 'berlin.md'",
        ),
        (
            dataclasses.replace(BERLIN, date="2026-13-01"),
            "partly superseded line: date '2026-13-01' is not a",
        ),
        (dataclasses.replace(BERLIN, reason="moved"), "partly superseded line: supersession reason 'moved'"),  # type: ignore[arg-type]
    ],
)
def test_a_malformed_partly_object_is_refused_on_its_line(mark: Supersession, fragment: str) -> None:
    first, second = blocks("One.", "Two.")
    topic = Topic("T", (first, dataclasses.replace(second, superseded=BERLIN, partly=mark)))
    with pytest.raises(TopicFormatError) as error:
        check(topic, block_exists=lambda _p, _b: True)
    assert fragment in error.value.reason
    assert error.value.line == 7  # block 2 starts at line 6 with its superseded line; the partly line next


# --- forgery: record text lands in a claim line only -------------------------------------------------------


def test_record_text_that_forges_a_partly_line_stays_inert_in_its_claim() -> None:
    said = f"Note.\n{PARTLY}\nI live in Paris."
    (block,) = blocks(inert(said))
    check(Topic("T", (block,)))
    parsed = parse_topic(render_topic(Topic("T", (block,))), PATH).blocks[0]
    assert (parsed, parsed.partly, parsed.claim) == (block, None, inert(said))


def test_a_claim_may_not_start_with_the_partly_words_unescaped() -> None:
    (block,) = blocks(
        "**Partly superseded** on `2026-11-20` by [b-89ab12cd](berlin.md#^b-89ab12cd) (update): x"
    )
    with pytest.raises(TopicFormatError, match=r"claim starts with '\*\*Partly superseded\*\*'") as error:
        check(Topic("T", (block,)), block_exists=lambda _p, _b: True)
    assert error.value.line == 3
    (later,) = blocks("In the middle, **Partly superseded** is only bold text.")
    check(Topic("T", (later,)))


# --- the workspace rules ----------------------------------------------------------------------------------


def test_a_partly_successor_in_the_same_file_must_exist_in_the_new_file() -> None:
    old, new = blocks("I live in Paris and I work as a nurse.", "I moved to Berlin.")
    check(Topic("T", (partly(old, new), new)))
    with pytest.raises(
        TopicFormatError, match=r"partly superseded by home\.md#\^b-[0-9a-f]{8}, which does not"
    ):
        check(Topic("T", (partly(old, new),)))


def test_a_partly_successor_in_another_file_is_looked_up_there() -> None:
    old, new = blocks("I live in Paris and I work as a nurse.", "I moved to Berlin.")
    asked: list[tuple[str, str]] = []

    def exists(relpath: str, bid: str) -> bool:
        asked.append((relpath, bid))
        return relpath == "topics/berlin.md"

    check(Topic("T", (partly(old, new, topic="topics/berlin.md"),)), block_exists=exists)
    assert asked == [("topics/berlin.md", new.id)]
    with pytest.raises(
        TopicFormatError, match=r"partly superseded by paris\.md#\^b-[0-9a-f]{8}, which does not exist"
    ) as error:
        check(Topic("T", (partly(old, new, topic="topics/paris.md"),)), block_exists=exists)
    assert error.value.line == 3


def test_a_block_cannot_be_partly_superseded_by_itself() -> None:
    (block,) = blocks("I live in Paris.")
    with pytest.raises(TopicFormatError, match="is partly superseded by itself") as error:
        check(Topic("T", (partly(block, block),)))
    assert error.value.line == 3


def test_a_partly_line_is_no_link_of_a_supersession_chain() -> None:
    a, b = blocks("Paris and nurse.", "Berlin.")
    # Each partly superseded by the other: no cycle, both stay current.
    check(Topic("T", (partly(a, b), partly(b, a))))
    # A superseded by B, B partly superseded by A: the chain A -> B ends at B (it is current).
    asked: list[tuple[str, str]] = []

    def elsewhere(relpath: str, bid: str) -> Supersession | None:
        asked.append((relpath, bid))
        return None

    check(Topic("T", (superseded(a, b), partly(b, a))), superseded_by=elsewhere)
    assert asked == []  # the chain stays in this file, and ends at b


def test_a_missing_partly_successor_of_a_superseded_block_names_the_partly_line() -> None:
    old, new, gone = blocks("Paris and nurse.", "Rome.", "Berlin.")
    marked = dataclasses.replace(
        superseded(old, new), partly=Supersession(gone.id, PATH, "2026-11-20", "update")
    )
    with pytest.raises(
        TopicFormatError, match=rf"partly superseded by home\.md#\^{gone.id}, which does not exist"
    ) as error:
        check(Topic("T", (marked, new)))
    assert error.value.line == 4  # superseded line 3, partly line 4


def test_removing_the_partly_successor_of_an_unchanged_block_in_the_same_file_is_refused() -> None:
    old, new = blocks("I live in Paris and I work as a nurse.", "I moved to Berlin.")
    before = Topic("T", (partly(old, new), new))
    with pytest.raises(
        TopicFormatError, match=r"partly superseded by \^b-[0-9a-f]{8}, which no longer exists"
    ) as error:
        check(Topic("T", (partly(old, new),)), before)
    assert error.value.line == 3


def test_errors_in_a_block_with_both_lines_name_lines_past_them() -> None:
    old, new = blocks("I live in Paris.", "I moved to Berlin.")
    topic = Topic("T", (dataclasses.replace(superseded(old, new), partly=partly(old, new).partly), new))
    with pytest.raises(TopicFormatError, match="not evidence of this transaction") as error:
        validate_topic(
            PATH,
            topic,
            None,
            batch_sources=("s1/n2",),
            is_archived=lambda _s, _a: True,
            block_exists=lambda _p, _b: False,
            superseded_by=nothing,
        )
    assert error.value.line == 6  # superseded 3, partly 4, claim 5, its definition 6
    broken = render_topic(topic).replace(f"^{old.id}", "^b-XYZ", 1)
    with pytest.raises(TopicFormatError, match="malformed block id") as parse_error:
        parse_topic(broken, PATH)
    assert parse_error.value.line == 5
