"""One claim filed in two topic files (here: the core master's fact copied into a topic file of its own,
as a model or a person may file it): `verify` warns of it, `reorganise` merges it into one block carrying
every citation, and recall returns it once."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from dagmem import FileSessionStore
from dagmem.memory.format import parse_topic
from dagmem.memory.recall import RecallIndex, RecallQuery, search
from dagmem.memory.writing import write_home

CLAIM = "User: “I live in Porto.”"


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dagmem", *args, "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def holders(memory: Path) -> dict[str, list[set[tuple[str, str]]]]:
    """path -> the sources of each block holding CLAIM."""
    out: dict[str, list[set[tuple[str, str]]]] = {}
    for found in sorted(t for t in (memory / "topics").glob("*.md") if t.name != "index.md"):
        relpath = found.relative_to(memory).as_posix()
        for block in parse_topic(found.read_text(encoding="utf-8"), relpath).blocks:
            if block.claim == CLAIM:
                sources = {(s.session_id, s.anchor) for c in block.citations for s in c.sources}
                out.setdefault(relpath, []).append(sources)
    return out


def duplicated_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    store = FileSessionStore(home, fsync=False)
    store.append("s1", "user", "I live in Porto.")
    store.append("s1", "assistant", "Noted.")  # an answer: its exchange is another claim
    store.append("s2", "user", "I live in Porto.")  # said alone, in another session
    write_home(home, force=True)
    topics = home / "memory" / "topics"
    # The copy cites only the second session (the same sources twice would be a violation, not this).
    lines = (topics / "core.md").read_text(encoding="utf-8").replace("# Core", "# Porto home", 1).splitlines()
    first = re.search(r"\[\^(c-[0-9a-f]{10})\]", lines[2])
    assert first is not None
    lines[2] = lines[2].replace(f" [^{first[1]}]", "", 1)
    copy = [line for line in lines if not line.startswith(f"[^{first[1]}]:")]
    (topics / "porto-home.md").write_text("\n".join(copy) + "\n", encoding="utf-8")
    return home


def test_recall_returns_a_claim_filed_twice_once(tmp_path: Path) -> None:
    memory = duplicated_home(tmp_path) / "memory"
    before = holders(memory)
    assert sum(len(v) for v in before.values()) >= 2  # the precondition: the claim is filed twice
    assert len(before) >= 2
    hits = search(RecallIndex.open(memory), RecallQuery("where do I live Porto", k=10))
    assert [h.text for h in hits].count(CLAIM) == 1


def test_verify_warns_of_a_claim_filed_twice(tmp_path: Path) -> None:
    home = duplicated_home(tmp_path)
    verify = run_cli("verify", "--json", home=home)
    assert verify.returncode == 0  # a warning, not a violation
    warnings = json.loads(verify.stdout).get("warnings", [])
    assert any("duplicate-claim" in w and "topics/core.md" in w for w in warnings)
    assert "warning: duplicate-claim" in run_cli("verify", home=home).stdout


def test_reorganise_merges_a_claim_filed_twice_carrying_every_citation(tmp_path: Path) -> None:
    home = duplicated_home(tmp_path)
    memory = home / "memory"
    before = holders(memory)
    cited_before = set().union(*(s for v in before.values() for s in v))
    merged = run_cli("reorganise", "--json", home=home)
    assert merged.returncode == 0, merged.stdout
    after = holders(memory)
    assert list(after) == ["topics/core.md"]  # the core keeps the fact (it is always injected)
    assert len(after["topics/core.md"]) == 1
    assert after["topics/core.md"][0] == cited_before  # every citation carried
    verified = json.loads(run_cli("verify", "--strict", "--json", home=home).stdout)
    assert verified["violations"] == []
    assert verified["warnings"] == []
    assert "I live in Porto" in (memory / "core.md").read_text(encoding="utf-8")
    hits = search(RecallIndex.open(memory), RecallQuery("where do I live Porto", k=10))
    assert [h.text for h in hits].count(CLAIM) == 1
    again = run_cli("reorganise", "--json", home=home)  # nothing more to merge
    assert again.returncode == 0
    assert holders(memory) == after
