"""The git axis in what the hooks inject (docs/hooks.md, "Git"): a prompt read in a worktree ranks and
labels each hit by the branch it was said on (a branch not merged into the reader's HEAD comes below the
reader's own, labelled; once its work merged, it is the reader's), checks the files an edit cites against
the reader's worktree, a session's start leaves out a `File` entry whose file is gone and labels one that
changed; worktrees of one repository share one home unless one has its own; the prompt's hook never runs
git, and asks the worker for the merge facts it lacks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from dagmem.hooks import hook_home, project_home
from dagmem.hooks._context import prompt_context, start_context
from dagmem.hooks._queue import queued
from dagmem.memory.adopt import Importer, SourceClock, import_into_store
from dagmem.memory.checkout import read_checkout, refresh
from dagmem.memory.store import FileSessionStore
from dagmem.memory.writing import write_home
from dagmem.tests._git_repo import T0, Repo, Said

S1, S2 = "11111111-aaaa-4bbb-8ccc-000000000001", "22222222-aaaa-4bbb-8ccc-000000000002"
S3 = "33333333-aaaa-4bbb-8ccc-000000000003"
_OTHER = [  # the rest of the project's memory: what a query is ranked among
    ("How do we deploy the app?", "We deploy with fly.io from the main branch."),
    ("Which database do we run?", "Postgres 16, in a container for tests."),
    ("Where do the docs live?", "In docs/, built with mkdocs."),
    ("What formats the code?", "The formatter runs on save and in CI."),
]
QUESTION = "which job queue library do we use for background jobs"


def _remember(home: Path, *transcripts: Path) -> None:
    clock = SourceClock()
    import_into_store(Importer("claude-code", list(transcripts)), FileSessionStore(home, clock=clock), clock)
    write_home(home, force=True)


@pytest.fixture
def project(tmp_path: Path) -> tuple[Repo, Path, Path]:
    """A repository (main) with a worktree on feature/x; a decision said in each, the feature's first."""
    repo = Repo(tmp_path / "app")
    repo.commit(repo.root, {"lib/jobs.py": "QUEUE = 'exq'\n"}, "first", T0)
    feature = repo.worktree(tmp_path / "feature", "feature/x", at=T0)
    one = Said(tmp_path / "t" / f"{S1}.jsonl", S1, feature, "feature/x", T0 + 100)
    one.user("Which job queue library do we use for background jobs?")
    one.assistant("For background jobs we use the Oban job queue library: jobs live in Postgres.")
    two = Said(tmp_path / "t" / f"{S2}.jsonl", S2, repo.root, "main", T0 + 110)
    two.user("And the mailer? Does it use a job queue?")
    two.assistant("The mailer's background jobs use the Exq queue library for now.")
    three = Said(tmp_path / "t" / f"{S3}.jsonl", S3, repo.root, "main", T0 + 120)
    for ask, answer in _OTHER:
        three.user(ask)
        three.assistant(answer)
    home = tmp_path / "app" / ".dagmem"
    _remember(home, one.path, two.path, three.path)
    return repo, feature, home


def _order(block: str | None) -> list[str]:
    assert block is not None
    return [line for line in block.split("\n") if line.startswith("- ")]


def test_an_unmerged_branchs_decision_ranks_below_the_readers_own_and_is_labelled_until_it_merges(
    project: tuple[Repo, Path, Path],
) -> None:
    repo, feature, home = project
    memory = home / "memory"
    location = read_checkout(str(repo.root))
    assert location is not None
    refresh(memory, location.location)
    plain = _order(prompt_context(home, QUESTION, session=None, with_core=False))
    assert "Oban" in plain[0]  # by relevance alone the feature's decision comes first
    on_main = _order(prompt_context(home, QUESTION, session=None, with_core=False, cwd=str(repo.root)))
    assert "Exq" in on_main[0]
    oban = next(line for line in on_main if "Oban" in line)
    assert "(said on git branch feature/x, not merged into main)" in oban
    on_feature = _order(prompt_context(home, QUESTION, session=None, with_core=False, cwd=str(feature)))
    assert "Oban" in on_feature[0]
    assert "said on git branch" not in on_feature[0]

    repo.commit(feature, {"lib/jobs.py": "QUEUE = 'oban'\n"}, "use Oban", T0 + 200)
    repo.merge(repo.root, "feature/x", T0 + 300)
    refresh(memory, location.location)
    merged = _order(prompt_context(home, QUESTION, session=None, with_core=False, cwd=str(repo.root)))
    assert "Oban" in merged[0]
    assert not any("said on git branch feature/x" in line for line in merged)


