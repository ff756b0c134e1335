from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dagmem.memory.errors import InvalidInput
from dagmem.memory.format import (
    Block,
    Citation,
    SourceRef,
    Supersession,
    Topic,
    TopicFormatError,
    anchor_of,
    block_id,
    block_links,
    citation_id,
    count_tokens,
    inert,
    make_block,
    parse_topic,
    plan_core,
    render_core,
    render_topic,
    validate_topic,
)
from dagmem.memory.format import _core as core
from dagmem.memory.format._topic_parse import _parse_by_blocks, _parse_lines

PATH = "topics/prefs.md"
A1 = "0123456789abcdef"

SAMPLE = """\
# Preferences

The user prefers dark mode. [^c-0123456789] ^b-0123abcd
[^c-0123456789]: Time: `2024-05-01`; Sources: [user (s1#3)](../sources/s1.md#src-0123456789abcdef)

Tea, see [dark mode](prefs.md#^b-0123abcd) and \\[not a link\\](x). [^c-aaaaaaaaaa] [^c-bbbbbbbbbb] ^b-89abcdef
[^c-aaaaaaaaaa]: Time: `2024-05-02`; Sources: [user](../sources/s1.md#src-1111111111111111), [assistant](../sources/s-2.md#src-2222222222222222)
[^c-bbbbbbbbbb]: Time: `2024-02-29`; Sources: [user](../sources/s-2.md#src-3333333333333333)
"""

# The same with its second block superseded by the first (a viewer reads its status line first).
SUPERSEDED_SAMPLE = SAMPLE.replace(
    "\n\nTea,", "\n\n**Superseded** on `2024-05-03` by [b-0123abcd](prefs.md#^b-0123abcd) (retraction):\nTea,"
)


def always(_a: str, _b: str) -> bool:
    return True


def never(_a: str, _b: str) -> bool:
    return False


def check(
    new: Topic,
    old: Topic | None = None,
    *,
    batch: Sequence[str] = (),
    is_archived: Callable[[str, str], bool] = always,
    block_exists: Callable[[str, str], bool] = never,
    superseded_by: Callable[[str, str], Supersession | None] = lambda _p, _b: None,
) -> None:
    validate_topic(
        PATH,
        new,
        old,
        batch_sources=batch,
        is_archived=is_archived,
        block_exists=block_exists,
        superseded_by=superseded_by,
    )


def one_block_topic(claim: str, sources: Sequence[str] = ("s1/n1",), date: str = "2024-05-01") -> Topic:
    block = make_block(PATH, claim, [(date, [(f"user {i}", s) for i, s in enumerate(sources)])], set())
    return Topic("T", (block,))


def reason_of(error: pytest.ExceptionInfo[TopicFormatError]) -> str:
    return error.value.reason


# --- inert and anchors ----------------------------------------------------------------------------------


def test_inert_folds_each_newline_to_one_space_and_escapes_markdown() -> None:
    assert inert("a\r\nb\rc\nd\n\ne") == "a b c d  e"
    assert inert("\\[]()^<>`*_#|") == "\\\\\\[\\]\\(\\)\\^\\<\\>\\`\\*\\_\\#\\|"
    assert inert("plain text, 42.") == "plain text, 42."


def test_inert_folds_unicode_line_separators_and_replaces_lone_surrogates() -> None:
    assert inert("a\u2028b\x85c\vd") == "a b c d"
    assert inert("x\ud800y") == "x\ufffdy"


def test_anchor_of_is_src_and_16_hex_of_sha256_of_the_source_id() -> None:
    assert anchor_of("s1/n1") == "src-" + hashlib.sha256(b"s1/n1").hexdigest()[:16]


# --- round trips ----------------------------------------------------------------------------------------


def test_parse_then_render_gives_the_same_text() -> None:
    topic = parse_topic(SAMPLE, PATH)
    assert render_topic(topic) == SAMPLE
    assert topic.title == "Preferences"
    assert [b.id for b in topic.blocks] == ["b-0123abcd", "b-89abcdef"]
    second = topic.blocks[1]
    assert second.claim == "Tea, see [dark mode](prefs.md#^b-0123abcd) and \\[not a link\\](x)."
    assert [c.id for c in second.citations] == ["c-aaaaaaaaaa", "c-bbbbbbbbbb"]
    assert second.citations[0].sources[1] == SourceRef("assistant", "s-2", "src-2222222222222222")


def test_render_then_parse_gives_the_same_topic() -> None:
    taken: set[str] = set()
    blocks = (
        make_block(
            PATH, "First claim.", [("2024-01-02", [("user", "s1/n1"), ("assistant", "s1/n2")])], taken
        ),
        make_block(
            PATH,
            "Second claim.",
            [("2024-01-03", [("user", "s2/n9")]), ("2024-01-04", [("x", "s2/n8")])],
            taken,
        ),
    )
    topic = Topic("Things", blocks)
    assert parse_topic(render_topic(topic), PATH) == topic


