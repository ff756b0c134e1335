"""The public surface: `dagmem.__all__` is pinned (that it is exactly the face's public names, each of
them resolving: test_faces.py), and every exception dagmem defines derives from `dagmem.DagmemError` (one
clause catches all of ours)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
from pathlib import Path

import pytest

import dagmem
from dagmem.tests.package.test_faces import offered


def test_the_public_api_is_pinned() -> None:
    """Nothing appears in or disappears from the public API by accident."""
    expected = {
        "HEAD", "ArchiveCorrupt", "ArchiveRecord", "BatchInput", "DagmemError", "Distiller", "Edits",
        "EventHandler", "Evidence", "ExtractiveDistiller", "FileSessionStore", "ForgetReport", "GitContext", "GitError", "Hit",
        "HomeBusy",
        "InvalidInput",
        "LastFailure", "MemoryOff",
        "MemorySessionStore", "Node", "ReasonCode", "RecallQuery", "RestartIntensityExceeded", "Role", "Runtime",
        "RuntimeClosed", "RuntimeConfig", "RuntimeCrashed", "RuntimeStatus", "SessionCrashed",
        "SessionInvalid", "SessionMeta", "SessionSnapshot", "SessionStore", "Status", "SupervisorEvent", "Tip",
        "ToolEvidence", "TopicReader", "Turn", "UnknownNode", "UnknownSession", "WriteFailure", "count_tokens", "render_context",
        "OutOfScope", "Scope", "load_scope",
    }  # fmt: skip
    assert set(offered(dagmem)) == expected
    assert issubclass(dagmem.InvalidInput, ValueError)


def _all_modules() -> list[types.ModuleType]:
    modules = [dagmem]
    for info in pkgutil.walk_packages(dagmem.__path__, "dagmem."):
        if info.name.startswith("dagmem.tests") or info.name.endswith("__main__"):
            continue
        try:
            modules.append(importlib.import_module(info.name))
        except dagmem.memory.errors.ExtraMissing:  # needs an optional extra that is not installed
            continue
    return modules


def test_every_exception_dagmem_defines_derives_from_dagmem_error() -> None:
    # The simulated process death is a BaseException on purpose: nothing may catch it as an error.
    exempt = {"dagmem.memory.faults.InjectedCrash", "dagmem.memory.faults.Tear"}
    seen = []
    for module in _all_modules():
        for _name, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ != module.__name__ or not issubclass(value, BaseException):
                continue
            qualified = f"{value.__module__}.{value.__qualname__}"
            seen.append(qualified)
            if qualified not in exempt:
                assert issubclass(value, dagmem.DagmemError), qualified
    assert len(seen) > 10  # the walk found the package's modules


def test_nothing_outside_actors_imports_its_private_modules() -> None:
    for module in _all_modules():
        if module.__name__.startswith("dagmem.actors") or not getattr(module, "__file__", None):
            continue
        source = inspect.getsource(module)
        assert "actors._" not in source, module.__name__


@pytest.mark.anyio
async def test_config_beside_a_scalar_it_overrides_is_invalid_input(tmp_path: Path) -> None:
    config = dagmem.RuntimeConfig(token_threshold=500)
    with pytest.raises(dagmem.InvalidInput, match="token_threshold"):
        async with dagmem.Runtime.open(tmp_path, token_threshold=1000, config=config):
            pass
    assert not (tmp_path / "memory").exists()  # refused before anything was written
    async with dagmem.Runtime.open(tmp_path, config=config) as rt:  # alone, it is the settings
        await rt.append("s", "user", "hello")


@pytest.mark.anyio
async def test_a_closed_runtime_raises_runtime_closed(tmp_path: Path) -> None:
    async with dagmem.Runtime.open(tmp_path) as rt:
        await rt.append("s", "user", "hello")
    with pytest.raises(dagmem.RuntimeClosed):
        await rt.append("s", "user", "too late")
    with pytest.raises(dagmem.RuntimeClosed):
        await rt.flush()


def test_every_package_of_the_tree_is_installed() -> None:
    """pyproject lists the packages by hand (the repository root is the package): a new subpackage that
    is not listed would be missing from a plain `pip install .`."""
    import tomllib

    root = Path(dagmem.__file__).parent
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"dagmem"} | {
        "dagmem." + ".".join(init.parent.relative_to(root).parts)
        for init in root.rglob("__init__.py")
        if init.parent != root
        and not init.parent.relative_to(root).parts[0].startswith((".", "tests", "build"))
    }
    assert listed == found
