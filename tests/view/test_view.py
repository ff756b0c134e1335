"""`dagmem view`: the page built from a real home (files written by the store and the write pass), checked in
its source and in a real headless Chromium (system package, driven by Playwright)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.memory.policy import with_marker
from dagmem.memory.writing import write_home
from dagmem.tests._cli import dagmem_run
from dagmem.view import MIN_RUN, layout, read_home, render_page

HOSTILE = "</script><script>window.__pwned = 1; alert(1)</script> & <b>bold</b> <!--"


@dataclass(frozen=True)
class Forked:
    home: Path
    written: str  # a record written to memory (cited by a topic)
    owed: str  # a record appended after the write
    hostile: str
    tool: str
    tips: tuple[str, ...]


def build_forked(home: Path) -> Forked:
    """Session `trip`: a prefix with a tool row, a long linear run, a fork at `a2` into two branches (one
    quoting hostile markup), all written; then the head branch grows by owed turns and forks again.
    Session `other` exists so that `--session trip` has something to leave out."""
    store = FileSessionStore(home, fsync=False)
    say = store.append
    say("trip", "user", "Plan a trip to Lisbon in May.", node_id="u1")
    say("trip", "assistant", "Pack light layers and a rain jacket.", node_id="a1")
    say("trip", "tool", '{"weather": "showers"}', node_id="t1")
    for i in range(12):  # a long linear run: collapsed on the page
        say(
            "trip",
            "user" if i % 2 == 0 else "assistant",
            f"Detail {i} about trams and tiles.",
            node_id=f"r{i}",
        )
    say("trip", "user", "Which neighbourhood should we stay in?", node_id="u2")
    say("trip", "assistant", "Alfama for atmosphere, Chiado for shops.", node_id="a2")
    say("trip", "user", "And with small children?", node_id="u3a")
    say("trip", "assistant", "Parque das Nações: flat and green.", node_id="a3a")
    say("trip", "user", HOSTILE, predecessor="a2", node_id="u3b")
    say("trip", "assistant", "That looks like markup; here it is as text.", predecessor="u3b", node_id="a3b")
    store.set_head("trip", "a3a")
    say("other", "user", "A different conversation about bread.", node_id="o1")
    results = write_home(home, force=True)
    assert all(r.outcome == "written" for r in results), results
    say("trip", "user", "What about day trips?", predecessor="a3a", node_id="u4")
    say("trip", "assistant", "Sintra, early on a weekday.", node_id="a4")
    say("trip", "user", "Or the coast?", predecessor="a3a", node_id="u4c")
    store.set_head("trip", "a4")
    return Forked(home, written="u3a", owed="u4", hostile="u3b", tool="t1", tips=("a3b", "a4", "u4c"))


@pytest.fixture
def forked(tmp_path: Path) -> Forked:
    return build_forked(tmp_path / "home")


def tree_state(home: Path) -> dict[str, tuple[int, int]]:
    """Every path under the home with its size and mtime: what a read-only command must not change."""
    out: dict[str, tuple[int, int]] = {}
    for root, dirs, files in os.walk(home):
        for name in dirs + files:
            path = Path(root) / name
            stat = path.lstat()
            out[str(path.relative_to(home))] = (stat.st_size, stat.st_mtime_ns)
    return out


def dagmem(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return dagmem_run(*args, cwd=cwd)


# -- what the page holds --------------------------------------------------------------------------------


def test_states_follow_the_markers_of_this_workspace(forked: Forked) -> None:
    home = read_home(forked.home, ["trip"])
    (trip,) = home.sessions
    assert trip.states[forked.written] == "written"
    assert trip.states[forked.owed] == "owed"
    assert trip.states["u4c"] == "owed"
    assert trip.states[forked.tool] == "other"
    assert trip.reasons[forked.tool] == "not a record: a tool row"
    assert sorted(trip.tips) == sorted(forked.tips)
    assert trip.forks == ["a2", "a3a"]
    assert trip.owed == 3  # u4, a4, u4c: what `dagmem status` counts as pending
    assert forked.written in trip.frames
    assert forked.owed not in trip.frames
    cited = {
        s.anchor
        for t in home.topics
        if t.topic
        for b in t.topic.blocks
        for c in b.citations
        for s in c.sources
    }
    assert trip.frames[forked.written].source_id == f"trip/{forked.written}"
    assert any(anchor.startswith("src-") for anchor in cited)


def test_layout_collapses_runs_and_draws_every_tip_fork_and_head(forked: Forked) -> None:
    (trip,) = read_home(forked.home, ["trip"]).sessions
    view = layout(trip.nodes, trip.children, trip.states, trip.head)
    assert sorted(view.order) == sorted(trip.nodes)  # every node exactly once
    assert [m for item in view.items for m in item.members] == view.order
    alone = {item.members[0] for item in view.items if not item.run}
    assert set(forked.tips) | {"a2", "a3a", "u1", trip.head} <= alone
    runs = [item for item in view.items if item.run]
    assert runs
    assert all(len(item.members) >= MIN_RUN for item in runs)
    assert all(len({trip.states[m] for m in item.members} - {"other"}) <= 1 for item in runs)
    by_node = {m: item for item in view.items for m in item.members}
    # The head's line runs straight down lane 0; the side branches are indented.
    assert {by_node[n].lane for n in ("u1", "a2", "a3a", "a4")} == {0}
    assert by_node["a3b"].lane > 0
    assert by_node["u4c"].lane > 0
    for item in view.items:
        if item.parent is not None:
            assert view.items[item.parent].row < item.row


def test_hostile_text_cannot_leave_its_element(forked: Forked) -> None:
    page, stats = render_page(read_home(forked.home))
    assert "window.__pwned" in page  # the text is on the page, but only inert
    assert page.count("<script") == 2  # the data block and the page's own script, nothing else
    assert "<script>window.__pwned" not in page
    assert "&lt;/script&gt;&lt;script&gt;window.__pwned" in page  # drawn in the SVG label, escaped
    data = page.split('<script id="dagmem-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data
    assert ">" not in data
    texts = [n["t"] for s in json.loads(data)["sessions"] for n in s["nodes"]]
    assert HOSTILE in texts  # the JSON decodes back to the exact text
    assert not re.search(r"https?://", page)  # self-contained: nothing to fetch
    assert stats.sessions == 2
    assert stats.tips == 4


def test_a_5000_turn_session_with_50_forks_stays_small(tmp_path: Path) -> None:
    """The size the issue asks about: 5,000 turns, 50 forks, the first 4,000 marked written. The page
    draws a few hundred rows and every tip; the numbers are printed (pytest -s) for the README."""
    home = tmp_path / "home"
    store = FileSessionStore(home, fsync=False)
    rng = random.Random(5)
    words = "tram tile river sunset bakery museum hill quiet family trip rain jacket".split()
    workspace = "w-0123456789abcdef"
    main: list[str] = []
    for i in range(4_000):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(8, 30)))
        main.append(store.append("big", "user" if i % 2 else "assistant", text).id)
    store.update_node_metadata("big", main, lambda _id, metadata: with_marker(metadata, workspace))
    for k, at in enumerate(sorted(rng.sample(range(10, 3_990), 50))):
        previous = main[at]
        for j in range(20):
            previous = store.append("big", "user", f"side {k} turn {j}", predecessor=previous).id
    store.set_head("big", main[-1])
    (home / "memory" / ".dagmem").mkdir(parents=True)
    (home / "memory" / ".dagmem" / "workspace-id").write_text(workspace + "\n")
    page, stats = render_page(read_home(home))
    print(f"\n5,000 turns, 50 forks: {stats.drawn} rows drawn, {stats.tips} tips, {stats.bytes:,} bytes")
    assert stats.nodes == 5_000
    assert stats.tips == 51
    assert stats.drawn <= 260  # 50 forks, 51 tips, a head, and the runs between them
    assert page.count('class="it ') == stats.drawn
    assert 'class="it st-written' in page  # the marked main line
    assert 'class="it st-owed' in page  # the side branches, never written
    assert stats.bytes < 1_200_000


# -- the command ----------------------------------------------------------------------------------------


def test_view_command_reads_the_home_and_writes_only_the_page(forked: Forked, tmp_path: Path) -> None:
    before = tree_state(forked.home)
    out = tmp_path / "page.html"
    result = dagmem("view", "--home", str(forked.home), "--out", str(out), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["sessions"] == 2
    assert report["tips"] == 4
    assert report["bytes"] == out.stat().st_size
    assert tree_state(forked.home) == before
    only = dagmem("view", "--home", str(forked.home), "--session", "trip", "--out", "-", cwd=tmp_path)
    assert only.returncode == 0, only.stderr
    assert "session-trip" in only.stdout
    assert "session-other" not in only.stdout
    assert "A different conversation" not in only.stdout  # topics are filtered to the sessions shown


def test_view_of_a_home_never_written_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    FileSessionStore(home, fsync=False).append("s", "user", "hello there")
    before = tree_state(home)
    result = dagmem("view", "--home", str(home), "--out", str(tmp_path / "p.html"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert tree_state(home) == before
    assert not (home / "memory").exists()
    assert "1 session, 1 node in 1 row, 1 tip" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "{home}/sessions/page.html"], "inside the home"),
        (["--out", "{tmp}/missing/page.html"], "no such directory"),
        (["--session", "nope"], "unknown session 'nope'"),
        (["--out", "-", "--open"], "--open needs --out FILE"),
    ],
)
def test_view_mistakes_exit_2_and_write_nothing(
    forked: Forked, tmp_path: Path, args: list[str], message: str
) -> None:
    before = tree_state(forked.home)
    filled = [a.format(home=forked.home, tmp=tmp_path) for a in args]
    result = dagmem("view", "--home", str(forked.home), *filled, "--json", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in json.loads(result.stdout)["error"]
    assert tree_state(forked.home) == before
    assert not (tmp_path / "dagmem-view.html").exists()


def test_view_of_a_missing_home_is_a_mistake_and_creates_it_not(tmp_path: Path) -> None:
    result = dagmem("view", "--home", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert result.returncode == 2
    assert "no such directory" in result.stderr
    assert not (tmp_path / "nowhere").exists()


# -- in a real browser ----------------------------------------------------------------------------------

INSTALL = (
    "no headless Chromium: install the system package (Debian: apt-get install -y chromium) and Playwright "
    "(pip install -e '.[dev]'); set DAGMEM_CHROMIUM to use another binary"
)


def _chromium() -> str | None:
    found = os.environ.get("DAGMEM_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
    )
    return found


@pytest.fixture
def browser_page(tmp_path: Path) -> Iterator[object]:
    executable = _chromium()
    if executable is None:
        pytest.skip(INSTALL)
    sync_api = pytest.importorskip("playwright.sync_api", reason=INSTALL)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(10_000)
            yield page
        finally:
            browser.close()


def test_the_page_in_a_real_browser(forked: Forked, tmp_path: Path, browser_page: object) -> None:
    from playwright.sync_api import Dialog, Page, expect

    page = browser_page
    assert isinstance(page, Page)
    out = tmp_path / "view.html"
    result = dagmem("view", "--home", str(forked.home), "--session", "trip", "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    errors: list[str] = []
    dialogs: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("request", lambda request: requests.append(request.url))
    page.goto(out.as_uri())

    assert page.locator("svg.dag .it.tip").count() == len(forked.tips)
    assert page.locator("svg.dag .it.head").count() == 1
    assert page.locator("svg.dag .it.run").count() >= 1
    details = page.locator("#details")

    # An owed node: no frame yet, no block cites it.
    page.click(f'svg.dag [data-n="{forked.owed}"]')
    expect(details.locator(".node-title")).to_have_text(f"trip / {forked.owed}")
    expect(details.locator(".state")).to_have_text("owed")
    expect(details.locator(".panel-text")).to_have_text("What about day trips?")
    expect(details.locator(".no-frame")).to_have_text("Not archived yet.")
    expect(details.locator(".no-cites")).to_be_visible()

    # A written node: its frame, and the block that cites it.
    page.click(f'svg.dag [data-n="{forked.written}"]')
    expect(details.locator(".state")).to_have_text("written")
    expect(details.locator("pre.frame")).to_contain_text(f"<!-- source-id: trip/{forked.written} -->")
    expect(details.locator(".block.cited")).to_have_count(1)
    expect(details.locator(".block.cited .claim")).to_contain_text("And with small children?")

    # The hostile turn renders as text and runs nothing.
    page.click(f'svg.dag [data-n="{forked.hostile}"]')
    expect(details.locator(".panel-text")).to_have_text(HOSTILE)
    assert page.evaluate("window.__pwned === undefined")

    # A footnote in the topics panel leads to its evidence: a node drawn on its own, then one inside a run.
    for node_id in ("a3a", "a1"):
        link = page.locator("#topics a.src", has_text=f"trip/{node_id}")
        href = link.get_attribute("href")
        assert href is not None
        link.click()
        assert page.evaluate("location.hash") == href
        expect(details.locator(".node-title")).to_have_text(f"trip / {node_id}")
        expect(details.locator("pre.frame")).to_contain_text(f"<!-- source-id: trip/{node_id} -->")
        expect(details.locator(".frame-where")).to_contain_text(href)

    # A collapsed run lists its members; one of them opens.
    page.locator("svg.dag .it.run").first.click()
    assert details.locator(".run-box li").count() >= MIN_RUN
    details.locator(".run-box li button").nth(2).click()
    expect(details.locator(".run-box li.cur")).to_have_count(1)

    shot = tmp_path / "view.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"\nscreenshot: {shot}")
    assert shot.stat().st_size > 10_000
    assert errors == []
    assert dialogs == []
    assert all(url.startswith("file://") for url in requests), requests