def test_a_title_only_file_round_trips() -> None:
    assert parse_topic("# Empty\n", PATH) == Topic("Empty", ())
    assert render_topic(Topic("Empty", ())) == "# Empty\n"


labels = st.text(
    st.characters(codec="utf-8", exclude_characters="[]\\`\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"),
    min_size=1,
).filter(lambda s: bool(s.strip()) and not s.startswith("^"))
node_ids = st.builds(str.__add__, st.sampled_from("aZ09"), st.text("aZ09_-", max_size=8))
source_ids = st.builds(lambda s, n: f"{s}/{n}", node_ids, node_ids)
groups = st.lists(
    st.tuples(
        st.dates().map(lambda d: d.isoformat()),
        st.lists(st.tuples(labels, source_ids), min_size=1, max_size=3, unique_by=lambda p: p[1]),
    ),
    min_size=1,
    max_size=3,
)
claims = st.text(min_size=1).map(inert).filter(lambda s: bool(s.strip()))


# A block's status: current (None), or superseded by the next block of this file (a chain, no cycle) or by
# a block of another file.
statuses = st.none() | st.tuples(
    st.dates().map(lambda d: d.isoformat()),
    st.sampled_from(["update", "retraction"]),
    st.none() | st.from_regex(r"b-[0-9a-f]{8}", fullmatch=True),
)


def with_statuses(blocks: list[Block], chosen: Sequence[tuple[str, str, str | None] | None]) -> list[Block]:
    out = []
    for n, (block, status) in enumerate(zip(blocks, chosen, strict=True)):
        if status is None:
            out.append(block)
            continue
        date, reason, elsewhere = status
        if elsewhere is None and n + 1 < len(blocks):
            by, topic = blocks[n + 1].id, PATH
        else:
            by, topic = elsewhere or "b-0000abcd", "topics/other-1.md"
        supersession = Supersession(by, topic, date, reason)  # type: ignore[arg-type]
        out.append(dataclasses.replace(block, superseded=supersession))
    return out


@settings(max_examples=200)
@given(title=claims, contents=st.lists(st.tuples(claims, groups, statuses), max_size=4))
def test_valid_topics_round_trip(
    title: str,
    contents: list[tuple[str, list[tuple[str, list[tuple[str, str]]]], tuple[str, str, str | None] | None]],
) -> None:
    taken: set[str] = set()
    made = [make_block(PATH, claim, g, taken) for claim, g, _ in contents]
    topic = Topic(title, tuple(with_statuses(made, [status for _, _, status in contents])))
    check(
        topic, batch=[s for _, g, _ in contents for _, sources in g for _, s in sources], block_exists=always
    )
    text = render_topic(topic)
    assert parse_topic(text, PATH) == topic
    assert render_topic(parse_topic(text, PATH)) == text


@settings(max_examples=300)
@given(
    cuts=st.lists(
        st.tuples(
            st.integers(0, len(SUPERSEDED_SAMPLE)),
            st.integers(0, 40),
            st.text("[]()^`#:;, \n\\bc-0a*S", max_size=6),
        )
    )
)
@pytest.mark.parametrize("sample", [SAMPLE, SUPERSEDED_SAMPLE])
def test_any_text_either_parses_and_renders_back_exactly_or_raises_topic_format_error(
    sample: str, cuts: list[tuple[int, int, str]]
) -> None:
    text = sample
    for at, length, insert in cuts:
        text = text[:at] + insert + text[at + length :]
    try:
        topic = parse_topic(text, PATH)
    except TopicFormatError:
        return  # refused with our error: never any other exception
    assert render_topic(topic) == text


@settings(max_examples=300)
@given(
    cuts=st.lists(
        st.tuples(
            st.integers(0, len(SUPERSEDED_SAMPLE)),
            st.integers(0, 40),
            st.text("[]()^`#:;, \n\\bc-0a*S", max_size=6),
        )
    )
)
@pytest.mark.parametrize("sample", [SAMPLE, SUPERSEDED_SAMPLE])
def test_the_block_by_block_parser_agrees_with_the_line_parser_on_any_text(
    sample: str, cuts: list[tuple[int, int, str]]
) -> None:
    # parse_topic takes the cached block-by-block path when it can; the line parser is the reference.
    text = sample
    for at, length, insert in cuts:
        text = text[:at] + insert + text[at + length :]
    try:
        expected = _parse_lines(text, PATH)
    except TopicFormatError:
        expected = None
    fast = _parse_by_blocks(text, PATH)
    assert fast is None or fast == expected  # None: it hands the text to the line parser
    if expected is None:
        with pytest.raises(TopicFormatError):
            parse_topic(text, PATH)
    else:
        assert parse_topic(text, PATH) == expected


def test_the_superseded_sample_the_fuzzers_cut_is_itself_valid() -> None:
    second = parse_topic(SUPERSEDED_SAMPLE, PATH).blocks[1]
    assert second.superseded == Supersession("b-0123abcd", PATH, "2024-05-03", "retraction")
    assert render_topic(parse_topic(SUPERSEDED_SAMPLE, PATH)) == SUPERSEDED_SAMPLE


