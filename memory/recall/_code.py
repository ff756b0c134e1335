"""Hits checked against the code when injected (docs/currency.md, "Checked against the code"): a hit
citing an edit (its record keeps the file's path in the repository and a hash of what it wrote) is
labelled when the reader's worktree no longer holds it (`checkout.check`: one stat and at most one small
read per file). Per hit, each file is judged by the newest edit of it the hit cites (an older edit's text
was replaced by a newer one on purpose); at most `FILES` files per call, in the hits' order, each once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..checkout import CodeCheck, check

if TYPE_CHECKING:
    from ..format import GitContext
    from ._found import Found
    from ._hit import Hit

__all__ = ["FILES", "cited_contexts", "code_checks"]

FILES: Final = 8  # files checked per call (a prompt's hits), at most


def code_checks(
    hits: Sequence[Found | Hit], repo: str, root: str, *, files: int = FILES
) -> list[CodeCheck | None]:
    """For each of `hits`, what its cited files (in `repo`, checked out at `root`) say: the first that
    changed or is gone, None when they hold (or none was checked)."""
    seen: dict[tuple[str, str | None], CodeCheck] = {}
    paths: set[str] = set()
    out: list[CodeCheck | None] = []
    for hit in hits:
        label = getattr(hit, "git", None)
        if label is not None and not label.merged:
            out.append(None)  # said on an unmerged branch: its code never came here, nothing to check
            continue
        newest: dict[str, tuple[str, str | None]] = {}  # path -> (time, cited) of the hit's newest edit
        for evidence in hit.evidence:
            git = evidence.git
            if not git or git.get("repo") != repo or "path" not in git:
                continue
            when = evidence.time or ""
            if git["path"] not in newest or when >= newest[git["path"]][0]:
                newest[git["path"]] = (when, git.get("cited"))
        verdict: CodeCheck | None = None
        for path, (_, cited) in newest.items():
            key = (path, cited)
            if key not in seen:
                if len(paths) >= files and path not in paths:
                    continue  # the bound: a stat and a small read per file, a few files per prompt
                paths.add(path)
                seen[key] = check(root, path, cited)
            if seen[key].state != "holds" and verdict is None:
                verdict = seen[key]
        out.append(verdict)
    return out


_HEAD: Final = 8192  # bytes of a frame's head read: its anchor, source-id and source-meta lines


def cited_contexts(
    memory: Path, groups: Sequence[Sequence[tuple[str, str]]]
) -> list[list[tuple[GitContext, float]]]:
    """For each group of archived records ((session, anchor) each), the git contexts and times of those
    that have one, read without scanning an archive: each frame's offset from the workspace's index
    (`index.sqlite3`, opened read-only, once), then its head alone. A record the index does not hold (a
    cache behind or missing) gives nothing: the check is skipped, never wrong."""
    import sqlite3

    from ..durable import open_regular
    from ..errors import UnsafePath
    from ..format import WorkspacePaths, frame_meta

    paths = WorkspacePaths(memory)
    out: list[list[tuple[GitContext, float]]] = [[] for _ in groups]
    if not any(groups) or not paths.index.is_file():
        return out
    try:
        db = sqlite3.connect(f"{paths.index.as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return out
    try:
        for found, cites in zip(out, groups, strict=True):
            for session, anchor in cites:
                row = db.execute(
                    "SELECT offset FROM archived WHERE session = ? AND anchor = ? LIMIT 1", (session, anchor)
                ).fetchone()
                if row is None:
                    continue
                try:
                    fd = open_regular(paths.source(session), os.O_RDONLY)
                except (OSError, UnsafePath):
                    continue  # no archive there, or a symbolic link: nothing read through it
                try:
                    meta = frame_meta(os.pread(fd, _HEAD, int(row[0])))
                finally:
                    os.close(fd)
                if meta is not None and meta[4] is not None:
                    found.append((meta[4], meta[0]))
    except sqlite3.Error:
        return out
    finally:
        db.close()
    return out
