"""Optional git history per session: one small commit per turn, listing the paths it touched.

The objects are written in process, as git writes loose objects: `zlib(b"<type> <size>\\0" + body)` under
`.git/objects/<2 hex>/<38 hex>`, each one fsynced before its rename (`core.fsync=added`), and the branch is
moved last through its lock file (its new value fsynced, then renamed onto it), so a power loss can lose
the newest commits but never leave a ref pointing at a missing object. A commit writes the changed files'
blobs and the trees on their paths (a shard's tree, `history/`'s, the root's): O(1) objects per turn
whatever the session's length, where `git add` + `git commit` started two processes that each read and
rewrote the session's whole index.

What a commit costs is its waits for the disk, so it waits twice, not once an object: its objects are
built in memory, written to temp files and fsynced all at once from a small thread pool (ext4 commits
concurrent fsyncs in one journal transaction: 0.64 ms for 5 files from 8 threads here, 0.90 ms one after
another, and under load ~1 ms against 2-20 ms), then renamed; then the branch's new value is fsynced and
renamed onto the ref. The cached trees keep each entry serialised in git's order, so a commit that adds one entry to
a 256-entry shard joins bytes instead of formatting and sorting the shard; zlib's state is sized to each
object (its default setup costs more than compressing a 400-byte blob).

The branch is read without a lock and checked again under it: the lock (`<ref>.lock`, taken as git takes
it) is created by hard-linking the already-fsynced new value (`<ref>.<pid>-<n>.lock`, a name git skips),
and renamed at once, so a process killed during a commit leaves no lock behind (git never breaks a stale
lock, so one would stop every later commit). If the branch moved meanwhile (a host's own `git commit`),
the commit is built again on top of it; its objects already written are left dangling, as git leaves them.

Why not a library: libgit2 (pygit2) fsyncs each object's directory too (two fsyncs an object, ~8-13 ms a
commit measured here) and rewrites the whole index on every write; `git fast-import` makes the history
visible to other readers only at a checkpoint, and each checkpoint is a new pack. The format written here
is the documented loose-object, tree, commit and index format; tests read it back with plain git
(`git log`, `git status`, `git fsck`).

The index (`.git/index`, what `git status` compares with) is a cache of the last commit's tree, kept in
memory (stat data from the file just hashed) and not fsynced. Writing it is O(files) (its checksum covers
every entry), so it is rewritten after every commit while a session has up to 512 files, then after every
`files // 512`-th commit: O(1) a turn on average (the cost of ~512 entries, ~0.1-0.3 ms), at the price of
a `git status` that may not show the newest few turns as committed yet (`git log` always does). If
another git command holds the index's lock, that rewrite is skipped and the next commit catches up. One
process writes a session (the store's rule); another process that commits meanwhile is noticed by its new
ref value and the caches are read again.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import itertools
import os
import re
import struct
import subprocess
import threading
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

from .. import faults
from ..durable import fsync_all, pid_alive
from ..errors import DagmemError

__all__ = ["GitError", "SessionGit", "rewrite_history"]

_IDENTITY = ("-c", "user.name=dagmem", "-c", "user.email=dagmem@localhost")
_SIGNATURE = b"dagmem <dagmem@localhost>"
_BLOB_MODE = 0o100644
_TREE_MODE = 0o40000
_LOCK_WAIT_S = 5.0
_INDEX_EVERY = 512  # files per commit between index rewrites (see above)
_ATTEMPTS = 20  # commits retried when another process moves the branch meanwhile
_counter = itertools.count()
_VALUE_NAME = re.compile(r"(.+)\.([1-9][0-9]*)-[0-9]+\.lock")  # a ref's new value, before it is linked

Entries = dict[str, tuple[int, bytes]]  # name -> (mode, 20-byte object id)


class GitError(DagmemError):
    """A git command or object write of the optional session history failed."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # A host's own git settings (hooks, signing, templates) must not leak into dagmem's commits.
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    env.pop("GIT_INDEX_FILE", None)
    return env