def test_a_file_made_of_blocks_seen_before_is_parsed_block_by_block() -> None:
    topic = parse_topic(SAMPLE, PATH)
    assert _parse_by_blocks(SAMPLE, PATH) == topic
    assert _parse_by_blocks(SAMPLE + "\n", PATH) is None  # an empty line at the end: the line parser's case


# --- ids ------------------------------------------------------------------------------------------------


def test_block_id_is_the_hash_of_path_and_claim_and_counts_on_collision() -> None:
    first = "b-" + hashlib.sha256(b"topics/prefs.md\nA claim.").hexdigest()[:8]
    second = "b-" + hashlib.sha256(b"topics/prefs.md\nA claim.\n1").hexdigest()[:8]
    third = "b-" + hashlib.sha256(b"topics/prefs.md\nA claim.\n2").hexdigest()[:8]
    assert block_id(PATH, "A claim.", set()) == first
    assert block_id(PATH, "A claim.", {first}) == second
    assert block_id(PATH, "A claim.", {first, second}) == third
    assert block_id("topics/other.md", "A claim.", set()) != first


def test_citation_id_hashes_the_block_id_and_sorted_sources_and_counts_on_collision() -> None:
    first = "c-" + hashlib.sha256(b"b-0123abcd\ns1/a\ns1/b").hexdigest()[:10]
    assert citation_id("b-0123abcd", ["s1/b", "s1/a"], set()) == first
    assert citation_id("b-0123abcd", ["s1/a", "s1/b"], set()) == first
    counted = "c-" + hashlib.sha256(b"b-0123abcd\ns1/a\ns1/b\n1").hexdigest()[:10]
    assert citation_id("b-0123abcd", ["s1/a", "s1/b"], {first}) == counted


def test_make_block_is_deterministic_and_records_its_ids_in_taken() -> None:
    groups = [("2024-01-02", [("user", "s1/n1")]), ("2024-01-02", [("user", "s1/n1")])]
    taken_a: set[str] = set()
    taken_b: set[str] = set()
    a = make_block(PATH, "Same.", groups, taken_a)
    b = make_block(PATH, "Same.", groups, taken_b)
    assert render_topic(Topic("T", (a,))).encode() == render_topic(Topic("T", (b,))).encode()
    assert taken_a == {a.id, *(c.id for c in a.citations)}
    # Two identical groups in one block: the second citation id gets the counter.
    assert a.citations[0].id != a.citations[1].id
    assert a.citations[1].id == citation_id(a.id, ["s1/n1"], {a.citations[0].id})
    # The same claim again in the same file gets the next block id.
    again = make_block(PATH, "Same.", groups, taken_a)
    assert again.id == block_id(PATH, "Same.", {a.id})


def test_make_block_builds_source_refs_from_source_ids() -> None:
    block = make_block(PATH, "C.", [("2024-01-02", [("user", "s1/n1")])], set())
    assert block.citations[0].sources == (SourceRef("user", "s1", anchor_of("s1/n1")),)


@pytest.mark.parametrize(
    ("groups", "fragment"),
    [
        ([], "at least one citation"),
        ([("2024-01-02", [])], "at least one source"),
        ([("2024-01-02", [("u", "no-slash")])], "invalid source id"),
        ([("2024-01-02", [("u", "s1/n1"), ("v", "s1/n1")])], "twice"),
    ],
)
def test_make_block_refuses_bad_groups_and_leaves_taken_alone(
    groups: list[tuple[str, list[tuple[str, str]]]], fragment: str
) -> None:
    taken: set[str] = set()
    with pytest.raises(InvalidInput, match=fragment):
        make_block(PATH, "C.", groups, taken)
    assert taken == set()


# --- the format, rule by rule ---------------------------------------------------------------------------

CLAIM1 = "The user prefers dark mode. [^c-0123456789] ^b-0123abcd"
DEF1 = "[^c-0123456789]: Time: `2024-05-01`; Sources: [user (s1#3)](../sources/s1.md#src-0123456789abcdef)"


def edit(old: str, new: str, text: str = SAMPLE) -> str:
    assert old in text
    return text.replace(old, new, 1)


