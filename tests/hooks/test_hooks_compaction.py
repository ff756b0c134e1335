"""Claude Code's compaction through the real hooks: `PreCompact` makes the writer write everything the
transcript owes (under the threshold too), and the `SessionStart` that follows it (`source` "compact")
waits for that write and gives back what it wrote of this session first; a new session's start has the
project's brief."""

from __future__ import annotations

from pathlib import Path

from dagmem.hooks import wait_for_worker
from dagmem.tests.hooks._claude import WORKER_BOUND, Transcript, context_of, hook

ARGS = (
    "--threshold",
    "100000",
    "--idle-after",
    "1e10",
)  # nothing is due at a Stop: only the compaction writes


def test_a_start_after_a_compaction_gives_back_what_was_written_before_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    t = Transcript(project / "transcripts" / "8a1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6.jsonl")
    u = t.user(None, "Don't use the ClMail module for notifications. Always run mix credo --strict first.")
    a = t.assistant(u, "Understood: no ClMail, and credo --strict before anything else.")
    ran = t.tool(a, "mix credo --strict", "Analysis took 0.4 seconds\n42 mods/funs, found no issues.")
    u2 = t.user(ran, "Which queue library do we use?")
    a2 = t.assistant(
        u2, "We decided to use Oban instead of a GenServer queue, because jobs must survive restarts."
    )
    assert hook("Stop", t.payload("Stop", stop_hook_active=False), project=project, args=ARGS).returncode == 0
    assert wait_for_worker(project / ".dagmem", WORKER_BOUND)
    assert not list((project / ".dagmem").glob("memory/topics/*.md"))  # under the threshold: nothing written

    pre = hook(
        "PreCompact",
        t.payload("PreCompact", trigger="auto", custom_instructions=""),
        project=project,
        args=ARGS,
    )
    assert pre.returncode == 0
    assert pre.stdout == b""
    t.compaction(a2, "Summary: notifications and the job queue were discussed.")
    # At once, as the host does: the hook itself waits for the write the compaction asked for.
    start = context_of(
        hook("SessionStart", t.payload("SessionStart", source="compact"), project=project, args=ARGS),
        "SessionStart",
    )
    mine = start.split("## Before the compaction (this session)\n", 1)[1]
    assert "Don't use the ClMail module for notifications." in mine
    assert "Oban instead of a GenServer" in mine
    assert "Always run mix credo --strict first." in mine
    assert "`mix credo --strict` passed" in mine  # the command that ran, from its tool evidence

    # A new session of the project starts with the brief: the conventions and the decisions.
    fresh = context_of(
        hook(
            "SessionStart",
            {**t.payload("SessionStart", source="startup"), "session_id": "another"},
            project=project,
        ),
        "SessionStart",
    )
    assert "## The person's conventions" in fresh
    assert "Always run mix credo --strict first." in fresh
    assert "## Decisions" in fresh
    assert not (project / ".dagmem" / "hooks" / "hooks.log").exists()