def _tree_key(name: str, mode: int) -> bytes:
    # git orders a tree's entries by name, a subtree's name as if it ended in "/".
    return name.encode() + (b"/" if mode == _TREE_MODE else b"")


def _parse_tree(body: bytes) -> Entries:
    entries: Entries = {}
    pos = 0
    while pos < len(body):
        space = body.index(b" ", pos)
        nul = body.index(b"\0", space)
        entries[body[space + 1 : nul].decode()] = (int(body[pos:space], 8), body[nul + 1 : nul + 21])
        pos = nul + 21
    return entries


class _Tree:
    """One directory's entries at the cached commit, each kept serialised in git's order: a commit that
    changes one entry of a 256-entry shard rewrites that entry's bytes and joins the rest as they are."""

    __slots__ = ("_lines", "_order", "entries")

    def __init__(self, entries: Entries) -> None:
        self.entries = entries
        self._lines = {_tree_key(name, mode): b"%o %s\0%s" % (mode, name.encode(), oid)
                       for name, (mode, oid) in entries.items()}  # fmt: skip
        self._order = sorted(self._lines)

    def get(self, name: str) -> tuple[int, bytes] | None:
        return self.entries.get(name)

    def set(self, name: str, mode: int, oid: bytes) -> None:
        key = _tree_key(name, mode)
        old = self.entries.get(name)
        if old is not None and old[0] != mode and (old[0] == _TREE_MODE or mode == _TREE_MODE):
            old_key = _tree_key(name, old[0])  # a file became a directory or back: its place moves
            del self._lines[old_key]
            self._order.remove(old_key)
            old = None
        if old is None:
            bisect.insort(self._order, key)
        self.entries[name] = (mode, oid)
        self._lines[key] = b"%o %s\0%s" % (mode, name.encode(), oid)

    def body(self) -> bytes:
        return b"".join(map(self._lines.__getitem__, self._order))


def _index_entry(path: str, oid: bytes, st: os.stat_result | None) -> bytes:
    mask = 0xFFFFFFFF
    if st is None:
        # Unknown stat data: git compares the file's content instead (and may refresh the entry itself).
        stat = (0, 0, 0, 0, 0, 0, _BLOB_MODE, 0, 0, 0)
    else:
        stat = (
            int(st.st_ctime) & mask,
            st.st_ctime_ns % 1_000_000_000,
            int(st.st_mtime) & mask,
            st.st_mtime_ns % 1_000_000_000,
            st.st_dev & mask,
            st.st_ino & mask,
            _BLOB_MODE,
            st.st_uid & mask,
            st.st_gid & mask,
            st.st_size & mask,
        )
    name = path.encode()
    body = struct.pack(">10I20sH", *stat, oid, min(len(name), 0xFFF)) + name
    return body + b"\0" * (8 - len(body) % 8)  # 1 to 8 NULs: entries are padded to 8 bytes


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _deflate(raw: bytes) -> bytes:
    """zlib at git's default level, with a window and hash sized to the object: `zlib.compress` sets up
    (and zeroes) ~300 KiB of state, which costs more than compressing a 400-byte blob. The window
    still covers the whole object, so the bytes are all but the same; git inflates any window size."""
    wbits = max(9, min(15, (len(raw) + 262).bit_length()))
    deflate = zlib.compressobj(6, zlib.DEFLATED, wbits, max(1, min(8, wbits - 7)))
    return deflate.compress(raw) + deflate.flush()