FORMAT_CASES = [
    ("", 1, "file is empty"),
    (SAMPLE[:-1], 8, "does not end with a newline"),
    (SAMPLE + "\n", 9, "empty line at the end"),
    (edit("dark mode.", "dark\rmode."), 3, "line break character"),
    (edit("dark mode.", "dark\u2028mode."), 3, "line break character"),
    (edit("# Preferences", "Preferences"), 1, "first line is not the title"),
    (edit("# Preferences", "## Preferences"), 1, "first line is not the title"),
    (edit("# Preferences", "#  "), 1, "title is empty"),
    (edit("# Preferences\n\n", "# Preferences\n"), 2, "no empty line after the title"),
    (edit("# Preferences", "# Prefs [^c-0123456789]"), 1, "footnote reference '[^' inside the title"),
    (edit("# Preferences", "# [Prefs](prefs.md#^b-0123abcd)"), 1, "markdown link inside the title"),
    (edit(DEF1 + "\n\n", DEF1 + "\n\n\n"), 6, "more than one empty line"),
    (edit(CLAIM1, "The user prefers dark mode. [^c-0123456789]"), 3, "does not end with its block id"),
    (edit("^b-0123abcd\n", "^b-0123ABCD\n"), 3, "malformed block id"),
    (edit("^b-0123abcd\n", "^b-0123abc\n"), 3, "malformed block id"),
    (edit(" [^c-0123456789] ^b-0123abcd", " ^b-0123abcd"), 3, "block has no citation"),
    (edit(CLAIM1 + "\n", ""), 3, "block starts with a definition line"),
    (edit("\n" + DEF1, ""), 3, "used but has no definition"),
    (edit(" [^c-bbbbbbbbbb] ^b-89abcdef", " ^b-89abcdef"), 8, "has no use in its claim"),
    (edit(DEF1, DEF1 + "\n" + DEF1), 5, "defined twice"),
    (edit("[^c-0123456789] ^b", "[^c-0123456789] [^c-0123456789] ^b"), 3, "used twice in one claim"),
    (
        edit("[^c-aaaaaaaaaa] [^c-bbbbbbbbbb] ^b", "[^c-bbbbbbbbbb] [^c-aaaaaaaaaa] ^b"),
        7,
        "not in the order of their citations",
    ),
    (edit("^b-89abcdef", "^b-0123abcd"), 6, "duplicate block id"),
    (
        SAMPLE.replace("c-bbbbbbbbbb", "c-0123456789"),
        8,
        "duplicate citation id",
    ),
    (SAMPLE.replace("c-0123456789", "c-012345678Z"), 4, "malformed citation id"),
    (edit("Time: `2024-05-01`;", "Time: 2024-05-01;"), 4, "malformed definition line"),
    (edit("Time: `2024-05-01`", "Time: `2024-5-1`"), 4, "is not YYYY-MM-DD"),
    (edit("Time: `2024-05-01`", "Time: `2023-02-29`"), 4, "not a real calendar date"),
    (edit("Time: `2024-05-01`", "Time: `2024-13-01`"), 4, "not a real calendar date"),
    (edit("Sources: [user (s1#3)](../sources/s1.md#src-0123456789abcdef)", "Sources: "), 4, "has no source"),
    (
        edit("](../sources/s1.md#src-0123456789abcdef)", "](sources/s1.md#src-0123456789abcdef)"),
        4,
        "malformed Sources list",
    ),
    (
        edit("](../sources/s1.md#src-0123456789abcdef)", "](http://evil.example/)"),
        4,
        "malformed Sources list",
    ),
    (edit("1111), [assistant]", "1111),[assistant]"), 7, "malformed Sources list"),
    (edit("[user (s1#3)]", "[]"), 4, "source label is empty"),
    (edit("[user (s1#3)]", "[  ]"), 4, "source label is empty"),
    (edit("[user (s1#3)]", "[a[b]"), 4, "contains '['"),
    (edit("[user (s1#3)]", "[a\\]"), 4, "backslash"),
    (edit("[user (s1#3)]", "[a`b]"), 4, "backtick"),
    (edit("[user (s1#3)]", "[^x]"), 4, "starts with '^'"),
    (edit("../sources/s1.md#", "../sources/bad.id.md#"), 4, "invalid session id"),
    (edit("../sources/s1.md#", "../sources/a/b.md#"), 4, "invalid session id"),
    (edit("#src-0123456789abcdef", "#src-0123"), 4, "malformed source anchor"),
    (edit("#src-0123456789abcdef", "#0123456789abcdef"), 4, "malformed source anchor"),
    (
        edit(DEF1, DEF1 + ", [again](../sources/s1.md#src-0123456789abcdef)"),
        4,
        "listed twice in one citation",
    ),
    (edit("The user prefers dark mode.", " "), 3, "claim is empty"),
    (edit("The user prefers dark mode.", "# Heading"), 3, "heading"),
    (edit("The user prefers dark mode.", "  ## Heading"), 3, "heading"),
    (edit("The user prefers dark mode.", "see [x](http://evil.example)"), 3, "markdown link"),
    (
        edit("The user prefers dark mode.", "see ![x](../sources/s1.md#src-0123456789abcdef)"),
        3,
        "markdown link",
    ),
    (edit("The user prefers dark mode.", "see [x](other.md#b-0123abcd)"), 3, "markdown link"),
    (edit("The user prefers dark mode.", "see [x](../x.md#^b-0123abcd)"), 3, "markdown link"),
    (edit("The user prefers dark mode.", "forged[^c-1111111111]"), 3, "footnote reference"),
    (edit("The user prefers dark mode.", "x \\\\[^c-1111111111]"), 3, "footnote reference"),
    (edit("The user prefers dark mode.", "forged ^b-11111111 here"), 3, "block id marker"),
    (edit("The user prefers dark mode.", "[^b-1](prefs.md#^b-0123abcd)"), 3, "footnote reference"),
    (edit("The user prefers dark mode.", "[x ^b-1](prefs.md#^b-0123abcd)"), 3, "block id marker"),
    (edit("The user prefers dark mode.", '<a href="../sources/s1.md#src-1">x</a>'), 3, "raw HTML"),
    (edit("The user prefers dark mode.", "<https://evil.example>"), 3, "raw HTML"),
]