def test_the_prompts_hook_runs_no_git_and_asks_the_worker_for_the_facts_it_lacks(
    project: tuple[Repo, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, _feature, home = project
    started: list[Path] = []
    monkeypatch.setattr("dagmem.hooks._queue.start_worker", started.append)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a git process was run on the prompt's path")

    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    block = prompt_context(home, QUESTION, session=None, with_core=False, cwd=str(repo.root))
    assert block is not None
    assert "not merged into main" in block
    assert started == [home]
    assert len(queued(home)) == 1


def test_a_hit_citing_an_edit_is_checked_against_the_readers_worktree(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "app")
    repo.commit(repo.root, {"lib/jobs.py": "QUEUE = 'exq'\n"}, "first", T0)
    (repo.root / "lib/jobs.py").write_text("QUEUE = 'oban'\n")
    said = Said(tmp_path / "t" / f"{S1}.jsonl", S1, repo.root, "main", T0 + 100)
    said.user("Switch the jobs queue setting to oban please.")
    said.assistant("Switching the jobs queue setting in lib/jobs.py to oban.")
    said.edit("lib/jobs.py", "QUEUE = 'exq'", "QUEUE = 'oban'")
    home = repo.root / ".dagmem"
    _remember(home, said.path)
    ask = "what is the jobs queue setting in lib/jobs.py"
    held = prompt_context(home, ask, session=None, with_core=False, cwd=str(repo.root))
    assert held is not None
    assert "the code changed since" not in held
    (repo.root / "lib/jobs.py").write_text("QUEUE = 'rq'\n")
    changed = prompt_context(home, ask, session=None, with_core=False, cwd=str(repo.root))
    assert changed is not None
    assert "(the code changed since " in changed
    assert "lib/jobs.py no longer holds it" in changed
    off = prompt_context(home, ask, session=None, with_core=False, cwd=str(repo.root), code_check=False)
    assert off is not None
    assert "the code changed since" not in off
    start = start_context(home, cwd=str(repo.root))
    assert start is not None
    assert "no longer holds it) `lib/jobs.py` edited" in start.replace("\\", "")
    (repo.root / "lib/jobs.py").unlink()
    gone = start_context(home, cwd=str(repo.root))
    assert gone is not None
    assert "`lib/jobs.py` edited" not in gone.replace("\\", "")
    assert "lib/jobs.py is gone" in (
        prompt_context(home, ask, session=None, with_core=False, cwd=str(repo.root)) or ""
    )


def test_worktrees_share_the_main_worktrees_home_unless_one_has_its_own(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "app")
    repo.commit(repo.root, {"a.py": "x = 1\n"}, "first", T0)
    feature = repo.worktree(tmp_path / "feature", "feature/x")
    (feature / "src").mkdir()
    assert project_home(str(feature / "src")) == repo.root / ".dagmem"
    assert hook_home(None, str(feature), env={}) == repo.root / ".dagmem"
    assert project_home(str(repo.root)) == repo.root / ".dagmem"
    (feature / ".dagmem").mkdir()
    assert project_home(str(feature)) == feature / ".dagmem"
    assert hook_home(None, str(feature), env={"DAGMEM_HOME": str(tmp_path / "h")}) == tmp_path / "h"


def test_a_session_start_labels_a_brief_entry_said_on_an_unmerged_branch_and_gives_the_readers_first(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path / "app")
    repo.commit(
        repo.root, {"lib/jobs.py": "QUEUE = 'exq'\n", "lib/http.py": "CLIENT = 'httpoison'\n"}, "first", T0
    )
    feature = repo.worktree(tmp_path / "feature", "feature/x", at=T0)
    (feature / "lib/jobs.py").write_text("QUEUE = 'oban'\n")
    (repo.root / "lib/http.py").write_text("CLIENT = 'req'\n")
    one = Said(tmp_path / "t" / f"{S2}.jsonl", S2, feature, "feature/x", T0 + 200)  # written last: newest
    one.user("Switch the job queue.")
    one.assistant("We will use Oban instead of Exq for the background job queue from now on.")
    one.edit("lib/jobs.py", "QUEUE = 'exq'", "QUEUE = 'oban'")
    two = Said(tmp_path / "t" / f"{S1}.jsonl", S1, repo.root, "main", T0 + 100)
    two.user("Switch the HTTP client.")
    two.assistant("We will use Req instead of HTTPoison for every outgoing HTTP call from now on.")
    two.edit("lib/http.py", "CLIENT = 'httpoison'", "CLIENT = 'req'")
    home = repo.root / ".dagmem"
    _remember(home, one.path, two.path)
    start = start_context(home, cwd=str(repo.root))
    assert start is not None
    decisions = start.split("## Decisions\n", 1)[1].split("\n## ", 1)[0].splitlines()
    assert "Req instead of HTTPoison" in decisions[0]
    assert "said on git branch" not in decisions[0]
    assert "(said on git branch feature/x, not merged into main) We will use Oban" in decisions[1]
    plain = start_context(home)
    assert plain is not None
    assert "said on git branch" not in plain
    assert "Oban instead of Exq" in plain.split("## Decisions\n", 1)[1].splitlines()[0]  # newest first, plain


def test_the_worker_computes_the_merge_facts_a_prompt_asked_for(project: tuple[Repo, Path, Path]) -> None:
    from dagmem.hooks._queue import GIT_JOB, enqueue
    from dagmem.hooks._worker import drain
    from dagmem.memory.checkout import load_facts

    repo, _feature, home = project
    main = read_checkout(str(repo.root))
    assert main is not None
    assert load_facts(home / "memory").repo(main.repo).facts == {}
    enqueue(home, GIT_JOB, str(repo.root))
    assert drain(home) == 1
    facts = load_facts(home / "memory").repo(main.repo)
    assert f"{main.commit} {main.commit}" in facts.facts
    assert set(facts.tips) == {"main", "feature/x"}
    block = prompt_context(home, QUESTION, session=None, with_core=False, cwd=str(repo.root))
    assert block is not None
    assert "not merged into main" in block
