"""A partly superseded hit and the branch rule, on both axes: the block holding the newer value of part of
the reader's hit comes right after it only when the two rank alike. Said on a sibling branch of the
conversation (siblings demoted) or on a git branch not merged into the reader's HEAD, it does not come
with a hit of the reader's own (it would rank above the reader's other hits); the hit still names it in
`partly_by` and its label promises nothing "given next". With siblings included, or with no checkout, it
comes as usual. Likewise, asked about now, a newer statement said on an unmerged git branch is not moved
above the reader's own (`newest_first` compares hits of one class on both axes), and a superseded hit's
current successor takes its place only where the branch rule allows (`_current_first`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from dagmem import FileSessionStore, Hit, render_context
from dagmem.memory.checkout import GitReader, read_checkout
from dagmem.memory.format import (
    HEADER,
    ArchiveRecord,
    Block,
    GitContext,
    Supersession,
    Topic,
    inert,
    make_block,
    parse_topic,
    render_frame,
    render_topic,
)
from dagmem.memory.recall import RecallIndex, RecallQuery, reader_for, search
from dagmem.memory.recall._search import _current_first
from dagmem.memory.shapes import shapes_for
from dagmem.tests._git_repo import T0, Repo

HOME = "topics/home.md"
NURSE = "I live in Paris and I work as a nurse at the Paris hospital."
ANNA = "My friend Anna is a nurse too, she works nights at the Paris hospital."
MOVED = "I moved to Berlin last month."
QUERY = "do I live in Paris and work as a nurse"  # the nurse block's words, then Anna's; none of Berlin's


class Home:
    """One session: the nurse turn, a reply, Anna's turn, then Berlin's: after Anna's, or, `forked`, on
    a side branch from the reply (a sub-agent's: current for every reader, a sibling for one on Anna's
    branch, the head's). The nurse block is partly superseded by Berlin's. Each record says it was said
    in `repo` on `main`, but Berlin on `berlin_branch`."""

    def __init__(self, root: Path, repo: str, berlin_branch: str, *, forked: bool) -> None:
        self.root = root
        store = FileSessionStore(root, fsync=False)
        nurse = store.append("s1", "user", NURSE).id
        reply = store.append("s1", "assistant", "Noted.").id
        self.anna = store.append("s1", "user", ANNA).id
        berlin = store.append(
            "s1", "user", MOVED, predecessor=reply if forked else self.anna, spawned=forked
        ).id
        self.berlin = berlin
        assert store.head("s1") == (self.anna if forked else berlin)
        self.memory = root / "memory"
        (self.memory / "sources").mkdir(parents=True)
        (self.memory / "topics").mkdir()
        snapshot = store.load("s1")
        nodes = sorted(snapshot.nodes.values(), key=lambda n: n.seq)
        frames = b"".join(
            render_frame(
                ArchiveRecord(
                    "s1",
                    n.id,
                    str(n.role),
                    n.seq,
                    n.created_at,
                    n.content,
                    git=GitContext(repo, berlin_branch if n.id == berlin else "main"),
                )
            )
            for n in nodes
        )
        (self.memory / "sources" / "s1.md").write_bytes(HEADER + frames)
        text = {n.id: n.content for n in nodes}
        taken: set[str] = set()

        def block(node: str, date: str) -> Block:
            claim = "User: " + inert(text[node])
            return make_block(HOME, claim, [(date, [(f"user s1/{node}", f"s1/{node}")])], taken)

        moved = block(berlin, "2026-11-20")
        self.nurse_id, self.berlin_id = "", moved.id
        said = dataclasses.replace(
            block(nurse, "2026-11-01"), partly=Supersession(moved.id, HOME, "2026-11-20", "update")
        )
        self.nurse_id = said.id
        anna = block(self.anna, "2026-11-01")
        self.anna_id = anna.id
        topic = render_topic(Topic("Home", (said, moved, anna)))
        assert parse_topic(topic, HOME).blocks[0].partly is not None  # the partly line round-trips
        (self.memory / HOME).write_text(topic, encoding="utf-8")

    def hits(self, tip: str | None = None, *, checkout: GitReader | None = None, **asked: Any) -> list[Hit]:
        with shapes_for(self.root) as shapes:
            reader = reader_for(shapes.reading_from("s1"), "s1", tip)
            return search(
                RecallIndex.open(self.memory), RecallQuery(QUERY, **asked), reader=reader, checkout=checkout
            )


def ids(hits: list[Hit]) -> list[str | None]:
    return [hit.block_id for hit in hits]


def test_a_newer_part_said_on_a_sibling_branch_does_not_come_with_the_readers_own_hit(tmp_path: Path) -> None:
    home = Home(tmp_path / "home", "cwd:/elsewhere/app", "main", forked=True)  # no repository: no git axis
    demoted = home.hits()  # the reader at the head, on Anna's branch: Berlin's is a sibling
    assert ids(demoted)[:3] == [home.nurse_id, home.anna_id, home.berlin_id]  # where it ranks itself
    assert [hit.branch for hit in demoted[:3]] == ["on", "on", "sibling"]
    nurse = demoted[0]
    assert (nurse.status, nurse.partly_by) == ("current", home.berlin_id)
    label = f"(partly superseded by {home.berlin_id}) "
    assert label in render_context(demoted)  # not "given next": it is not
    included = home.hits(siblings="include")
    assert ids(included)[:3] == [home.nurse_id, home.berlin_id, home.anna_id]
    assert [hit.branch for hit in included[:3]] == ["on", "sibling", "on"]
    assert f"(partly superseded by {home.berlin_id}, given next)" in render_context(included)
    own = home.hits(home.berlin)  # from Berlin's own branch it is the reader's: it comes
    assert ids(own)[:2] == [home.nurse_id, home.berlin_id]
    assert [hit.branch for hit in own[:2]] == ["on", "on"]
    assert (ids(own)[2], own[2].branch) == (home.anna_id, "sibling")


def test_a_newer_part_said_on_an_unmerged_git_branch_does_not_come_with_the_readers_own_hit(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path / "app")
    repo.commit(repo.root, {"a.py": "x = 1\n"}, "first", T0)
    common = str((repo.root / ".git").resolve())
    home = Home(tmp_path / "home", common, "feature/berlin", forked=False)
    checkout = read_checkout(str(repo.root))
    assert checkout is not None
    reader = GitReader(checkout)  # on main; no merge facts: feature/berlin is not merged
    hits = home.hits(checkout=reader)  # one line of conversation: only the git axis tells them apart
    assert ids(hits)[:3] == [home.nurse_id, home.anna_id, home.berlin_id]
    assert [hit.git.merged if hit.git else None for hit in hits[:3]] == [True, True, False]
    assert hits[0].partly_by == home.berlin_id
    assert f"(partly superseded by {home.berlin_id}) " in render_context(hits)
    plain = home.hits()  # no checkout: no git axis, and it comes right after the hit
    assert ids(plain)[:2] == [home.nurse_id, home.berlin_id]


def test_a_newer_statement_said_on_an_unmerged_git_branch_is_not_moved_above_the_readers_own(
    tmp_path: Path,
) -> None:
    # Asked about now, the newer of two current statements of one fact comes first (`newest_first`), but
    # only among hits of one class on both axes: the feature branch's newer value stays below the
    # reader's own until it merges.
    repo = Repo(tmp_path / "app")
    repo.commit(repo.root, {"a.py": "x = 1\n"}, "first", T0)
    common = str((repo.root / ".git").resolve())
    root = tmp_path / "home"
    store = FileSessionStore(root, fsync=False)
    paris = store.append("s1", "user", "I live in Paris.")
    berlin = store.append("s1", "user", "I live in Berlin now.")
    memory = root / "memory"
    (memory / "sources").mkdir(parents=True)
    (memory / "topics").mkdir()
    frames = b"".join(
        render_frame(ArchiveRecord("s1", n.id, "user", n.seq, n.created_at, n.content, git=where))
        for n, where in ((paris, GitContext(common, "main")), (berlin, GitContext(common, "feature/berlin")))
    )
    (memory / "sources" / "s1.md").write_bytes(HEADER + frames)
    taken: set[str] = set()
    blocks = tuple(
        make_block(HOME, "User: " + n.content, [(date, [(f"user s1/{n.id}", f"s1/{n.id}")])], taken)
        for n, date in ((paris, "2026-11-01"), (berlin, "2026-11-20"))
    )
    (memory / HOME).write_text(render_topic(Topic("Home", blocks)), encoding="utf-8")
    checkout = read_checkout(str(repo.root))
    assert checkout is not None
    query = "where do I live now"
    plain = search(RecallIndex.open(memory), RecallQuery(query))
    assert ids(plain)[:2] == [blocks[1].id, blocks[0].id]  # no git axis: the newer first
    hits = search(RecallIndex.open(memory), RecallQuery(query), checkout=GitReader(checkout))
    assert ids(hits)[:2] == [blocks[0].id, blocks[1].id]
    assert [hit.git.merged if hit.git else None for hit in hits[:2]] == [True, False]


# The order `_search._current_first` gives, on rows alone: `on` rows are the reader's own, `sibling` rows
# demoted, and a superseded row's current successor takes its place unless the branch rule forbids it.
CLASS = {1: "on", 2: "on", 3: "sibling", 4: "sibling", 8: "on", 9: "sibling"}


def _order(ranked: list[int], superseded: dict[int, int]) -> list[int]:
    return list(
        _current_first(
            ranked,
            lambda row: row not in superseded,
            dict.fromkeys([*ranked, *superseded.values()], 1.0),
            0.0,
            lambda row: [superseded[row]] if row in superseded else [],
            sibling=lambda row: CLASS[row] == "sibling",
            above=lambda first, row: CLASS[first] == "on" and CLASS[row] == "sibling",
        )
    )


def test_a_successor_takes_its_predecessors_place_only_where_the_branch_rule_allows() -> None:
    assert _order([1, 2, 3], {1: 8}) == [8, 2, 3, 1]  # same class: in its place
    # A sibling's newer value of a hit of the reader's own waits for the reader's own rows.
    assert _order([1, 2, 3], {1: 9}) == [2, 9, 3, 1]
    # The reader's own newer value of a sibling's hit comes before the first sibling.
    assert _order([1, 3, 4], {4: 8}) == [1, 8, 3, 4]
    assert _order([1, 3, 4], {3: 9}) == [1, 9, 4, 3]  # sibling for sibling: in its place