@pytest.mark.parametrize(("text", "line", "fragment"), FORMAT_CASES)
def test_parse_rejects_each_format_rule_with_a_reason_and_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(TopicFormatError) as error:
        parse_topic(text, PATH)
    assert fragment in reason_of(error)
    assert error.value.line == line
    assert error.value.path == PATH


def test_error_message_names_path_line_and_reason() -> None:
    error = TopicFormatError("topics/x.md", 7, "duplicate block id ^b-00000000")
    assert "topics/x.md" in str(error)
    assert "line 7" in str(error)
    assert "duplicate block id ^b-00000000" in str(error)
    assert isinstance(error, InvalidInput)
    assert "topics/x.md" in str(TopicFormatError("topics/x.md", None, "why"))


@pytest.mark.parametrize(
    "claim",
    ["x" + " [^c-0123456789]" * 20000, "[^" + "[" * 100000, "[a](" * 50000],
)
def test_hostile_long_claim_lines_are_rejected(claim: str) -> None:
    with pytest.raises(TopicFormatError) as error:
        parse_topic(edit("The user prefers dark mode.", claim), PATH)
    assert error.value.line == 3


def test_escaped_markdown_in_a_claim_is_allowed() -> None:
    claim = "a \\[x\\](y) \\^b-12345678 \\[\\^c-0123456789\\] \\<b\\> \\# and 2 < 3 and [bracket] alone"
    topic = one_block_topic(claim)
    check(topic, batch=["s1/n1"])
    assert parse_topic(render_topic(topic), PATH) == topic


# --- validation of objects (what make_block or a caller may produce) -------------------------------------


def replace_source(topic: Topic, **changes: str) -> Topic:
    block = topic.blocks[0]
    source = block.citations[0].sources[0]
    new_source = SourceRef(**{**source.__dict__, **changes})
    citation = Citation(block.citations[0].id, block.citations[0].date, (new_source,))
    return Topic(topic.title, (Block(block.id, block.claim, (citation,)),))


@pytest.mark.parametrize(
    ("mutate", "line", "fragment"),
    [
        (lambda t: Topic(" ", t.blocks), 1, "title is empty"),
        (lambda t: Topic("a\nb", t.blocks), 1, "title contains a line break"),
        (
            lambda t: Topic(t.title, (Block("b-1", t.blocks[0].claim, t.blocks[0].citations),)),
            3,
            "malformed block id",
        ),
        (
            lambda t: Topic(t.title, (Block(t.blocks[0].id, "a\nb", t.blocks[0].citations),)),
            3,
            "claim contains a line break",
        ),
        (
            lambda t: Topic(t.title, (Block(t.blocks[0].id, "x\ud800", t.blocks[0].citations),)),
            3,
            "lone surrogate",
        ),
        (lambda t: Topic(t.title, (Block(t.blocks[0].id, "x", ()),)), 3, "block has no citation"),
        (lambda t: Topic(t.title, (t.blocks[0], t.blocks[0])), 6, "duplicate block id"),
        (
            lambda t: Topic(
                t.title, (Block(t.blocks[0].id, "x", (Citation("c-0000000000", "2024-01-01", ()),)),)
            ),
            4,
            "has no source",
        ),
        (
            lambda t: Topic(
                t.title,
                (
                    Block(
                        t.blocks[0].id,
                        "x",
                        (Citation("c-x", "2024-01-01", t.blocks[0].citations[0].sources),),
                    ),
                ),
            ),
            4,
            "malformed citation id",
        ),
        (
            lambda t: Topic(
                t.title,
                (
                    Block(
                        t.blocks[0].id,
                        "x",
                        (
                            Citation(
                                t.blocks[0].citations[0].id, "2024-02-30", t.blocks[0].citations[0].sources
                            ),
                        ),
                    ),
                ),
            ),
            4,
            "not a real calendar date",
        ),
        (lambda t: replace_source(t, label=""), 4, "source label is empty"),
        (lambda t: replace_source(t, label="a]b"), 4, "contains ']'"),
        (lambda t: replace_source(t, label="a\nb"), 4, "source label contains a line break"),
        (lambda t: replace_source(t, session_id="../x"), 4, "invalid session id"),
        (lambda t: replace_source(t, anchor="src-XYZ"), 4, "malformed source anchor"),
    ],
)
def test_validate_rejects_each_object_rule(
    mutate: Callable[[Topic], Topic], line: int, fragment: str
) -> None:
    topic = mutate(one_block_topic("A claim."))
    with pytest.raises(TopicFormatError) as error:
        check(topic, batch=["s1/n1"])
    assert fragment in reason_of(error)
    assert error.value.line == line


