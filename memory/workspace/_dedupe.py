"""Undo the one damage a stale index could make to an archive: a frame appended again, byte for byte.

An index that lost ids (a failed write, before the files won over it) let a forced write append frames
already in the file; the archive then holds a duplicate source id and every append refuses it. Dropping a
later copy that is exactly an earlier frame's bytes loses nothing, so `verify --repair` does it; any other
damage (a copy that differs, a torn or foreign frame) is left as it is."""

from __future__ import annotations

from ..format import scan_archive

__all__ = ["drop_exact_duplicates"]


def drop_exact_duplicates(data: bytes, session_id: str) -> tuple[bytes, list[str]] | None:
    """The archive without later exact copies of its frames, and the source ids dropped; None if there is
    no such copy, or if anything else is damaged too (then nothing is to be rewritten)."""
    kept: list[bytes] = []
    frames: dict[str, bytes] = {}
    dropped: list[str] = []
    pos = 0
    while True:
        scan = (
            scan_archive(data[pos:], session_id, known_ids=frames, base=pos)
            if pos
            else scan_archive(data, session_id)
        )
        for frame in scan.frames:
            frames[frame.source_id] = data[frame.offset : frame.end]
        kept.append(data[pos : scan.valid_end])
        if scan.status == "complete":
            break
        if scan.reason != "duplicate source id":  # a copy at the very end scans as torn, not corrupt
            return None
        # The copy starts where the valid prefix ends: parse it on its own, and drop it only if it is
        # whole and exactly the earlier frame's bytes.
        copy = scan_archive(data[scan.valid_end :], session_id, base=scan.valid_end)
        if not copy.frames:
            return None
        first = copy.frames[0]
        if frames.get(first.source_id) != data[first.offset : first.end]:
            return None
        dropped.append(first.source_id)
        pos = first.end
    if not dropped:
        return None
    return b"".join(kept), dropped
