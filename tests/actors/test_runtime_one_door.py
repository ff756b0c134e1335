"""The writer actor is the runtime's one door into its workspace: `reorganise` and `forget` are jobs it
runs on the workspace it holds open, between two batches, never a second `Workspace` opened beside it;
a job's failure is its caller's answer and the writer goes on writing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import dagmem
from dagmem.memory.workspace import Workspace

pytestmark = pytest.mark.anyio


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The roots of the workspaces opened from now on, in order."""
    roots: list[Path] = []
    real = Workspace.__init__

    def counting(self: Workspace, root: Path | str, **options: Any) -> None:
        roots.append(Path(root))
        real(self, root, **options)

    monkeypatch.setattr(Workspace, "__init__", counting)
    return roots


async def test_reorganise_and_forget_run_on_the_writers_workspace(tmp_path: Path, opened: list[Path]) -> None:
    home = tmp_path / "home"
    async with dagmem.Runtime.open(home) as rt:
        await rt.append("s", "user", "The trip goes to Porto in May.")
        await rt.append("s", "user", "My locker code is plover-88231.")
        await rt.flush(force=True)
        assert opened == [home / "memory"]  # the writer's

        await rt.reorganise()
        report = await rt.forget(match="plover-88231")

        assert report.targets == ["s/n2"]
        assert report.clean
        assert opened == [home / "memory"]  # no second one beside it
        await rt.append("s", "user", "The garden needs watering on Sunday.")
        await rt.flush(force=True)
        assert any("watering" in hit.text for hit in await rt.recall("garden watering"))


async def test_a_failed_job_is_the_callers_answer_and_the_writer_goes_on(tmp_path: Path) -> None:
    async with dagmem.Runtime.open(tmp_path / "home") as rt:
        await rt.append("s", "user", "The trip goes to Porto in May.")
        with pytest.raises(dagmem.InvalidInput):
            await rt.forget(node="s/nope")  # refused in the writer's job: nothing forgotten
        await rt.append("s", "user", "The garden needs watering on Sunday.")
        status = await rt.flush(force=True)
        assert status.last_outcome == "success"
        assert any("Porto" in hit.text for hit in await rt.recall("trip to Porto"))