def test_duplicate_citation_ids_across_blocks_are_rejected() -> None:
    first = one_block_topic("One.").blocks[0]
    second = one_block_topic("Two.").blocks[0]
    clash = Block(
        second.id, second.claim, (Citation(first.citations[0].id, "2024-01-01", second.citations[0].sources),)
    )
    with pytest.raises(TopicFormatError) as error:
        check(Topic("T", (first, clash)), batch=["s1/n1"])
    assert "duplicate citation id" in reason_of(error)
    assert error.value.line == 7


def test_every_source_link_must_resolve_to_an_archived_record() -> None:
    topic = one_block_topic("A claim.", sources=["s1/n1", "s2/n2"])
    calls: list[tuple[str, str]] = []

    def archived(session_id: str, anchor: str) -> bool:
        calls.append((session_id, anchor))
        return session_id == "s1"

    with pytest.raises(TopicFormatError) as error:
        check(topic, batch=["s1/n1", "s2/n2"], is_archived=archived)
    assert "does not resolve to an archived record" in reason_of(error)
    assert error.value.line == 4
    assert calls == [("s1", anchor_of("s1/n1")), ("s2", anchor_of("s2/n2"))]


# --- the batch rule -------------------------------------------------------------------------------------


def test_a_new_file_may_cite_only_sources_of_the_batch() -> None:
    topic = one_block_topic("A claim.", sources=["s1/n1", "s1/n2"])
    check(topic, batch=["s1/n1", "s1/n2", "s1/n3"])
    with pytest.raises(TopicFormatError) as error:
        check(topic, batch=["s1/n1"])
    assert "not evidence of this transaction" in reason_of(error)
    assert error.value.line == 4


def test_the_batch_rule_matches_the_session_as_well_as_the_anchor() -> None:
    topic = replace_source(one_block_topic("A claim."), session_id="s9")  # anchor of s1/n1 under s9
    with pytest.raises(TopicFormatError, match="not evidence of this transaction"):
        check(topic, batch=["s1/n1"])


def test_citations_carried_over_in_the_same_block_need_not_be_in_the_batch() -> None:
    taken: set[str] = set()
    old_block = make_block(PATH, "Old claim.", [("2024-01-01", [("user", "s0/old")])], taken)
    old = Topic("T", (old_block,))
    added = Citation(
        citation_id(old_block.id, ["s1/n1"], taken),
        "2024-02-01",
        (SourceRef("user", "s1", anchor_of("s1/n1")),),
    )
    new = Topic("T", (Block(old_block.id, old_block.claim, (*old_block.citations, added)),))
    check(new, old, batch=["s1/n1"])
    # The new citation itself still has to be batch evidence.
    with pytest.raises(TopicFormatError, match="not evidence of this transaction") as error:
        check(new, old, batch=["s1/other"])
    assert error.value.line == 5


def test_an_old_source_cannot_be_borrowed_by_another_block() -> None:
    old_block = make_block(PATH, "Old claim.", [("2024-01-01", [("user", "s0/old")])], set())
    old = Topic("T", (old_block,))
    borrowed = make_block(PATH, "New claim.", [("2024-01-01", [("user", "s0/old")])], {old_block.id})
    new = Topic("T", (old_block, borrowed))
    with pytest.raises(TopicFormatError, match="not evidence of this transaction") as error:
        check(new, old, batch=["s1/n1"])
    assert error.value.line == 7


# --- block links ----------------------------------------------------------------------------------------


def test_links_to_blocks_of_other_topics_are_checked_with_block_exists() -> None:
    topic = one_block_topic("See [that](other.md#^b-12345678) and [this](more-2.md#^b-abcdef01).")
    seen: list[tuple[str, str]] = []

    def exists(relpath: str, bid: str) -> bool:
        seen.append((relpath, bid))
        return True

    check(topic, batch=["s1/n1"], block_exists=exists)
    assert seen == [("topics/other.md", "b-12345678"), ("topics/more-2.md", "b-abcdef01")]


def test_a_dangling_block_link_is_rejected() -> None:
    topic = one_block_topic("See [that](other.md#^b-12345678).")
    with pytest.raises(TopicFormatError) as error:
        check(topic, batch=["s1/n1"], block_exists=lambda relpath, bid: relpath != "topics/other.md")
    assert "dangling block link other.md#^b-12345678" in reason_of(error)
    assert error.value.line == 3


def test_links_within_the_same_file_are_checked_against_the_new_file() -> None:
    taken: set[str] = set()
    target = make_block(PATH, "Target.", [("2024-01-01", [("user", "s1/n1")])], taken)
    linking = make_block(
        PATH, f"See [it](prefs.md#^{target.id}).", [("2024-01-01", [("user", "s1/n1")])], taken
    )

    def must_not_be_called(_relpath: str, _bid: str) -> bool:
        raise AssertionError("same-file links are resolved in the new file")

    check(Topic("T", (target, linking)), batch=["s1/n1"], block_exists=must_not_be_called)
    with pytest.raises(TopicFormatError, match="dangling block link"):
        check(Topic("T", (linking,)), batch=["s1/n1"], block_exists=always)


