"""What users read names no file they do not have: the README, docs/, every command's help and the public
API's docstrings never cite the design notes ("DESIGN", "§")."""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path

import pytest

import dagmem
from dagmem.cli import main
from dagmem.cli._main import _parser
from dagmem.tests.package.test_faces import offered

ROOT = Path(dagmem.__file__).parent
FORBIDDEN = ("DESIGN", "§")


def offending(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(word in line for word in FORBIDDEN)]


def test_readme_and_docs_cite_no_design_notes() -> None:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    assert len(files) > 1
    found = {str(p.relative_to(ROOT)): offending(p.read_text(encoding="utf-8")) for p in files}
    assert not {path: lines for path, lines in found.items() if lines}


def commands() -> list[str]:
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


def test_every_help_text_cites_no_design_notes(capsys: pytest.CaptureFixture[str]) -> None:
    names = commands()
    assert "sim" in names
    for argv in [["--help"], *([name, "--help"] for name in names)]:
        with pytest.raises(SystemExit):
            main(argv)
        out = capsys.readouterr().out
        assert out.startswith("usage:"), argv
        assert not offending(out), (argv, offending(out))


def test_public_docstrings_cite_no_design_notes() -> None:
    found: dict[str, list[str]] = {}
    for name in offered(dagmem):
        obj = getattr(dagmem, name)
        members = [(name, obj)]
        if inspect.isclass(obj):
            members += [(f"{name}.{m}", v) for m, v in vars(obj).items() if not m.startswith("_")]
        for label, member in members:
            lines = offending(inspect.getdoc(member) or "")
            if lines:
                found[label] = lines
    assert not found
