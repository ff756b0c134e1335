"""`dagmem view` shows the topic index: one line per topic, newest first, each a link to its topic on the
page; in a real headless browser, a click on an entry brings its topic into view. A damaged index is
named, never drawn as if it were one."""

from __future__ import annotations

from pathlib import Path

from dagmem.memory.format import parse_topic_index
from dagmem.tests.view.test_view import Forked, browser_page, dagmem, forked
from dagmem.view import read_home, render_page

__all__ = ["browser_page", "forked"]  # fixtures, used by name


def test_the_page_lists_the_topic_index_with_links_to_its_topics(forked: Forked) -> None:
    index = parse_topic_index((forked.home / "memory/topics/index.md").read_text())
    assert index.entries
    page, _stats = render_page(read_home(forked.home))
    section = page.split('<section id="topic-index">', 1)[1].split("</section>", 1)[0]
    for entry in index.entries:
        slug = entry.path[len("topics/") : -len(".md")]
        assert f'href="#topic-{slug}"' in section
        assert f'<section class="topic" id="topic-{slug}">' in page
    assert section.count("<li ") == len(index.entries)


def test_a_damaged_index_is_named_not_drawn(forked: Forked) -> None:
    path = forked.home / "memory/topics/index.md"
    path.write_text("# Not what dagmem writes\n- anything\n")
    page, _stats = render_page(read_home(forked.home))
    section = page.split('<section id="topic-index">', 1)[1].split("</section>", 1)[0]
    assert 'class="problem"' in section
    assert "not a topic index" in section
    assert "<li " not in section


def test_the_topic_index_in_a_real_browser(forked: Forked, tmp_path: Path, browser_page: object) -> None:
    from playwright.sync_api import Page, expect

    page = browser_page
    assert isinstance(page, Page)
    out = tmp_path / "view.html"
    result = dagmem("view", "--home", str(forked.home), "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(out.as_uri())
    index = parse_topic_index((forked.home / "memory/topics/index.md").read_text())
    entries = page.locator("#topic-index ul.topic-index li")
    expect(entries).to_have_count(len(index.entries))
    last = index.entries[-1]
    link = entries.nth(len(index.entries) - 1).locator("a")
    expect(link).to_have_text(last.title.replace("\\", ""))
    link.click()
    slug = last.path[len("topics/") : -len(".md")]
    assert page.evaluate("location.hash") == f"#topic-{slug}"
    expect(page.locator(f"#topic-{slug}")).to_be_in_viewport()
    expect(page.locator(f"#topic-{slug} h3 small")).to_have_text(last.path)
    assert errors == []