def test_block_links_returns_only_unescaped_links() -> None:
    links = block_links("a [x](t.md#^b-12345678) \\[y\\]\\(t.md#\\^b-12345678\\) [z](u.md#^b-abcdef01)")
    assert [(m["text"], m["slug"], m["bid"]) for m in links] == [
        ("x", "t", "b-12345678"),
        ("z", "u", "b-abcdef01"),
    ]


# --- inert() output cannot forge anything (hypothesis) ---------------------------------------------------

markdownish = st.text(
    st.sampled_from(list("[]()^<>`*_#|\\!:;,.-=~ \n\r\t\u2028bcsr0123456789af"))
    | st.characters(exclude_categories=()),
)
FORGERIES = [
    "x [^c-0123456789] ^b-01234567",
    "\n# Heading\n",
    "\n\n[^c-0123456789]: Time: `2024-01-01`; Sources: [u](../sources/s1.md#src-0123456789abcdef)\n\nx",
    "[link](other.md#^b-01234567)",
    "![img](../sources/s1.md#src-0123456789abcdef)",
    '<a id="^b-01234567"></a><https://x>',
    "**Superseded** on `2024-01-01` by [b-01234567](other.md#^b-01234567) (update): x",
    "\n**Superseded** on `2024-01-01` by [b-01234567](other.md#^b-01234567) (update):\nx",
]
EDGES = [
    "\\",
    "ends with a backslash \\",
    "<|endoftext|>",
    "    indented",
    "~~~",
    "- [ ] item",
    "&#91;x&#93;",
]


@settings(max_examples=500)
@given(text=markdownish | st.sampled_from(FORGERIES + EDGES), wrap=st.booleans())
def test_inert_text_inside_a_block_parses_and_validates_and_forges_nothing(text: str, wrap: bool) -> None:
    claim = f"Said: {inert(text)} (quoted)." if wrap else inert(text)
    if not claim.strip():
        return  # records are non-blank (DESIGN §3); a blank claim is rejected on its own rule
    topic = one_block_topic(claim)
    check(topic, batch=["s1/n1"])
    rendered = render_topic(topic)
    parsed = parse_topic(rendered, PATH)
    assert parsed == topic
    assert parsed.blocks[0].claim == claim
    assert len(parsed.blocks) == 1
    assert len(parsed.blocks[0].citations) == 1
    assert parsed.blocks[0].superseded is None
    assert block_links(claim) == []
    lines = rendered.split("\n")
    assert len(lines) == 5  # title, empty, claim, one definition, final ""
    assert lines == [*rendered.splitlines(), ""]
    assert not any(line.lstrip(" \t").startswith("#") for line in lines[1:])


@pytest.mark.parametrize("forgery", FORGERIES)
def test_the_same_forgeries_without_inert_are_rejected(forgery: str) -> None:
    raw = one_block_topic(forgery.replace("\n", " ").replace("\r", " ").strip() or "x")
    with pytest.raises(TopicFormatError):
        check(raw, batch=["s1/n1"])


# --- the core block ------------------------------------------------------------------------------------


def core_master(claims: Sequence[str]) -> tuple[str, list[Block]]:
    taken: set[str] = set()
    blocks = [
        make_block("topics/core.md", claim, [("2024-03-01", [("user", f"s1/n{i}")])], taken)
        for i, claim in enumerate(claims)
    ]
    return render_topic(Topic("Core", tuple(blocks))), blocks


def test_core_with_room_for_everything_is_the_master_with_links_moved_up() -> None:
    master, _ = core_master(["First.", "Second.", "Third."])
    out = render_core(master)
    assert out == master.replace("](../sources/", "](sources/")
    assert "../sources/" not in out
    assert count_tokens(out) <= 2000


def test_core_keeps_file_order() -> None:
    master, blocks = core_master(["Zebra.", "Apple.", "Mango."])
    out = render_core(master)
    positions = [out.index(f"^{b.id}") for b in blocks]
    assert positions == sorted(positions)
    assert plan_core(master).kept == tuple(b.id for b in blocks)


def test_core_skips_a_block_that_does_not_fit_and_still_takes_later_small_ones() -> None:
    big = "word " * 400
    master, (small1, large, small2) = core_master(["Small one.", big.strip(), "Small two."])
    whole = count_tokens(render_core(master, budget=10**6))
    budget = whole - 100  # room for everything but the big block
    plan = plan_core(master, budget=budget)
    assert plan.kept == (small1.id, small2.id)
    assert plan.skipped == (large.id,)
    assert f"^{small2.id}" in plan.text
    assert "word word" not in plan.text
    assert count_tokens(plan.text) == plan.tokens <= budget


@settings(max_examples=60, deadline=None)
@given(budget=st.integers(0, 400))
def test_core_output_is_within_budget_including_title_and_separators(budget: int) -> None:
    master, _ = core_master([f"Claim number {i} " + "x" * (i * 7) for i in range(12)])
    out = render_core(master, budget=budget)
    assert count_tokens(out) <= budget
    assert out == "" or out.startswith("# Core\n")


