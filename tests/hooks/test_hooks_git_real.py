"""The git axis's acceptance on real transcripts (issue 44): two real Claude Code sessions of one project
(claude-code-log, from the dev set's transcripts) replayed through the hooks, each in its own worktree of
one git repository on its own branch, then both branches merged. Before the merge each side's decision is
labelled with its branch when asked on `main` (and from the other worktree), and is the reader's own in
its worktree; after it, both are the project's. The worktrees share the main worktree's home.

The transcripts are not in the repository: the test is skipped on a machine without them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dagmem.hooks import wait_for_worker
from dagmem.tests._cli import dagmem_run
from dagmem.tests._git_repo import Repo
from dagmem.tests.hooks._claude import WORKER_BOUND, context_of, hook

SAMPLE = Path("/work/shared/data/transcripts/claude-code-log/sample")
ROOT = "/Users/dain/workspace/claude-code-log"  # where the sessions were said (every line's `cwd`)
# A session that made extract_working_directories pick each entry type's timestamp, and one that made
# the tests of get_project_display_name expect the last working directory.
TIMESTAMPS, DISPLAY = "b45ad5d8-81fb-4bcb-baba-19d9f503d731", "cbc0f75b-b36d-4efd-a7da-ac800ea30eb6"
ASK = {
    TIMESTAMPS: "How does extract_working_directories get the timestamp of each entry type?",
    DISPLAY: "Which working directory does get_project_display_name pick?",
}
ASKING = "0f0e0d0c-0b0a-4909-8807-060504030201"  # the session that asks
# The sessions were said on 2025-07-17..19: the repository and its branches are older, the work that
# finished each branch and the merges newer.
BEFORE, AFTER = 1_751_328_000, 1_754_006_400  # 2025-07-01, 2025-08-01


def _moved(session: str, worktree: Path, branch: str, into: Path) -> Path:
    """The real transcript as said in `worktree` on `branch`: every path under the project's root moved
    there and every line's branch renamed, the rest byte for byte."""
    source = SAMPLE / f"{session}.jsonl"
    if not source.is_file():
        pytest.skip(f"the real transcripts are not on this machine ({source} is missing)")
    lines = []
    for raw in source.read_text(encoding="utf-8").splitlines():
        line = raw.replace(ROOT, str(worktree))
        assert '"gitBranch":"main"' in line or "gitBranch" not in line
        lines.append(line.replace('"gitBranch":"main"', json.dumps({"gitBranch": branch})[1:-1]))
    path = into / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _ask(where: Path, home: Path, session: str) -> list[str]:
    """What a new session's first prompt in `where`, asking about `session`'s decision, is given of that
    session: each recalled line whose evidence cites it."""
    payload = {
        "session_id": ASKING,
        "transcript_path": str(where / "none.jsonl"),
        "cwd": str(where),
        "hook_event_name": "UserPromptSubmit",
        "prompt": ASK[session],
    }
    context = context_of(hook("UserPromptSubmit", payload, project=where), "UserPromptSubmit")
    assert wait_for_worker(home, WORKER_BOUND)  # a refresh of the merge facts the prompt asked for, if any
    lines = context.splitlines()
    return [
        line
        for line, below in zip(lines, [*lines[1:], ""], strict=True)
        if line.startswith("- ") and below.startswith("  evidence:") and f" {session[:8]}…/" in below
    ]


def _recall(where: Path, home: Path, session: str) -> tuple[list[dict[str, Any]], int]:
    """`dagmem recall --json --checkout where`'s hits (k 30) citing `session`, asked about its decision,
    and how many hits ranked above the first of them."""
    found = dagmem_run(
        "recall", ASK[session], "-k", "30", "--json", "--checkout", str(where), "--home", str(home), cwd=where
    )
    assert found.returncode == 0, found.stderr
    hits: list[dict[str, Any]] = json.loads(found.stdout)["hits"]
    cites = [any(e["session"] == session for e in hit["evidence"]) for hit in hits]
    first = cites.index(True) if True in cites else len(hits)
    return [hit for hit, cited in zip(hits, cites, strict=True) if cited], first


def test_two_worktrees_decisions_are_labelled_with_their_branch_until_both_merge(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "claude-code-log")
    repo.commit(repo.root, {"README.md": "claude-code-log\n"}, "first", BEFORE)
    sides = {
        TIMESTAMPS: (repo.worktree(tmp_path / "wt-timestamps", "feat/timestamps", BEFORE), "feat/timestamps"),
        DISPLAY: (repo.worktree(tmp_path / "wt-display", "feat/display-name", BEFORE), "feat/display-name"),
    }
    home = repo.root / ".dagmem"
    for session, (worktree, branch) in sides.items():  # each session replayed in its worktree
        transcript = _moved(session, worktree, branch, tmp_path / "claude" / "projects" / worktree.name)
        payload = {"session_id": session, "transcript_path": str(transcript), "cwd": str(worktree)}
        ended = hook("SessionEnd", {**payload, "hook_event_name": "SessionEnd"}, project=worktree)
        assert ended.returncode == 0, ended.stderr
        assert wait_for_worker(home, WORKER_BOUND)
    assert (home / "memory").is_dir()  # one home, the main worktree's, for both worktrees
    assert not any((worktree / ".dagmem").exists() for worktree, _ in sides.values())

    for session, (worktree, branch) in sides.items():
        # Asked on main: labelled with the branch it was said on (the hook's context and recall --json).
        on_main = _ask(repo.root, home, session)
        assert on_main, session
        label = f"(said on git branch {branch}, not merged into main)"
        assert all(label in line for line in on_main), on_main
        unmerged = {"branch": branch, "merged": False, "repo_same": True, "into": "main"}
        hits, _ = _recall(repo.root, home, session)
        assert hits, session
        assert all(hit["git"] == unmerged for hit in hits), hits
        # In its own worktree: the reader's own.
        own = _ask(worktree, home, session)
        assert own, session
        assert not any("said on git branch" in line for line in own), own
        # From the other worktree: in the shared home, labelled, below every hit of that worktree's own.
        other, into = next(side for s, side in sides.items() if s != session)
        elsewhere, first = _recall(other, home, session)
        assert elsewhere, session
        assert all(hit["git"] == {**unmerged, "into": into} for hit in elsewhere), elsewhere
        assert first > 0

    for at, (worktree, branch) in enumerate(sides.values(), 1):  # each branch finished, then merged
        repo.commit(worktree, {f"{branch.split('/')[1]}.txt": "done\n"}, f"finish {branch}", AFTER + at)
        repo.merge(repo.root, branch, AFTER + 100 + at)
    _ask(repo.root, home, TIMESTAMPS)  # the first prompt after the merge asks the worker for the facts
    for session, (_, branch) in sides.items():
        after = _ask(repo.root, home, session)
        assert after, session
        assert not any("said on git branch" in line for line in after), after  # the project's now
        hits, _ = _recall(repo.root, home, session)
        assert hits, session
        merged = {"branch": branch, "merged": True, "repo_same": True, "into": "main"}
        assert all(hit["git"] == merged for hit in hits), hits
