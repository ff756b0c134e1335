"""`dagmem view` and currency (DESIGN §12): a superseded block is struck through with a link to its
successor, a block said only on a branch the head left is shaded, and so are that branch's nodes; checked
in the page's source and in a real headless Chromium (system package, driven by Playwright)."""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.memory.format import Supersession, Topic, parse_topic, render_topic
from dagmem.memory.writing import write_home
from dagmem.tests._cli import dagmem_run
from dagmem.view import read_home, render_page

INSTALL = "needs Playwright and a system Chromium (apt install chromium; pip install playwright)"


@dataclass(frozen=True)
class Home:
    root: Path
    old: tuple[str, str]  # (topic, block id) of the superseded block
    new: tuple[str, str]  # its successor
    left: tuple[str, str]  # a block said only on the left branch
    left_node: str


def _find(memory: Path, words: str) -> tuple[str, str]:
    for path in sorted(t for t in (memory / "topics").glob("*.md") if t.name != "index.md"):
        relpath = f"topics/{path.name}"
        for block in parse_topic(path.read_text(encoding="utf-8"), relpath).blocks:
            if words in block.claim:
                return relpath, block.id
    raise AssertionError(f"no block says {words!r}")


def build(root: Path) -> Home:
    """Session `me` says where the user lives, then that they moved; session `conf` asks which city,
    and its prompt was edited (Lisbon, then Kyoto: the head moved to Kyoto). Written by the write pass,
    then the Paris block is marked superseded by the Berlin one by hand, as a person or a tool may."""
    store = FileSessionStore(root, fsync=False)
    store.append("me", "user", "I live in Paris near the canal.", node_id="m1")
    store.append("me", "user", "Update: I moved to Berlin last month.", node_id="m2")
    store.append("conf", "user", "Which city hosts the conference?", node_id="c1")
    store.append("conf", "assistant", "It can be Lisbon or Kyoto.", node_id="c2")
    store.append("conf", "user", "Book the Lisbon hall for the conference.", node_id="c3")
    store.append("conf", "user", "Book the Kyoto hall for the conference.", predecessor="c2", node_id="c3b")
    assert store.head("conf") == "c3b"
    results = write_home(root, force=True)
    assert all(r.outcome == "written" for r in results), results
    memory = root / "memory"
    old, new = _find(memory, "Paris"), _find(memory, "Berlin")
    path = memory / old[0]
    topic = parse_topic(path.read_text(encoding="utf-8"), old[0])
    status = Supersession(new[1], new[0], "2026-11-20", "update")
    marked = tuple(dataclasses.replace(b, superseded=status) if b.id == old[1] else b for b in topic.blocks)
    path.write_text(render_topic(Topic(topic.title, marked)), encoding="utf-8")
    return Home(root, old, new, _find(memory, "Lisbon hall"), "c3")


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return build(tmp_path / "home")


def _dom(block: tuple[str, str]) -> str:
    return f"blk-{block[0].removeprefix('topics/').removesuffix('.md')}-{block[1]}"


def test_the_page_marks_superseded_and_left_blocks(home: Home) -> None:
    view = read_home(home.root)
    assert view.currency[home.old] == ("superseded", home.new[1])
    assert view.currency[home.left][0] == "left"
    assert home.new not in view.currency  # current
    conf = next(s for s in view.sessions if s.session_id == "conf")
    assert conf.left == frozenset({"c3"})  # the edited-away prompt, not the accepted one
    page, _stats = render_page(view)
    old = page[page.index(f'id="{_dom(home.old)}"') :].split("</div>", 1)[0]
    assert "<del>" in old
    assert f'href="#{_dom(home.new)}"' in old
    assert f'class="block left" id="{_dom(home.left)}"' in page
    assert f'class="block" id="{_dom(home.new)}"' in page


def _chromium() -> str | None:
    return os.environ.get("DAGMEM_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
    )


@pytest.fixture
def browser_page() -> Iterator[object]:
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


def test_superseded_and_left_in_a_real_browser(home: Home, tmp_path: Path, browser_page: object) -> None:
    from playwright.sync_api import Page, expect

    page = browser_page
    assert isinstance(page, Page)
    out = tmp_path / "view.html"
    result = dagmem_run("view", "--home", str(home.root), "--out", str(out))
    assert result.returncode == 0, result.stderr
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(out.as_uri())

    old = page.locator(f"#{_dom(home.old)}")
    expect(old).to_have_class("block superseded")
    expect(old.locator(".claim del")).to_contain_text("Paris")
    assert old.locator(".claim del").evaluate("e => getComputedStyle(e).textDecorationLine") == "line-through"
    expect(old.locator(".superseded-note")).to_contain_text("Superseded on 2026-11-20 by")
    old.locator("a.successor").click()
    assert page.evaluate("location.hash") == f"#{_dom(home.new)}"
    expect(page.locator(f"#{_dom(home.new)} .claim")).to_contain_text("Berlin")
    assert page.locator(f"#{_dom(home.new)} del").count() == 0

    left = page.locator(f"#{_dom(home.left)}")
    expect(left).to_have_class("block left")
    shade = left.evaluate("e => getComputedStyle(e).backgroundImage")
    assert "repeating-linear-gradient" in shade
    expect(left.locator(".left-note")).to_be_visible()
    # The branch the head left is shaded in the drawing too; the accepted one is not.
    node = page.locator(f'svg.dag [data-n="{home.left_node}"]')
    assert "left" in (node.get_attribute("class") or "").split()
    assert float(node.locator("circle").first.evaluate("e => getComputedStyle(e).opacity")) < 1
    accepted = page.locator('svg.dag [data-n="c3b"]')
    assert "left" not in (accepted.get_attribute("class") or "").split()
    assert errors == []
