"""`dagmem bench coding`: the git axis, on a real repository built in the run's scratch folder.

Two dev-set transcripts (`ours/gocli` on its branch `feat/stats-output`, `ours/rustlib` on
`fix/prerelease-order`) are replayed through the installed hooks, each in a worktree of one repository
on its own branch, every path in them moved to that worktree and each file an edit touched written there
first (so the importer finds it, as on the machine that made it); the worktrees share the main
worktree's home, as the hooks choose by default. Then each project's dev questions are asked as a new
session's first prompt (`UserPromptSubmit`), and scored judge-free on the injected context, each beside
the plain ranking (`DAGMEM_GIT=off`) in the same run:

- **unmerged**: asked on `main` before the branches merge, the share of the questions whose answering hit
  (a hit holding a key) is labelled with the branch it was said on, not given as the project's;
- **merged**: after a commit on each branch and both merged into `main` (a prompt first, whose hook asks
  the worker for the merge facts, as the first prompt after a merge does), the share given unlabelled;
- **shared**: asked from the *other* worktree before any merge, the share answered (every key in the
  context), beside the same questions against a home of that worktree's own (`<worktree>/.dagmem`, the
  split the README describes, written by `dagmem import` and `dagmem write`);
- **code**: after the merge, each file an edit touched is renamed (`git mv`) or rewritten, in turn; asked
  "what did we change in <path>?", the share of the questions whose hit citing that file is labelled
  "the code changed since" (beside `DAGMEM_CODE_CHECK=off`).

The check's cost: every prompt on `main` after the merge is asked with the check on and off, in turn, three
times each, and each hook's wall time kept apart (`UserPromptSubmit, checks on` / `checks off`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._coding_data import OURS, Session, load_questions, sessions_of
from ._coding_hooks import Hooks, Timings
from ._coding_replay import ProjectRun, _encoded, _Live, _Replay
from ._coding_score import answered

__all__ = ["GIT_PROJECTS", "OFF", "ON", "run_git"]

GIT_PROJECTS = {"ours/gocli": "feat/stats-output", "ours/rustlib": "fix/prerelease-order"}
ON, OFF = "UserPromptSubmit, checks on", "UserPromptSubmit, checks off"
_ASKING = uuid.UUID("6c2f0a5e-1b7d-4e8a-9c3f-2a4b6d8e0f12")
_PLAIN = {"DAGMEM_GIT": "off"}
_UNCHECKED = {"DAGMEM_CODE_CHECK": "off"}
_EDITS = ("Edit", "Write", "MultiEdit")
_REPEAT = 3  # times each prompt on `main` after the merge is timed with the check on and off


@dataclass
class _Side:
    project: str
    branch: str
    worktree: Path
    sessions: list[Session]
    files: list[str] = field(default_factory=list)  # relative paths an edit touched


def _git(where: Path, *args: str, at: int | None = None) -> str:
    env = dict(os.environ)
    if at is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{at} +0000"
    done = subprocess.run(
        ["git", "-C", str(where), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def _source_cwd(session: Session) -> str:
    with session.path.open(encoding="utf-8") as f:
        for raw in f:
            line = json.loads(raw)
            if isinstance(line.get("cwd"), str):
                return str(line["cwd"])
    raise ValueError(f"{session.path}: no line names its cwd")


def _moved(side: _Side, folder: Path) -> list[Session]:
    """The side's transcripts with every path in them moved to its worktree (`cwd`, tool inputs), and the
    files their edits touched written into the worktree (each edit's new text)."""
    out: list[Session] = []
    texts: dict[str, list[str]] = {}
    for session in side.sessions:
        old = _source_cwd(session)
        target = folder / session.path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        lines = session.path.read_text(encoding="utf-8").replace(old, str(side.worktree))
        target.write_text(lines, encoding="utf-8")
        out.append(Session(session.id, target, (), session.started))
        for raw in lines.splitlines():
            message = json.loads(raw).get("message")
            blocks = message.get("content") if isinstance(message, dict) else None
            for block in blocks if isinstance(blocks, list) else []:
                if (
                    not isinstance(block, dict)
                    or block.get("type") != "tool_use"
                    or block.get("name") not in _EDITS
                ):
                    continue
                args = block.get("input") or {}
                path = str(args.get("file_path", ""))
                if not path.startswith(str(side.worktree) + "/"):
                    continue
                new = [args.get("new_string"), args.get("content")] + [
                    e.get("new_string") for e in args.get("edits") or []
                ]
                texts.setdefault(path, []).extend(t for t in new if isinstance(t, str))
    for path, parts in texts.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text("\n".join(parts) + "\n", encoding="utf-8")
        side.files.append(os.path.relpath(path, side.worktree))
    return out


def _chunks(context: str) -> list[str]:
    """A prompt's context as its hits (each from its `- [` line to the next)."""
    return re.split(r"\n(?=- )", context)


def _holding(context: str, needles: Sequence[str]) -> list[str]:
    folded = [n.casefold() for n in needles]
    return [c for c in _chunks(context) if any(n in c.casefold() for n in folded)]


def _rate(hits: list[bool]) -> dict[str, Any]:
    return {"n": len(hits), "rate": round(sum(hits) / len(hits), 3) if hits else None}


class _Asker:
    def __init__(self, hooks: Hooks, name: str) -> None:
        self.hooks, self.name, self.n = hooks, name, 0

    def ask(self, prompt: str, *, env: dict[str, str] | None = None, timed: str | None = None) -> str:
        self.n += 1
        sid = str(uuid.uuid5(_ASKING, f"{self.name}/{self.n}"))
        payload = {
            "session_id": sid,
            "transcript_path": str(self.hooks.project / f".unwritten-{sid}.jsonl"),
            "cwd": str(self.hooks.project),
            "hook_event_name": "UserPromptSubmit",
            "permission_mode": "default",
            "prompt": prompt,
        }
        return self.hooks.run("UserPromptSubmit", payload, env=env, timed=timed).context


def run_git(scratch: Path, timings: Timings, progress: Callable[[str], None]) -> dict[str, Any]:
    """The git scenarios (see the module); `raw.coding["git"]` of the report."""
    base = scratch / "git"
    repo = base / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "bench@example.com")
    _git(repo, "config", "user.name", "bench")
    (repo / ".git" / "info" / "exclude").write_text(".dagmem/\n.claude/\n.unwritten-*\n", encoding="utf-8")
    (repo / "README.md").write_text("# two projects, one repository\n", encoding="utf-8")
    _git(repo, "add", "README.md")
    # A minute before the replay: a branch is made from a commit older than any turn said on it. Made in
    # the replay's first second, that commit would be "made at or after" the turns said in that second,
    # and a branch with no commit of its own would count as merged for them (a tie on the second).
    _git(repo, "commit", "-q", "-m", "start", at=int(time.time()) - 60)
    user_home = base / "user"
    user_home.mkdir()
    home = repo / ".dagmem"
    questions = load_questions(("dev",), OURS)
    sides: list[_Side] = []
    for project, branch in GIT_PROJECTS.items():
        worktree = base / project.replace("/", "-")
        _git(repo, "worktree", "add", "-q", "-b", branch, str(worktree))
        side = _Side(project, branch, worktree, sessions_of(project, None))
        side.sessions = _moved(side, base / "src" / project.replace("/", "-"))
        sides.append(side)
    problems: list[str] = []
    for side in sides:
        progress(f"git: {side.project} replayed in its worktree on {side.branch}")
        hooks = Hooks(side.worktree, home, user_home, timings)
        run = ProjectRun(side.project, home=home)
        live = _Live(base / "claude" / "projects" / _encoded(side.worktree))
        replay = _Replay(run, hooks, live, side.worktree)
        try:
            for session in side.sessions:
                replay.session(session)
        finally:
            live.close()
        problems += run.problems
    main = _Asker(Hooks(repo, home, user_home, timings), "main")
    asked = {side.project: [q for q in questions if q.project == side.project] for side in sides}
    branch_of = {side.project: side.branch for side in sides}

    progress("git: asked on main before the merge")
    unmerged: dict[str, list[bool]] = {"dagmem": [], "plain": []}
    for side in sides:
        for q in asked[side.project]:
            for method, env in (("dagmem", None), ("plain", _PLAIN)):
                found = _holding(main.ask(q.question, env=env), q.keys)
                if found:
                    label = f"said on git branch {branch_of[q.project]}, not merged into main"
                    unmerged[method].append(all(label in c for c in found))

    progress("git: asked from the other worktree (one shared home, then a home of its own)")
    shared: dict[str, list[bool]] = {"dagmem": [], "split": []}
    for side, other in ((sides[0], sides[1]), (sides[1], sides[0])):
        there = _Asker(Hooks(other.worktree, home, user_home, timings), f"from-{other.branch}")
        for q in asked[side.project]:
            shared["dagmem"].append(answered(there.ask(q.question), q.keys))
    for side, other in ((sides[0], sides[1]), (sides[1], sides[0])):
        own = other.worktree / ".dagmem"
        for session in other.sessions:
            _dagmem("import", "claude-code", str(session.path), home=own)
        _dagmem("write", "--force", home=own)
        there = _Asker(Hooks(other.worktree, own, user_home, timings), f"split-{other.branch}")
        for q in asked[side.project]:
            shared["split"].append(answered(there.ask(q.question), q.keys))
        shutil.rmtree(own)

    progress("git: each branch committed and merged into main")
    now = int(time.time()) + 2  # after every turn of the replay: the work that followed them
    for side in sides:
        _git(side.worktree, "add", "-A", ".")
        _git(side.worktree, "commit", "-q", "-m", f"work on {side.branch}", at=now)
    for side in sides:
        _git(repo, "merge", "-q", "--no-ff", side.branch, "-m", f"merge {side.branch}", at=now + 1)
    main.ask("what changed on main?")  # the first prompt after a merge: its hook asks for the facts
    main.hooks.wait_for_worker()
    merged: dict[str, list[bool]] = {"dagmem": [], "plain": []}
    for side in sides:
        for q in asked[side.project]:
            seen = {
                "dagmem": _holding(main.ask(q.question, timed=ON), q.keys),
                "plain": _holding(main.ask(q.question, env=_PLAIN), q.keys),
            }
            main.ask(q.question, env=_UNCHECKED, timed=OFF)
            _cost(main, q.question, again=_REPEAT - 1)
            for method, kept in merged.items():
                if seen[method]:
                    kept.append(not any("said on git branch" in c for c in seen[method]))

    progress("git: files renamed and rewritten since, then asked about")
    code: dict[str, list[bool]] = {"dagmem": [], "plain": []}
    for side in sides:
        for n, path in enumerate(side.files):
            if n % 2 == 0:
                _git(repo, "mv", path, f"{path}.moved")
            else:
                (repo / path).write_text("rewritten since\n", encoding="utf-8")
    _git(repo, "commit", "-q", "-am", "renamed and rewritten", at=now + 2)
    for side in sides:
        for path in side.files:
            prompt = f"what did we change in {path}?"
            seen = {
                "dagmem": _holding(main.ask(prompt, timed=ON), [path]),
                "plain": _holding(main.ask(prompt, env=_UNCHECKED, timed=OFF), [path]),
            }
            _cost(main, prompt, again=_REPEAT - 1)
            for method, kept in code.items():
                if seen[method]:
                    kept.append(any("the code changed since" in c for c in seen[method]))
    return {
        "projects": dict(GIT_PROJECTS),
        "unmerged_labelled": {k: _rate(v) for k, v in unmerged.items()},
        "merged_unlabelled": {k: _rate(v) for k, v in merged.items()},
        "shared_answered": {k: _rate(v) for k, v in shared.items()},
        "code_labelled": {k: _rate(v) for k, v in code.items()},
        "files": sum(len(side.files) for side in sides),
        "problems": problems,
    }


def _cost(asker: _Asker, prompt: str, *, again: int) -> None:
    """The prompt's hook with the check off and on, `again` times each, in turn: its cost, measured
    beside itself (the shared machine's noise hits both alike)."""
    for _ in range(again):
        asker.ask(prompt, env=_UNCHECKED, timed=OFF)
        asker.ask(prompt, timed=ON)


def _dagmem(*args: str, home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dagmem", *args, "--home", str(home)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"dagmem {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-300:]}"
        )
