"""The topic index `topics/index.md`: rewritten by every install in the same transaction as its topics,
from the summaries of only the topics it touches (the others' come from the SQLite cache, rebuilt from
the files when lost), within its token budget (what does not fit is counted), a reserved name no topic
takes, re-rendered by forget, and checked by `verify`."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.memory.format import (
    TOPIC_INDEX,
    TOPIC_INDEX_BUDGET,
    TopicSummary,
    count_tokens,
    is_topic_path,
    is_topic_slug,
    parse_topic,
    parse_topic_index,
    render_topic_index,
    summarise_bytes,
)
from dagmem.memory.outcomes import ReasonCode, WriteFailure
from dagmem.memory.workspace import Workspace
from dagmem.memory.write import write_pass
from dagmem.tests._cli import dagmem_run

WORDS = ["lisbon", "porto", "sintra", "braga", "coimbra", "faro", "evora", "tavira", "aveiro", "obidos"]


def dagmem(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return dagmem_run(*args, "--home", str(home))


def say(home: Path, session: str, word: str) -> None:
    """One exchange whose most salient word is `word` (so its topic is `topics/<word>.md`)."""
    store = FileSessionStore(home)
    first = store.append(session, "user", f"Tell me about {word}: is {word} worth a visit, {word}?")
    store.append(session, "assistant", f"Yes, {word} is lovely in spring.", predecessor=first.id)


def index_text(home: Path) -> str:
    return (home / "memory" / "topics" / "index.md").read_text("utf-8")


def from_files(home: Path) -> str | None:
    topics = home / "memory" / "topics"
    found = [
        summarise_bytes(f"topics/{p.name}", p.read_bytes())
        for p in sorted(topics.glob("*.md"))
        if p.name != "index.md"
    ]
    return render_topic_index([s for s in found if s is not None])


def txlog(home: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (home / "memory/.dagmem/txlog.jsonl").read_text().splitlines()]


def test_every_install_rewrites_the_index_with_its_topics_in_one_transaction(tmp_path: Path) -> None:
    say(tmp_path, "a", "lisbon")
    write_pass(tmp_path, force=True)
    say(tmp_path, "b", "porto")
    write_pass(tmp_path, force=True)
    last = txlog(tmp_path)[-1]
    files = last["files"]
    assert isinstance(files, dict)
    data = (tmp_path / "memory/topics/index.md").read_bytes()
    assert files[TOPIC_INDEX] == hashlib.sha256(data).hexdigest()  # installed by this transaction
    index = parse_topic_index(data.decode())
    assert [e.path for e in index.entries] == ["topics/lisbon.md", "topics/porto.md"]  # one day: by path
    for entry in index.entries:
        topic = parse_topic((tmp_path / "memory" / entry.path).read_text(), entry.path)
        assert entry.blocks == len(topic.blocks)
        assert entry.last == max(c.date for b in topic.blocks for c in b.citations)
        assert entry.title == topic.title
        # What it holds, in a few of its words (not its first block's first words).
        assert entry.description
        assert all(word in " ".join(b.claim for b in topic.blocks) for word in entry.description.split(", "))
    assert index.left_out == 0
    assert data.decode() == from_files(tmp_path)


def test_an_install_summarises_only_the_topics_it_touches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n, word in enumerate(WORDS):
        say(tmp_path, f"s{n}", word)
    write_pass(tmp_path, force=True)
    summarised: list[str] = []

    def spy(relpath: str, data: bytes | None) -> TopicSummary | None:
        summarised.append(relpath)
        return summarise_bytes(relpath, data)

    monkeypatch.setattr("dagmem.memory.workspace._workspace.summarise_bytes", spy)
    say(tmp_path, "late", "lisbon")
    write_pass(tmp_path, force=True)
    files = txlog(tmp_path)[-1]["files"]
    assert isinstance(files, dict)
    touched = {path for path in files if path != TOPIC_INDEX}
    assert summarised
    assert set(summarised) <= touched  # never a topic the transaction did not touch
    index = parse_topic_index(index_text(tmp_path))
    assert {e.path for e in index.entries} == {f"topics/{w}.md" for w in WORDS}  # the rest from the cache
    assert index_text(tmp_path) == from_files(tmp_path)


def test_a_lost_cache_is_rebuilt_from_the_topic_files(tmp_path: Path) -> None:
    for n, word in enumerate(WORDS[:4]):
        say(tmp_path, f"s{n}", word)
    write_pass(tmp_path, force=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path}/memory/.dagmem/index.sqlite3{suffix}").unlink(missing_ok=True)
    say(tmp_path, "late", "faro")
    write_pass(tmp_path, force=True)
    assert {e.path for e in parse_topic_index(index_text(tmp_path)).entries} == {
        f"topics/{w}.md" for w in [*WORDS[:4], "faro"]
    }
    assert index_text(tmp_path) == from_files(tmp_path)


def test_the_index_keeps_within_its_budget_newest_first_and_counts_what_it_leaves_out() -> None:
    summaries = [
        TopicSummary(
            f"topics/t{n:04d}.md", f"Topic {n}", f"What topic {n} is about", 3, f"2026-{n % 12 + 1:02d}-01"
        )
        for n in range(600)
    ]
    text = render_topic_index(summaries)
    assert text is not None
    assert count_tokens(text) <= TOPIC_INDEX_BUDGET
    index = parse_topic_index(text)
    assert index.left_out > 0
    assert len(index.entries) + index.left_out == 600
    assert text.rstrip("\n").endswith(
        f"*{index.left_out} more topics left out (the index is kept within {TOPIC_INDEX_BUDGET} tokens).*"
    )
    dates = [e.last or "" for e in index.entries]
    assert dates == sorted(dates, reverse=True)  # the newest are kept
    assert index.entries[0].last == "2026-12-01"
    small = render_topic_index(summaries[:3])
    assert small is not None
    assert parse_topic_index(small).left_out == 0
    assert render_topic_index([]) is None


def test_a_title_or_claim_cannot_break_an_entry() -> None:
    tricky = TopicSummary(
        "topics/x.md", "A ] title [ with ·", "ends in · 3 blocks · 2026-01-01", 2, "2026-02-02"
    )
    text = render_topic_index([tricky])
    assert text is not None
    (entry,) = parse_topic_index(text).entries
    assert (entry.path, entry.blocks, entry.last) == ("topics/x.md", 2, "2026-02-02")
    assert entry.title == "A \\] title \\[ with ·"  # brackets escaped, so the link holds
    assert entry.description == "ends in · 3 blocks · 2026-01-01"


def test_index_is_a_reserved_name_no_topic_takes(tmp_path: Path) -> None:
    assert not is_topic_path(TOPIC_INDEX)
    assert not is_topic_slug("index")
    assert is_topic_path("topics/index-cards.md")
    store = FileSessionStore(tmp_path)
    first = store.append("s", "user", "The index, the index: where is the index of the book?")
    store.append("s", "assistant", "The index is at the back.", predecessor=first.id)
    write_pass(tmp_path, force=True)
    index = parse_topic_index(index_text(tmp_path))  # the map, never a topic file
    assert TOPIC_INDEX not in {e.path for e in index.entries}
    assert index.entries  # the turn went to another topic
    with Workspace(tmp_path / "memory") as workspace, workspace.lock():
        with pytest.raises(WriteFailure) as refused:
            workspace.install("s", [], {TOPIC_INDEX: b"# Topic index\n"})
        assert refused.value.code is ReasonCode.PATH_OUTSIDE_WORKSPACE


def test_forget_rewrites_the_index_without_the_forgotten_words(tmp_path: Path) -> None:
    say(tmp_path, "a", "lisbon")
    say(tmp_path, "b", "porto")
    write_pass(tmp_path, force=True)
    assert "porto" in index_text(tmp_path).lower()
    run = dagmem("forget", "--session", "b", "--yes", home=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "porto" not in index_text(tmp_path).lower()
    assert index_text(tmp_path) == from_files(tmp_path)
    verified = dagmem("verify", "--strict", "--forgotten", "--json", home=tmp_path)
    assert verified.returncode == 0, verified.stdout


def test_verify_accepts_the_index_and_reports_a_damaged_or_dangling_one(tmp_path: Path) -> None:
    say(tmp_path, "a", "lisbon")
    write_pass(tmp_path, force=True)
    assert dagmem("verify", "--strict", home=tmp_path).returncode == 0
    path = tmp_path / "memory/topics/index.md"
    good = path.read_text()
    path.write_text(good.replace("- [Lisbon]", "* [Lisbon]"))
    report = json.loads(dagmem("verify", "--json", home=tmp_path).stdout)
    assert [v["kind"] for v in report["violations"]] == ["topic-index-unreadable"]
    path.write_text(good.replace("(lisbon.md)", "(gone.md)"))
    report = json.loads(dagmem("verify", "--json", home=tmp_path).stdout)
    assert [(v["kind"], v["detail"]) for v in report["violations"]] == [
        ("topic-index-dangling", "lists topics/gone.md, which does not exist")
    ]


def test_the_cache_renders_the_same_index_reading_only_a_page_at_a_time(tmp_path: Path) -> None:
    from dagmem.memory.format import merge_newest, newest_first, render_ordered
    from dagmem.memory.workspace._index import Index

    summaries = {
        f"topics/t{n:03d}.md": TopicSummary(
            f"topics/t{n:03d}.md",
            f"Topic {n}",
            f"About {n}",
            1 + n % 3,
            None if n % 7 == 0 else f"2026-03-{n % 9 + 1:02d}",
        )
        for n in range(150)
    }
    index = Index(tmp_path / "index.sqlite3")
    try:
        index.set_topic_summaries(summaries)
        assert list(index.newest_topics(page=4)) == newest_first(summaries.values())  # every page, in order
        changed = {
            "topics/t010.md": TopicSummary("topics/t010.md", "Topic 10", "Now newer", 5, "2026-04-01"),
            "topics/t011.md": None,  # gone
            "topics/new.md": TopicSummary("topics/new.md", "New", "Just made", 1, "2026-03-05"),
        }
        total, replaced = index.topic_count(changed)
        assert (total, replaced) == (150, 2)
        new = newest_first(s for s in changed.values() if s is not None)
        cached = (s for s in index.newest_topics(page=4) if s.path not in changed)
        merged = render_ordered(merge_newest(cached, new), total - replaced + len(new), budget=400)
        whole = {**summaries, **changed}
        assert merged == render_topic_index([s for s in whole.values() if s is not None], budget=400)
    finally:
        index.close()