class SessionGit:
    """The git history of one session directory; keep one per session (it caches the last commit)."""

    def __init__(self, root: Path, *, fsync: bool = True) -> None:
        self.root = root
        self.git_dir = root / ".git"
        self.fsync = fsync
        self._mutex = threading.Lock()
        self._excluded = False  # /.lock is in info/exclude (checked once per object)
        self._head: bytes | None = None  # the commit this object last wrote or read
        self._trees: dict[str, _Tree] = {}  # directory ("" is the root) -> its entries at _head
        self._index: dict[str, bytes] | None = None  # path -> index entry
        self._paths: list[str] = []  # the index's paths, sorted
        self._index_owed = 0  # commits since the index was last written
        self._objects = str(self.git_dir / "objects")
        # The loose objects the last commit wrote (paths): what it added, for a measurement of growth.
        self.new_objects: list[str] = []
        self._swept: set[str] = set()  # refs whose leftover new values were looked for

    # -- setup ---------------------------------------------------------------------------------------

    def _run(self, *args: str) -> bytes:
        result = subprocess.run(
            ["git", "-C", str(self.root), *_IDENTITY, *args], capture_output=True, env=_env(), check=False
        )
        if result.returncode != 0:
            message = result.stderr.decode(errors="replace").strip()
            raise GitError(f"git {args[0]} failed in {self.root}: {message}")
        return result.stdout

    def ensure(self) -> None:
        if self.git_dir.is_dir():
            if not self._excluded:  # a repository begun before the store had a session lock file
                self._exclude_lock()
            return
        faults.hit("git:init")
        self._run("init", "-q")
        for key, value in (
            ("core.fsync", "added"),
            ("commit.gpgsign", "false"),
            ("core.hooksPath", "/dev/null"),
            ("gc.auto", "0"),
        ):
            self._run("config", key, value)
        self._exclude_lock()

    def _exclude_lock(self) -> None:
        """The session's lock file is the store's, not the host's history: keep it out of `git status`."""
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        exclude = info / "exclude"
        try:
            present = "/.lock" in exclude.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            present = False
        if not present:
            with exclude.open("a", encoding="utf-8") as out:
                out.write("/.lock\n")
        self._excluded = True

    # -- objects -------------------------------------------------------------------------------------

    def _object_path(self, oid: bytes) -> str:
        name = oid.hex()
        return f"{self._objects}/{name[:2]}/{name[2:]}"

    def _stage(self, batch: dict[bytes, bytes], kind: bytes, body: bytes) -> bytes:
        """The object's id; its bytes join `batch` unless it is on disk already (content-addressed)."""
        raw = b"%s %d\0%s" % (kind, len(body), body)
        oid = hashlib.sha1(raw, usedforsecurity=False).digest()
        if oid not in batch and not os.path.exists(self._object_path(oid)):
            batch[oid] = raw
        return oid

    def _put(self, batch: dict[bytes, bytes]) -> None:
        """Write the batch's objects as git writes loose objects: each to a temp file, fsynced, renamed.
        The fsyncs (and that of `objects/` when a fan-out directory is new) run at once, and every rename
        waits for all of them."""
        written: list[tuple[int, str, str]] = []  # (fd, temp path, final path)
        dirs: list[int] = []  # `objects/`, open when this batch made one of its directories
        try:
            for oid, raw in batch.items():
                final = self._object_path(oid)
                fan = final[:-39]
                tmp = f"{fan}/tmp_obj_{os.getpid()}_{threading.get_ident()}_{next(_counter)}"
                try:
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
                except FileNotFoundError:  # the fan-out directory is new (or `git prune` removed it)
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(fan)
                    if self.fsync and not dirs:
                        dirs.append(os.open(self._objects, os.O_RDONLY | os.O_DIRECTORY))
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
                written.append((fd, tmp, final))
                _write_all(fd, _deflate(raw))
            if self.fsync:
                fsync_all([fd for fd, _, _ in written] + dirs)
            while written:
                fd, tmp, final = written.pop(0)
                os.close(fd)
                os.replace(tmp, final)
        except BaseException:
            for fd, tmp, _ in written:
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            raise
        finally:
            for fd in dirs:
                os.close(fd)

    def _read_object(self, oid: bytes, kind: str) -> bytes:
        try:
            with open(self._object_path(oid), "rb") as f:
                raw = zlib.decompress(f.read())
            header, _, body = raw.partition(b"\0")
            if header.split(b" ")[0] == kind.encode():
                return body
        except FileNotFoundError:
            pass  # packed (after a `git gc`): ask git
        return self._run("cat-file", kind, oid.hex())

    # -- refs ----------------------------------------------------------------------------------------

    def _ref_name(self) -> str:
        head = (self.git_dir / "HEAD").read_text(encoding="utf-8").strip()
        return head[5:].strip() if head.startswith("ref:") else "HEAD"  # detached: move HEAD itself

    def _read_ref(self, ref: str) -> bytes | None:
        try:
            with open(self.git_dir / ref, "rb") as f:
                value = f.read().strip().decode("ascii")
        except FileNotFoundError:
            value = ""
            try:
                for line in (self.git_dir / "packed-refs").read_text(encoding="ascii").splitlines():
                    if line.endswith(" " + ref):
                        value = line.split(" ")[0]
            except FileNotFoundError:
                pass
        return bytes.fromhex(value) if value else None

    def _lock(self, path: Path) -> int:
        deadline = time.monotonic() + _LOCK_WAIT_S
        while True:
            try:
                return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                if time.monotonic() > deadline:
                    raise GitError(f"{path} is held by another git process") from None
                time.sleep(0.002)

    def _move_ref(self, ref: str, old: bytes | None, new: bytes) -> bool:
        """Move `ref` from `old` to `new` through its lock file; False, and nothing moved, if another
        process moved it meanwhile.

        The new value is written and fsynced under a name of this process's own (`<ref>.<pid>-<n>.lock`:
        git skips loose refs named `*.lock`), then hard-linked as `<ref>.lock`, which takes git's lock
        exactly as `O_EXCL` would, already holding its final content. The lock is held only between that
        link and the rename onto the ref, not across an fsync: a process killed during a commit leaves
        no lock behind that would stop every later commit (git never breaks a stale lock)."""
        lock_path = f"{self.git_dir}/{ref}.lock"
        mine = f"{self.git_dir}/{ref}.{os.getpid()}-{next(_counter)}.lock"
        if ref not in self._swept:
            self._sweep_values(ref)
            self._swept.add(ref)
        try:
            fd = os.open(mine, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileNotFoundError:  # an unborn branch's directory, or one `git pack-refs` removed
            os.makedirs(os.path.dirname(mine), exist_ok=True)
            fd = os.open(mine, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            try:
                _write_all(fd, new.hex().encode() + b"\n")
                if self.fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            faults.hit("git:link")  # the new value is durable under this process's name, not yet the lock
            self._take_lock(mine, lock_path)
            try:
                if self._read_ref(ref) != old:
                    os.unlink(lock_path)
                    return False
                os.replace(lock_path, f"{self.git_dir}/{ref}")
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(lock_path)
                raise
        finally:
            with contextlib.suppress(OSError):
                os.unlink(mine)
        return True

    def _sweep_values(self, ref: str) -> None:
        """Remove the new values (`<ref>.<pid>-<n>.lock`) that killed processes left before linking them."""
        directory, _, name = f"{self.git_dir}/{ref}".rpartition("/")
        with contextlib.suppress(OSError), os.scandir(directory) as entries:
            for entry in entries:
                match = _VALUE_NAME.fullmatch(entry.name)
                if match and match.group(1) == name and not pid_alive(int(match.group(2))):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)

    def _take_lock(self, mine: str, lock_path: str) -> None:
        deadline = time.monotonic() + _LOCK_WAIT_S
        while True:
            try:
                os.link(mine, lock_path)
                return
            except FileExistsError:
                if time.monotonic() > deadline:
                    raise GitError(f"{lock_path} is held by another git process") from None
                time.sleep(0.002)
            except OSError:
                break  # no hard links here: take the lock by creating it, and write it again
        fd = self._lock(Path(lock_path))
        try:
            with open(mine, "rb") as f:
                _write_all(fd, f.read())
            if self.fsync:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            os.unlink(lock_path)
            raise
        os.close(fd)

    # -- the commit ----------------------------------------------------------------------------------

    def _sync(self, head: bytes | None) -> None:
        """The branch is not where this object left it (first use, or another process committed): read
        the root tree again (subtrees are read when a commit needs them) and rebuild the index's entries."""
        self._head = head
        self._trees = {}
        self._index = None
        if head is not None:
            commit = self._read_object(head, "commit")
            root = bytes.fromhex(commit[5:45].decode())
            self._trees[""] = _Tree(_parse_tree(self._read_object(root, "tree")))

    def _forget(self) -> None:
        self._head = None  # whatever was cached may be half updated: read it again next time
        self._trees = {}
        self._index = None

    def _tree(self, directory: str) -> _Tree:
        tree = self._trees.get(directory)
        if tree is None and not directory:
            tree = self._trees[""] = _Tree({})  # an unborn branch: the first commit starts from nothing
        if tree is None:
            parent, _, name = directory.rpartition("/")
            found = self._tree(parent).get(name)
            tree = _Tree(
                {}
                if found is None or found[0] != _TREE_MODE
                else _parse_tree(self._read_object(found[1], "tree"))
            )
            self._trees[directory] = tree
        return tree

    def _load_index(self) -> dict[str, bytes]:
        if self._index is None:
            index: dict[str, bytes] = {}
            if self._head is not None:
                listing = self._run("ls-tree", "-r", "-z", "--full-tree", self._head.hex())
                for item in listing.split(b"\0"):
                    if item:
                        meta, _, path = item.partition(b"\t")
                        index[path.decode()] = _index_entry(
                            path.decode(), bytes.fromhex(meta.split()[2].decode()), None
                        )
            self._index = index
            self._paths = sorted(index, key=str.encode)
        return self._index

    def commit(self, paths: Sequence[str], message: str) -> None:
        """Commit exactly `paths` (relative to the session root) as they are on disk now."""
        if not paths:
            return
        self.ensure()
        with self._mutex:
            self._commit(list(dict.fromkeys(paths)), message)

    def _commit(self, paths: list[str], message: str) -> None:
        ref = self._ref_name()
        for _attempt in range(_ATTEMPTS):
            head = self._read_ref(ref)
            if head != self._head or (head is not None and "" not in self._trees):
                self._sync(head)
            try:
                faults.hit("git:add")
                batch: dict[bytes, bytes] = {}
                staged: list[tuple[str, bytes, os.stat_result]] = []
                for relpath in paths:
                    with open(self.root / relpath, "rb") as f:
                        data = f.read()
                        st = os.fstat(f.fileno())
                    staged.append((relpath, self._stage(batch, b"blob", data), st))
                tree_oid = self._write_trees(batch, [(relpath, oid) for relpath, oid, _ in staged])
                now = int(time.time())
                body = b"tree %s\n" % tree_oid.hex().encode()
                if head is not None:
                    body += b"parent %s\n" % head.hex().encode()
                body += b"author %s %d +0000\ncommitter %s %d +0000\n\n%s\n" % (
                    _SIGNATURE,
                    now,
                    _SIGNATURE,
                    now,
                    message.encode(),
                )
                oid = self._stage(batch, b"commit", body)
                faults.hit("git:commit")
                self._put(batch)
                faults.hit("git:ref")  # every object is in place; the branch has not moved yet
                moved = self._move_ref(ref, head, oid)
            except BaseException:
                self._forget()
                raise
            if moved:
                self._head = oid
                self.new_objects = [self._object_path(new) for new in batch]
                self._write_index(staged)
                return
            self._forget()  # another process committed between our read of the branch and its lock
        raise GitError(f"{self.git_dir / ref} kept moving under another git process")

    def _write_trees(self, batch: dict[bytes, bytes], blobs: list[tuple[str, bytes]]) -> bytes:
        """Put the blobs into the cached trees and stage every tree on their paths, deepest first."""
        dirty: set[str] = set()
        for relpath, oid in blobs:
            directory, _, name = relpath.rpartition("/")
            self._tree(directory).set(name, _BLOB_MODE, oid)
            while True:
                dirty.add(directory)
                if not directory:
                    break
                directory = directory.rpartition("/")[0]
        for directory in sorted(dirty, key=lambda d: -d.count("/") if d else 1):
            oid = self._stage(batch, b"tree", self._tree(directory).body())
            if directory:
                parent, _, name = directory.rpartition("/")
                self._tree(parent).set(name, _TREE_MODE, oid)
            else:
                return oid
        raise AssertionError("the root tree is always written")

    def _write_index(self, staged: list[tuple[str, bytes, os.stat_result]]) -> None:
        index = self._load_index()
        for relpath, oid, st in staged:
            if relpath not in index:
                bisect.insort(self._paths, relpath, key=str.encode)
            index[relpath] = _index_entry(relpath, oid, st)
        self._index_owed += 1
        if self._index_owed < len(index) // _INDEX_EVERY:
            return
        lock_path = self.git_dir / "index.lock"
        try:
            fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return  # a git command is using the index: the next commit rewrites it
        try:
            content = (
                b"DIRC" + struct.pack(">II", 2, len(self._paths)) + b"".join(index[p] for p in self._paths)
            )
            content += hashlib.sha1(content, usedforsecurity=False).digest()
            _write_all(fd, content)
        except BaseException:
            os.close(fd)
            lock_path.unlink(missing_ok=True)
            raise
        os.close(fd)
        os.replace(lock_path, self.git_dir / "index")
        self._index_owed = 0


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    result = subprocess.run(
        ["git", "-C", str(root), *_IDENTITY, *args], input=stdin, capture_output=True, env=_env(), check=False
    )
    if result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip()
        raise GitError(f"git {args[0]} failed in {root}: {message}")
    return result.stdout


def _replaced(stream: bytes, replace: dict[bytes, bytes]) -> tuple[bytes, int]:
    """`git fast-export --no-data` output with every `M <mode> <oid> <path>` of a path in `replace` given
    that path's new bytes inline; returns the new stream and how many entries changed. `data <n>` payloads
    (commit messages) are copied as they are, never read as commands."""
    out: list[bytes] = []
    pos, changed = 0, 0
    while pos < len(stream):
        end = stream.find(b"\n", pos)
        end = len(stream) if end < 0 else end
        line = stream[pos:end]
        pos = end + 1
        if line.startswith(b"data "):
            size = int(line[5:])
            out += [line, b"\n", stream[pos : pos + size]]
            pos += size
            continue
        if line.startswith(b"M "):
            parts = line.split(b" ", 3)
            if len(parts) == 4 and parts[3] in replace:
                data = replace[parts[3]]
                out += [b"M %s inline %s\ndata %d\n" % (parts[1], parts[3], len(data)), data, b"\n"]
                changed += 1
                continue
        out += [line, b"\n"]
    return b"".join(out), changed


def rewrite_history(root: Path, replace: dict[str, bytes]) -> int:
    """Rewrite every commit of the session repository at `root` so that each path of `replace` holds its
    new bytes in every commit that has it (`dagmem forget`: the tombstone of a forgotten node), then drop
    everything unreachable (reflogs expired, `git repack -a -d`, `git prune --expire=now`): no object of
    the old history is left.
    The caller holds the session's lock. Idempotent (a crash part way: run it again). O(history): one
    `fast-export`, one `fast-import`, one repack of the repository. Returns the entries rewritten."""
    if not (root / ".git").is_dir() or not replace:
        return 0
    faults.hit("git:rewrite")
    if not _git(root, "for-each-ref", "--format=%(refname)"):
        return 0  # an unborn branch: no history to rewrite
    packed = any((root / ".git/objects/pack").glob("*.pack"))  # before fast-import writes its own pack
    stream = _git(root, "fast-export", "--all", "--no-data", "--signed-tags=strip", "--reencode=no")
    new, changed = _replaced(stream, {path.encode(): data for path, data in replace.items()})
    if changed:
        _git(root, "fast-import", "--force", "--quiet", stdin=new)
    faults.hit("git:prune")
    # The index names the old blobs too (git keeps what it names): it is read again from the new head.
    if _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip():
        _git(root, "read-tree", "HEAD")
    _git(root, "reflog", "expire", "--expire=now", "--all")
    if packed:
        # Old packs may hold the old history: one pack of what is reachable replaces them all (no delta
        # search: `--window=0` keeps it O(objects); a session's objects are small).
        _git(root, "repack", "-a", "-d", "-q", "--window=0")
    # The session's own commits write loose objects: every one that nothing reaches now goes.
    _git(root, "prune", "--expire=now")
    return changed
