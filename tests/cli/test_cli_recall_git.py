"""`dagmem recall --checkout DIR` labels hits by git branch (`--json` carries each hit's `git` and each
record's git context; the text output says the branch), a bad `--checkout` is one line (exit 2), and in a
linked worktree without a home of its own every command defaults to the main worktree's `.dagmem`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dagmem.tests._cli import dagmem_run
from dagmem.tests._git_repo import T0, Repo, Said

S1 = "11111111-aaaa-4bbb-8ccc-000000000001"


def test_recall_with_a_checkout_labels_a_hit_said_on_an_unmerged_branch(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "app")
    repo.commit(repo.root, {"a.py": "x = 1\n"}, "first", T0)
    feature = repo.worktree(tmp_path / "feature", "feature/x", at=T0)
    said = Said(tmp_path / "t" / f"{S1}.jsonl", S1, feature, "feature/x", T0 + 100)
    said.user("Which job queue do we use for background jobs?")
    said.assistant("We use the Oban job queue for background jobs.")
    env = {k: v for k, v in os.environ.items() if k != "DAGMEM_HOME"}
    assert dagmem_run("import", "claude-code", str(said.path), cwd=feature, env=env).returncode == 0
    assert dagmem_run("write", "--force", cwd=feature, env=env).returncode == 0
    assert (repo.root / ".dagmem" / "memory").is_dir()  # the main worktree's home, from the linked one
    assert not (feature / ".dagmem").exists()
    found = dagmem_run(
        "recall", "which job queue", "--json", "--checkout", str(repo.root), cwd=repo.root, env=env
    )
    assert found.returncode == 0, found.stderr
    hit = json.loads(found.stdout)["hits"][0]
    assert hit["git"] == {"branch": "feature/x", "merged": False, "repo_same": True, "into": "main"}
    assert hit["evidence"][0]["git"]["branch"] == "feature/x"
    text = dagmem_run("recall", "which job queue", "--checkout", str(repo.root), cwd=repo.root, env=env)
    assert "[said on git branch feature/x, not merged into main]" in text.stdout
    assert not (repo.root / ".dagmem/memory/.dagmem/git-merged.json").exists()  # a read creates nothing
    bad = dagmem_run("recall", "x", "--checkout", str(tmp_path / "missing"), cwd=repo.root, env=env)
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0
    assert "--checkout" in bad.stderr
