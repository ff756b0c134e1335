"""The BPE table is kept once per machine (the user's cache: `$DAGMEM_CACHE_DIR`, else
`$XDG_CACHE_HOME/dagmem`, else `~/.cache/dagmem`), not once per home: two homes written leave one copy,
none in either home, and a home's older copy goes once the shared one is good. A damaged or missing shared
copy is written again by the next write; one that cannot be written falls back to the home's own copy;
and no trouble of the cache ever fails a write."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from dagmem import FileSessionStore
from dagmem.memory.recall import RecallIndex, RecallQuery, _bpe_cache, search
from dagmem.memory.recall import _embed as embed_module
from dagmem.memory.recall._bpe import Table, table_path
from dagmem.memory.recall._bpe_cache import CACHE_ENV, cache_dir, shared_path
from dagmem.memory.writing import write_home


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(directory))
    monkeypatch.setattr(_bpe_cache, "_good", {})  # what this process checked before is another cache's
    return directory


def _sha() -> str:
    model = embed_module._load()
    assert model.sha256 is not None
    return model.sha256


def _write(home: Path, text: str) -> None:
    store = FileSessionStore(home, fsync=False)
    store.append("s", "user", text)
    results = write_home(home, force=True)
    assert [r.outcome for r in results] == ["written"], [r.as_json() for r in results]


def _own_tables(home: Path) -> list[Path]:
    return sorted((home / "memory" / ".dagmem").glob("bpe-*.bin"))


def test_the_cache_directory_follows_the_environment() -> None:
    assert cache_dir({CACHE_ENV: "/x/y"}) == Path("/x/y")
    assert cache_dir({"XDG_CACHE_HOME": "/c", "HOME": "/h"}) == Path("/c/dagmem")
    assert cache_dir({"HOME": "/h"}) == Path("/h/.cache/dagmem")


def test_two_homes_share_one_table_and_an_older_homes_copy_goes(tmp_path: Path, cache: Path) -> None:
    sha = _sha()
    older = tmp_path / "older"
    older_copy = table_path(older / "memory", sha)
    older_copy.parent.mkdir(parents=True)
    older_copy.write_bytes(b"a copy written by an earlier version")
    for n, home in enumerate((tmp_path / "a", tmp_path / "b", older)):
        _write(home, f"Home {n}: the plumber comes on Tuesday.")
    assert [p.name for p in cache.iterdir()] == [shared_path(sha).name]
    assert Table.read(shared_path(sha), sha) is not None
    for home in (tmp_path / "a", tmp_path / "b", older):
        assert _own_tables(home) == []


def test_a_damaged_or_missing_shared_table_is_written_again(tmp_path: Path, cache: Path) -> None:
    sha = _sha()
    _write(tmp_path / "a", "The recycling goes out on Monday.")
    path = shared_path(sha)
    good = path.read_bytes()
    path.write_bytes(good[:-4] + b"\0\0\0\0")  # damaged: its CRC no longer matches
    assert Table.read(path, sha) is None
    _write(tmp_path / "b", "The water meter is under the stairs.")
    assert path.read_bytes() == good
    path.unlink()
    _write(tmp_path / "c", "The spare fuse is in the kitchen drawer.")
    assert path.read_bytes() == good


def test_a_cache_that_cannot_be_written_falls_back_to_the_homes_own_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv(CACHE_ENV, str(blocked / "cache"))  # under a file: never a directory
    monkeypatch.setattr(_bpe_cache, "_good", {})
    home = tmp_path / "home"
    _write(home, "The bike lock code is 0912.")
    (own,) = _own_tables(home)
    assert Table.read(own, _sha()) is not None
    # Once the cache can be written, the next write puts the table there and the home's copy goes.
    writable = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(writable))
    _write(home, "The bike is in the shed.")
    assert Table.read(shared_path(_sha()), _sha()) is not None
    assert _own_tables(home) == []


def test_no_trouble_of_the_cache_fails_a_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(env: object = None) -> Path:
        raise RuntimeError("the cache broke")

    monkeypatch.setattr(_bpe_cache, "cache_dir", broken)
    monkeypatch.setattr(_bpe_cache, "_good", {})
    caplog.set_level(logging.WARNING, logger="dagmem.recall")
    home = tmp_path / "home"
    _write(home, "The dog's vet is Dr Okafor.")  # written, whatever the cache did
    said = [r.getMessage() for r in caplog.records if "BPE table was not written" in r.getMessage()]
    assert len(said) == 1
    assert "the cache broke" in said[0]
    hits = search(RecallIndex.open(home / "memory"), RecallQuery("who is the vet", k=1))
    assert hits  # and the index the write updated is there for readers


def test_a_writer_loads_the_tokenizer_even_with_the_shared_table_there(tmp_path: Path, cache: Path) -> None:
    # The table's BPE is pure Python: right for a query's few pieces, minutes for a turn of 8 MiB of one
    # piece. A writer (it loads the model without a workspace) never takes it, wherever it lies.
    _write(tmp_path / "a", "The kettle descaler is under the sink.")
    assert shared_path(_sha()).is_file()
    code = (
        "from dagmem.memory.recall import _embed\n"
        "_embed.load_model()\n"
        "print(_embed._model.table is None, 'tokenizers' in __import__('sys').modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True"]
