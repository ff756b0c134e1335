"""The superseded line of a topic block (DESIGN §12): its render, strict parse, one-file rules and the
workspace rules `validate_topic` adds (the successor exists, is not the block itself, no cycle)."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable

import pytest

from dagmem.memory.format import (
    Block,
    Supersession,
    Topic,
    TopicFormatError,
    TopicLookup,
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
STATUS = "**Superseded** on `2026-11-20` by [b-89ab12cd](berlin.md#^b-89ab12cd) (update):"
CLAIM = "I live in Paris. [^c-0123456789] ^b-1234abcd"
DEF = "[^c-0123456789]: Time: `2026-11-01`; Sources: [user](../sources/s1.md#src-0123456789abcdef)"
SAMPLE = f"""\
# Home

{STATUS}
{CLAIM}
{DEF}

I eat fish. [^c-aaaaaaaaaa] ^b-0000ffff
[^c-aaaaaaaaaa]: Time: `2026-11-21`; Sources: [user](../sources/s2.md#src-1111111111111111)
"""
BERLIN = Supersession("b-89ab12cd", "topics/berlin.md", "2026-11-20", "update")


def nothing(_relpath: str, _block_id: str) -> Supersession | None:
    return None


def check(
    new: Topic,
    old: Topic | None = None,
    *,
    batch: tuple[str, ...] = ("s1/n1", "s1/n2", "s1/n3"),
    block_exists: Callable[[str, str], bool] = lambda _p, _b: False,
    superseded_by: Callable[[str, str], Supersession | None] = nothing,
) -> None:
    validate_topic(
        PATH,
        new,
        old,
        batch_sources=batch,
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


def superseded(block: Block, by: Block, *, topic: str = PATH, reason: str = "update") -> Block:
    status = Supersession(by.id, topic, "2026-11-20", reason)  # type: ignore[arg-type]
    return dataclasses.replace(block, superseded=status)


# --- render and parse ---------------------------------------------------------------------------------


def test_a_superseded_block_parses_with_its_successor_date_and_reason() -> None:
    topic = parse_topic(SAMPLE, PATH)
    old, new = topic.blocks
    assert old.superseded == BERLIN
    assert (old.id, old.claim) == ("b-1234abcd", "I live in Paris.")
    assert new.superseded is None
    assert render_topic(topic) == SAMPLE


def test_the_status_line_is_the_first_line_of_the_block_exactly() -> None:
    block = parse_topic(SAMPLE, PATH).blocks[0]
    assert render_block(block).split("\n") == [STATUS, CLAIM, DEF]
    retraction = dataclasses.replace(BERLIN, topic=PATH, reason="retraction")
    assert render_block(dataclasses.replace(block, superseded=retraction)).split("\n")[0] == (
        "**Superseded** on `2026-11-20` by [b-89ab12cd](home.md#^b-89ab12cd) (retraction):"
    )


def test_from_the_workspace_root_the_status_link_points_into_topics() -> None:
    block = parse_topic(SAMPLE, PATH).blocks[0]
    first = render_block(block, base="topics/").split("\n")[0]
    assert first == STATUS.replace("(berlin.md#", "(topics/berlin.md#")


def test_marking_a_block_superseded_keeps_its_id_and_render_then_parse_gives_it_back() -> None:
    old, new = blocks("I live in Paris.", "I moved to Berlin.")
    marked = superseded(old, new)
    assert marked.id == old.id == block_id(PATH, "I live in Paris.", set())
    topic = Topic("Home", (marked, new))
    check(topic)
    assert parse_topic(render_topic(topic), PATH) == topic


def test_files_without_a_status_line_read_as_all_current() -> None:
    text = "# T\n\nA. [^c-0123456789] ^b-0123abcd\n" + DEF.replace("2026-11-01", "2024-01-01") + "\n"
    assert all(block.superseded is None for block in parse_topic(text, PATH).blocks)


def test_the_block_by_block_parser_reads_superseded_blocks_too() -> None:
    fast = _parse_by_blocks(SAMPLE, PATH)
    assert fast is not None
    assert fast == _parse_lines(SAMPLE, PATH)


def edit(old: str, new: str, text: str = SAMPLE) -> str:
    assert old in text
    return text.replace(old, new, 1)


MALFORMED = [
    (edit("`2026-11-20`", "2026-11-20"), 3, "malformed superseded line"),
    (edit("(update):", "(update)"), 3, "malformed superseded line"),
    (edit("(update):", "(update): and more"), 3, "malformed superseded line"),
    (edit("**Superseded** on", "**Superseded**  on"), 3, "malformed superseded line"),
    (edit("**Superseded**", " **Superseded**"), 3, "malformed superseded line"),
    (edit("**Superseded** on", "**Superseded** since"), 3, "malformed superseded line"),
    (edit(" by [b-89ab12cd]", " by b-89ab12cd"), 3, "malformed superseded line"),
    (edit("(update)", "(moved)"), 3, "'moved' is not one of update, retraction"),
    (edit("(update)", "(Update)"), 3, "is not one of update, retraction"),
    (edit("[b-89ab12cd](", "[Berlin]("), 3, "link text 'Berlin' is not its block id 'b-89ab12cd'"),
    (edit("[b-89ab12cd](", "[b-00000000]("), 3, "is not its block id"),
    (edit("(berlin.md#", "(../berlin.md#"), 3, "is not <slug>.md#^b-<8 hex>"),
    (edit("(berlin.md#", "(https://x.example/berlin.md#"), 3, "is not <slug>.md#^b-<8 hex>"),
    (edit("berlin.md#^b", "berlin.md#b"), 3, "is not <slug>.md#^b-<8 hex>"),
    (edit("(berlin.md#", "(Berlin.md#"), 3, "is not <slug>.md#^b-<8 hex>"),
    (SAMPLE.replace("b-89ab12cd", "b-89AB12CD"), 3, "malformed successor block id 'b-89AB12CD'"),
    (edit("`2026-11-20`", "`2026-02-30`"), 3, "superseded line: date '2026-02-30' is not a real calendar"),
    (edit("`2026-11-20`", "`20261120`"), 3, "superseded line: date '20261120' is not YYYY-MM-DD"),
    (edit(STATUS + "\n", STATUS + "\n" + STATUS + "\n"), 4, "more than one superseded line"),
    (edit(CLAIM + "\n" + DEF + "\n", ""), 3, "not followed by its block's claim line"),
    (edit(CLAIM, "**Superseded** I live in Paris. [^c-0123456789] ^b-1234abcd"), 4, "more than one"),
    (edit(STATUS + "\n" + CLAIM, CLAIM + "\n" + STATUS), 4, "malformed definition line"),
    (edit(STATUS + "\n" + CLAIM + "\n" + DEF, CLAIM + "\n" + DEF + "\n" + STATUS), 5, "malformed definition"),
    (edit(STATUS + "\n", STATUS + "\n\n"), 3, "not followed by its block's claim line"),
    (edit(STATUS + "\n" + CLAIM + "\n", STATUS + "\n" + DEF + "\n" + CLAIM + "\n"), 4, "definition line"),
]


@pytest.mark.parametrize(("text", "line", "fragment"), MALFORMED)
def test_a_malformed_status_line_is_refused_naming_its_line_and_rule(
    text: str, line: int, fragment: str
) -> None:
    with pytest.raises(TopicFormatError) as error:
        parse_topic(text, PATH)
    assert fragment in error.value.reason
    assert (error.value.path, error.value.line) == (PATH, line)
    assert _parse_by_blocks(text, PATH) is None  # the fast path hands it to the line parser


@pytest.mark.parametrize(
    ("status", "fragment"),
    [
        (dataclasses.replace(BERLIN, by="b-1"), "malformed successor block id 'b-1'"),
        (dataclasses.replace(BERLIN, topic="berlin.md"), "successor topic 'berlin.md' is not topics/"),
        (dataclasses.replace(BERLIN, topic="topics/a/b.md"), "is not topics/<slug>.md"),
        (dataclasses.replace(BERLIN, date="2026-13-01"), "not a real calendar date"),
        (dataclasses.replace(BERLIN, reason="moved"), "'moved' is not one of update, retraction"),  # type: ignore[arg-type]
    ],
)
def test_a_malformed_supersession_object_is_refused_on_its_status_line(
    status: Supersession, fragment: str
) -> None:
    first, second = blocks("One.", "Two.")
    topic = Topic("T", (first, dataclasses.replace(second, superseded=status)))
    with pytest.raises(TopicFormatError) as error:
        check(topic, block_exists=lambda _p, _b: True)
    assert fragment in error.value.reason
    assert error.value.line == 6  # title, empty, block 1 (2 lines), empty: block 2 starts at line 6


# --- forgery: record text lands in a claim line only -------------------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        STATUS + " I live in Paris.",
        f"Note.\n{STATUS}\nI live in Paris.",
        f"\n\n{STATUS}\n{CLAIM}\n{DEF}\n\nx",
        "**Superseded** by nothing at all",
    ],
)
def test_record_text_that_forges_a_status_line_stays_inert_in_its_claim(said: str) -> None:
    (block,) = blocks(inert(said))
    check(Topic("T", (block,)))
    parsed = parse_topic(render_topic(Topic("T", (block,))), PATH)
    assert parsed.blocks == (block,)
    assert parsed.blocks[0].superseded is None
    assert parsed.blocks[0].claim == inert(said)


def test_a_claim_may_not_start_with_the_status_word_unescaped() -> None:
    (block,) = blocks("**Superseded** on `2026-11-20` by [b-89ab12cd](berlin.md#^b-89ab12cd) (update): x")
    with pytest.raises(TopicFormatError, match=r"claim starts with '\*\*Superseded\*\*'") as error:
        check(Topic("T", (block,)), block_exists=lambda _p, _b: True)
    assert error.value.line == 3
    (later,) = blocks("In the middle, **Superseded** is only bold text.")
    check(Topic("T", (later,)))


# --- the workspace rules ----------------------------------------------------------------------------------


def test_a_successor_in_the_same_file_must_exist_in_the_new_file() -> None:
    old, new = blocks("I live in Paris.", "I moved to Berlin.")
    check(Topic("T", (superseded(old, new), new)))
    with pytest.raises(
        TopicFormatError, match=r"superseded by home\.md#\^b-[0-9a-f]{8}, which does not exist"
    ):
        check(Topic("T", (superseded(old, new),)))


def test_a_successor_in_another_file_is_looked_up_there() -> None:
    old, new = blocks("I live in Paris.", "I moved to Berlin.")
    asked: list[tuple[str, str]] = []

    def exists(relpath: str, bid: str) -> bool:
        asked.append((relpath, bid))
        return relpath == "topics/berlin.md"

    check(Topic("T", (superseded(old, new, topic="topics/berlin.md"),)), block_exists=exists)
    assert asked == [("topics/berlin.md", new.id)]
    with pytest.raises(TopicFormatError, match="which does not exist") as error:
        check(Topic("T", (superseded(old, new, topic="topics/paris.md"),)), block_exists=exists)
    assert error.value.line == 3


def test_a_block_cannot_supersede_itself() -> None:
    (block,) = blocks("I live in Paris.")
    with pytest.raises(TopicFormatError, match="superseded by itself") as error:
        check(Topic("T", (superseded(block, block),)))
    assert error.value.line == 3


def test_a_chain_is_fine_and_a_cycle_in_one_file_is_refused() -> None:
    a, b, c = blocks("Paris.", "Berlin.", "Rome.")
    check(Topic("T", (superseded(a, b), superseded(b, c), c)))
    with pytest.raises(TopicFormatError, match="supersession cycle") as error:
        check(Topic("T", (superseded(a, b), superseded(b, c), superseded(c, a))))
    assert error.value.line == 3
    assert "home.md#^" + a.id in error.value.reason


def test_a_cycle_across_files_is_refused_through_superseded_by() -> None:
    a, b = blocks("Paris.", "Berlin.")
    elsewhere = {("topics/berlin.md", b.id): Supersession(a.id, PATH, "2026-11-21", "retraction")}
    topic = Topic("T", (superseded(a, b, topic="topics/berlin.md"),))
    with pytest.raises(TopicFormatError, match=r"supersession cycle: home\.md#\^.* -> berlin\.md#\^"):
        check(topic, block_exists=lambda _p, _b: True, superseded_by=lambda p, b_: elsewhere.get((p, b_)))
    check(topic, block_exists=lambda _p, _b: True)  # the other file's block is current: a chain of one


def test_a_chain_running_into_an_older_cycle_elsewhere_is_refused_and_ends() -> None:
    a, b = blocks("Paris.", "Berlin.")
    loop = {
        ("topics/x.md", "b-00000001"): Supersession("b-00000002", "topics/x.md", "2026-01-01", "update"),
        ("topics/x.md", "b-00000002"): Supersession("b-00000001", "topics/x.md", "2026-01-01", "update"),
    }
    start = Block(
        a.id, a.claim, a.citations, Supersession("b-00000001", "topics/x.md", "2026-01-01", "update")
    )
    with pytest.raises(TopicFormatError, match="supersession cycle"):
        check(
            Topic("T", (start, b)),
            block_exists=lambda _p, _b: True,
            superseded_by=lambda p, x: loop.get((p, x)),
        )


def test_a_transaction_may_mark_any_old_block_superseded_without_its_sources_in_the_batch() -> None:
    taken: set[str] = set()
    old = make_block(PATH, "I live in Paris.", [("2026-11-01", [("user", "s0/old")])], taken)
    new = make_block(PATH, "I moved to Berlin.", [("2026-11-20", [("user", "s1/n1")])], taken)
    check(Topic("T", (superseded(old, new), new)), Topic("T", (old,)), batch=("s1/n1",))


def test_removing_the_successor_of_an_unchanged_block_in_the_same_file_is_refused() -> None:
    old, new = blocks("I live in Paris.", "I moved to Berlin.")
    before = Topic("T", (superseded(old, new), new))
    with pytest.raises(TopicFormatError, match="which no longer exists") as error:
        check(Topic("T", (superseded(old, new),)), before)
    assert error.value.line == 3


def test_errors_in_a_superseded_block_name_lines_past_its_status_line() -> None:
    old, new = blocks("I live in Paris.", "I moved to Berlin.")
    topic = Topic("T", (superseded(old, new), new))
    with pytest.raises(TopicFormatError, match="not evidence of this transaction") as error:
        check(topic, batch=("s1/n2",))
    assert error.value.line == 5  # status 3, claim 4, its definition 5
    text = render_topic(topic)
    broken = text.replace(f"^{old.id}", "^b-XYZ", 1)
    with pytest.raises(TopicFormatError, match="malformed block id") as parse_error:
        parse_topic(broken, PATH)
    assert parse_error.value.line == 4


# --- TopicLookup: the files after the transaction, each read once ------------------------------------------


def test_topic_lookup_reads_each_file_once_and_answers_for_missing_files() -> None:
    reads: list[str] = []
    files = {"topics/home.md": SAMPLE.encode()}

    def read(relpath: str) -> bytes | None:
        reads.append(relpath)
        return files.get(relpath)

    lookup = TopicLookup(read)
    assert lookup.superseded_by("topics/home.md", "b-1234abcd") == BERLIN
    assert lookup.superseded_by("topics/home.md", "b-0000ffff") is None
    assert lookup.block_exists("topics/home.md", "b-0000ffff")
    assert not lookup.block_exists("topics/home.md", "b-99999999")
    assert not lookup.block_exists("topics/none.md", "b-1234abcd")
    assert lookup.superseded_by("topics/none.md", "b-1234abcd") is None
    assert reads == ["topics/home.md", "topics/none.md"]


def test_topic_lookup_raises_the_format_error_of_a_broken_file() -> None:
    lookup = TopicLookup(lambda _relpath: b"not a topic\n")
    with pytest.raises(TopicFormatError, match="first line is not the title"):
        lookup.block_exists("topics/bad.md", "b-00000000")


def test_checking_a_long_chain_follows_each_link_once() -> None:
    chain = blocks(*(f"Value {n}." for n in range(50)))
    last = dataclasses.replace(BERLIN, topic="topics/x.md")
    marked = [superseded(b, after) for b, after in itertools.pairwise(chain)]
    marked.append(dataclasses.replace(chain[-1], superseded=last))
    asked: list[tuple[str, str]] = []

    def elsewhere(relpath: str, bid: str) -> Supersession | None:
        asked.append((relpath, bid))
        return None

    batch = tuple(f"s1/n{n}" for n in range(1, 51))
    check(Topic("T", tuple(marked)), batch=batch, block_exists=lambda _p, _b: True, superseded_by=elsewhere)
    assert asked == [("topics/x.md", BERLIN.by)]  # the end is looked up once, not once per block
