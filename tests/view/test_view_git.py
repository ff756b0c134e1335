"""`dagmem view` shows the git branch beside a session's turns: a badge where the branch changes along the
drawing, and each turn's branch, commit and repository in its details (the page's data)."""

from __future__ import annotations

import json
from pathlib import Path

from dagmem import FileSessionStore, GitContext
from dagmem.view import read_home, render_page


def test_the_branch_a_turn_was_said_on_is_beside_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = FileSessionStore(home)
    feature = GitContext("/src/app/.git", "feature/x", "ab" * 20)
    store.append("s1", "user", "one", git=feature)
    store.append("s1", "assistant", "two", git=feature)
    store.append("s1", "user", "three", git=GitContext("/src/app/.git", "main"))
    store.append("s1", "assistant", "four")
    page, _stats = render_page(read_home(home))
    assert page.count(">git feature/x </tspan>") == 1  # once, where the branch begins
    assert page.count(">git main </tspan>") == 1
    data = page.split('<script id="dagmem-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    nodes = json.loads(data)["sessions"][0]["nodes"]
    assert [n.get("g", {}).get("b") for n in nodes] == ["feature/x", "feature/x", "main", None]
    assert nodes[0]["g"]["c"] == "ab" * 20
    assert nodes[0]["g"]["r"] == "/src/app/.git"