@settings(max_examples=30, deadline=None)
@given(budget=st.integers(0, 600), sizes=st.lists(st.integers(0, 60), max_size=10))
def test_core_pre_check_never_changes_what_is_kept(budget: int, sizes: list[int]) -> None:
    master, _ = core_master([f"Claim {i}: " + "lorem ipsum " * n for i, n in enumerate(sizes)])
    quick = plan_core(master, budget=budget)
    with mock.patch.object(core, "_JOIN_SLACK", 10**9):  # measure every candidate in full
        assert plan_core(master, budget=budget) == quick


def test_core_blocks_travel_with_their_definition_lines() -> None:
    master, blocks = core_master(["Alpha.", "Beta " * 200, "Gamma."])
    out = render_core(master, budget=count_tokens(render_core(master, budget=10**6)) - 100)
    kept = parse_topic(out.replace("](sources/", "](../sources/"), "memory/core.md")
    assert kept.blocks == (blocks[0], blocks[2])


def test_core_counts_special_token_strings_as_plain_text() -> None:
    master, (block,) = core_master(["<|endoftext|>" * 50])
    out = render_core(master, budget=10**6)
    plain = count_tokens(out)
    assert plain > 100  # 50 special tokens would be 50; as text they are many more
    assert render_core(master, budget=plain) == out
    assert plan_core(master, budget=plain - 1).skipped == (block.id,)


def test_core_rewrites_block_links_to_the_topics_directory() -> None:
    taken: set[str] = set()
    target = make_block("topics/core.md", "Target.", [("2024-03-01", [("u", "s1/n1")])], taken)
    claim = f"See [it](core.md#^{target.id}), [that](prefs.md#^b-12345678) and {inert('[x](prefs.md#^b-12345678)')}."
    linking = make_block("topics/core.md", claim, [("2024-03-01", [("u", "s1/n2")])], taken)
    out = render_core(render_topic(Topic("Core", (target, linking))))
    assert f"[it](topics/core.md#^{target.id})" in out
    assert "[that](topics/prefs.md#^b-12345678)" in out
    assert inert("[x](prefs.md#^b-12345678)") in out  # escaped text is not a link and stays as it was
    assert "](sources/s1.md#" in out


def test_core_is_empty_when_even_the_title_does_not_fit() -> None:
    master, blocks = core_master(["One."])
    plan = plan_core(master, budget=1)
    assert plan.text == ""
    assert plan.skipped == (blocks[0].id,)


def test_core_rendering_is_deterministic_bytes() -> None:
    master, _ = core_master(["One.", "Two " * 300, "Three."])
    assert render_core(master, budget=200).encode() == render_core(master, budget=200).encode()


def test_core_rejects_an_invalid_master_and_a_negative_budget() -> None:
    with pytest.raises(TopicFormatError) as error:
        render_core("# Core\n\nno ids here\n")
    assert error.value.path == "topics/core.md"
    with pytest.raises(InvalidInput, match="budget"):
        render_core("# Core\n", budget=-1)


def test_token_counts_are_remembered_by_digest_exactly_and_within_their_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dagmem.memory.format import _tokens

    monkeypatch.setattr(_tokens, "_REMEMBERED", 8)
    monkeypatch.setattr(_tokens, "_counts", {})
    texts = [f"turn {i}: " + "word " * i for i in range(20)] + ["a lone \ud800 surrogate", "<|endoftext|>"]
    first = [count_tokens(text) for text in texts]
    assert len(_tokens._counts) == 8  # bounded, least recently used out first
    assert all(isinstance(key, bytes) and len(key) == 16 for key in _tokens._counts)  # never the text
    assert [count_tokens(text) for text in reversed(texts)] == first[::-1]
    encoding = _tokens.encoding()
    assert first[:20] == [len(encoding.encode_ordinary(text)) for text in texts[:20]]
    assert first[-1] == len(encoding.encode_ordinary("<|endoftext|>")) > 1  # plain text, never special


def test_clear_caches_lets_go_of_parsed_and_validated_blocks_and_token_counts() -> None:
    from dagmem.memory.format import _tokens, _topic_parse, _topic_validate, clear_caches

    block = make_block(
        "topics/tea.md", "Green tea is grown in Japan.", [("2026-06-01", [("user", "s1/n1")])], set()
    )
    text = render_topic(Topic("Tea", (block,)))
    parse_topic(text, "topics/tea.md")
    count_tokens("a text whose count is remembered")
    assert _topic_parse._parse_chunk.cache_info().currsize > 0
    assert _topic_validate._block_ok.cache_info().currsize > 0
    assert _tokens._counts
    clear_caches()
    assert _topic_parse._parse_chunk.cache_info().currsize == 0
    assert _topic_parse._parse_topic_cached.cache_info().currsize == 0
    assert _topic_validate._block_ok.cache_info().currsize == 0
    assert not _tokens._counts
    assert (
        parse_topic(text, "topics/tea.md").blocks[0].claim == "Green tea is grown in Japan."
    )  # and parses again
