"""The Claude Code importer records where each turn was said in git (docs/formats.md, "Git context"): a
line's `cwd` and `gitBranch` become the node's `metadata["git"]` (the repository resolved to its common
directory when the worktree is on this machine, so two worktrees give one repository; `cwd:<path>` when
it is not), an edit's file and a hash of what it wrote when the file exists, and the archive frames carry
the same; a line naming no branch outside any worktree has none."""

from __future__ import annotations

from pathlib import Path

from dagmem.memory.checkout import cited_of
from dagmem.memory.format import git_context_of, scan_archive
from dagmem.tests._git_repo import T0, Repo, Said
from dagmem.tests.memory.adopt.test_import import nodes_of, run_import, write_and_verify

S1, S2 = "11111111-aaaa-4bbb-8ccc-000000000001", "22222222-aaaa-4bbb-8ccc-000000000002"


def test_two_worktrees_are_one_repository_each_turn_on_its_branch_and_an_edit_cites_its_file(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path / "app")
    repo.commit(repo.root, {"lib/queue.py": "QUEUE = 'exq'\n"}, "first", T0)
    feature = repo.worktree(tmp_path / "feature", "feature/x", at=T0)
    (feature / "lib/queue.py").write_text("QUEUE = 'oban'\n")
    one = Said(tmp_path / "t" / f"{S1}.jsonl", S1, feature, "feature/x", T0 + 100)
    asked = one.user("Which queue?")
    edited = one.edit("lib/queue.py", "QUEUE = 'exq'", "QUEUE = 'oban'")
    two = Said(tmp_path / "t" / f"{S2}.jsonl", S2, repo.root / "lib", "main", T0 + 100)
    other = two.user("Which HTTP client?")
    home = tmp_path / "home"
    run_import(home, "claude-code", one.path, two.path)
    common = str((repo.root / ".git").resolve())
    said = git_context_of(nodes_of(home, S1)[asked].metadata["git"])
    assert said is not None
    assert (said.repo, said.branch, said.path) == (common, "feature/x", None)
    edit = git_context_of(nodes_of(home, S1)[edited].metadata["git"])
    assert edit is not None
    assert (edit.repo, edit.branch, edit.path, edit.cited) == (
        common,
        "feature/x",
        "lib/queue.py",
        cited_of("QUEUE = 'oban'"),
    )
    main = git_context_of(nodes_of(home, S2)[other].metadata["git"])
    assert main is not None
    assert (main.repo, main.branch) == (common, "main")
    write_and_verify(home)
    frames = {
        f.node_id: f for f in scan_archive((home / "memory/sources" / f"{S1}.md").read_bytes(), S1).frames
    }
    assert frames[edited].git == edit
    assert frames[asked].git == said


def test_a_worktree_this_machine_lacks_keeps_its_branch_and_its_path_and_no_branch_means_no_git(
    tmp_path: Path,
) -> None:
    elsewhere = Said(tmp_path / "t" / f"{S1}.jsonl", S1, Path("/nowhere/app"), "feature/y", T0)
    key = elsewhere.user("Shall we use Oban?")
    plain = Said(tmp_path / "t" / f"{S2}.jsonl", S2, tmp_path / "notes", None, T0)
    (tmp_path / "notes").mkdir()
    said = plain.user("Remind me of the plan.")
    home = tmp_path / "home"
    run_import(home, "claude-code", elsewhere.path, plain.path)
    git = git_context_of(nodes_of(home, S1)[key].metadata["git"])
    assert git is not None
    assert (git.repo, git.branch) == ("cwd:/nowhere/app", "feature/y")
    assert "git" not in nodes_of(home, S2)[said].metadata
