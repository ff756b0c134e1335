"""A fresh process answers a recall without paying for what the query does not need: the embedding rows
mapped from WordLlama's wheel (its vectors, bit for bit, without importing its package), and a snapshot
trusted by the stamps its writer left instead of a checksum of every file, which any change voids."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dagmem.bench import _kit as kit
from dagmem.bench._recall import _workspace
from dagmem.memory.recall import RecallIndex, RecallQuery, recall_root, search
from dagmem.memory.recall import _embed as embed_module
from dagmem.memory.recall import _snapshot as snapshot_module
from dagmem.memory.recall._index import _TermScan
from dagmem.memory.recall._snapshot import Damaged, Snapshot

from .test_recall_writer import TRICKY


def test_the_wheels_rows_give_wordllamas_own_vectors_bit_for_bit() -> None:
    import wordllama

    model = embed_module._load()
    assert isinstance(model.rows, np.memmap)  # the wheel's file, mapped: WordLlama's loader was not used
    assert model.rows.dtype == np.float16
    assert model.fast
    reference = wordllama.WordLlama.load(
        cache_dir=Path(wordllama.__file__).parent, disable_download=True, dim=embed_module.DIM
    )
    texts = [*TRICKY, *(f"note {i}: the kettle number {i} needs descaling" for i in range(50)), "x" * 5000]
    expected = np.asarray(reference.embed(texts), dtype=np.float32)
    # A text of more tokens than a mean gathers at once (`_MEAN_ROWS`) is summed block by block. Alone:
    # WordLlama pads a batch to its longest text.
    long = " ".join(f"kettle{i % 97} descaled" for i in range(2 * embed_module._MEAN_ROWS // 3))
    assert len(model.ids(long) or []) > 2 * embed_module._MEAN_ROWS
    assert np.array_equal(model.embed([long]), np.asarray(reference.embed([long]), dtype=np.float32))
    for _round in range(2):  # cold, then from the piece cache
        assert np.array_equal(model.embed(texts), expected)
    assert np.array_equal(model.slow(texts), expected)


def test_a_tokenizer_file_known_as_scanned_passes_the_scan() -> None:
    model = embed_module._load()
    package = embed_module._package()
    assert package is not None
    assert embed_module._sha256(package / embed_module._TOKENIZER) in embed_module._SCANNED
    boundary = embed_module._BOUNDARY
    assert not any(boundary in token.lstrip(boundary) for token in model.tokenizer.get_vocab())


def test_weights_of_another_layout_are_not_mapped(tmp_path: Path) -> None:
    def safetensors(header: object, body: bytes) -> Path:
        raw = json.dumps(header).encode()
        path = tmp_path / "w.safetensors"
        path.write_bytes(len(raw).to_bytes(8, "little") + raw + body)
        return path

    good = {"embedding.weight": {"dtype": "F16", "shape": [4, 256], "data_offsets": [0, 2048]}}
    rows = embed_module.map_weights(safetensors(good, bytes(2048)))
    assert rows is not None
    assert rows.shape == (4, 256)
    assert embed_module.map_weights(safetensors(good, bytes(2047))) is None  # short
    other = {"embedding.weight": {"dtype": "F32", "shape": [2, 256], "data_offsets": [0, 2048]}}
    assert embed_module.map_weights(safetensors(other, bytes(2048))) is None
    assert embed_module.map_weights(safetensors({"x": 1}, b"")) is None
    (tmp_path / "junk").write_bytes(b"\xff" * 16)
    assert embed_module.map_weights(tmp_path / "junk") is None


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    memory = tmp_path_factory.mktemp("cold") / "home" / "memory"
    rng = random.Random(3)
    _workspace(memory, 60, rng, kit.topic_words(40, rng))
    return memory


def _snapshot_dir(memory: Path) -> Path:
    return next(recall_root(memory).glob("snap-*"))


def test_a_snapshot_as_its_writer_left_it_opens_without_reading_its_files(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_checksum(fd: int, size: int) -> int:
        raise AssertionError("a file was checksummed")

    monkeypatch.setattr(snapshot_module, "file_crc", no_checksum)
    snapshot = Snapshot.load(_snapshot_dir(workspace))
    assert snapshot.arrays.n == 60


def test_a_copy_is_checksummed_and_opens(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    shutil.copytree(workspace, memory)  # new inodes (copytree keeps the times): each file is checksummed
    checked: list[int] = []
    crc = snapshot_module.file_crc

    def counted(fd: int, size: int) -> int:
        checked.append(size)
        return crc(fd, size)

    monkeypatch.setattr(snapshot_module, "file_crc", counted)
    assert Snapshot.load(_snapshot_dir(memory)).arrays.n == 60
    assert len(checked) == len(snapshot_module.FILES)


def test_a_file_changed_in_place_voids_its_stamp(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    rng = random.Random(4)
    _workspace(memory, 20, rng, kit.topic_words(10, rng))
    path = _snapshot_dir(memory)
    vec = path / "vec.npy"
    stamped = json.loads((path / "meta.json").read_text())["written"]["vec.npy"]
    assert stamped == [os.stat(vec).st_ino, os.stat(vec).st_mtime_ns]
    data = bytearray(vec.read_bytes())
    data[-1] ^= 0xFF
    with vec.open("r+b") as f:  # the same inode and size, other bytes: at once, as a test can
        f.write(data)
    assert os.stat(vec).st_ino == stamped[0]
    with pytest.raises(Damaged, match=r"vec\.npy"):
        Snapshot.load(path)


def test_a_fresh_process_searches_without_importing_wordllama(workspace: Path) -> None:
    code = (
        "import sys; from pathlib import Path\n"
        "from dagmem.memory.recall import RecallIndex, RecallQuery, search\n"
        "hits = search(RecallIndex.open(Path(sys.argv[1])), RecallQuery('what about the garden'))\n"
        "print(len(hits), sorted(m for m in ('wordllama', 'requests', 'safetensors') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(workspace)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    count, _space, loaded = done.stdout.strip().partition(" ")
    assert int(count) == len(search(RecallIndex.open(workspace), RecallQuery("what about the garden")))
    assert loaded == "[]"


def test_a_term_found_in_the_vocabularys_bytes_has_its_dictionary_id(workspace: Path) -> None:
    index = RecallIndex.open(workspace)
    terms = index.snapshot.arrays.terms
    assert "term_ids" not in index.__dict__  # not built by opening
    scan = _TermScan(index.snapshot.arrays.terms_text)
    assert [scan.find(term) for term in terms] == list(range(len(terms)))
    for missing in ("", "zzqqxx", "a\nb", terms[0] + "x", terms[0][:-1] or "q"):
        assert scan.find(missing) == index.term_ids.get(missing)
    fresh = RecallIndex.open(workspace)
    hits = [search(fresh, RecallQuery("what about the garden and the plan")) for _ in range(3)]
    assert "term_ids" not in fresh.__dict__  # a few queries: no dictionary of the vocabulary
    assert hits[0] == search(
        index, RecallQuery("what about the garden and the plan")
    )  # index's dictionary is built
    assert _TermScan(b"").find("a") is None


def test_an_index_swapped_for_a_newer_one_forgets_the_dictionaries_it_built(
    workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "memory"
    rng = random.Random(6)
    _workspace(other, 30, rng, kit.topic_words(15, rng))
    index, newer = RecallIndex.open(workspace), RecallIndex.open(other)
    assert index.term_ids != newer.term_ids  # built on first use
    index._swap(newer)
    assert index.term_ids == {term: i for i, term in enumerate(newer.snapshot.arrays.terms)}
    assert index.topic_ids == newer.topic_ids


def test_the_vocabulary_is_split_only_when_its_terms_are_listed(workspace: Path) -> None:
    index = RecallIndex.open(workspace)
    terms = index.snapshot.arrays.terms
    text = index.snapshot.arrays.terms_text.decode("utf-8")
    search(index, RecallQuery("what about the garden and the plan"))
    assert isinstance(terms, snapshot_module.Lines)
    assert "_items" not in vars(terms)  # opened and searched: counted, never split
    assert len(terms) == text.count("\n") == len(text.split("\n")) - 1
    assert list(terms) == text.split("\n")[:-1]
    assert terms[0] == text.split("\n")[0]
    assert terms[-1] == text.split("\n")[-2]
    assert terms == list(terms)
    assert terms != list(terms)[:-1]
    assert terms != tuple(terms)
    assert snapshot_module.Lines("") == []
    assert len(snapshot_module.Lines("")) == 0
    assert list(snapshot_module.Lines("a\nb")) == ["a"]
    assert len(snapshot_module.Lines("a\nb")) == 1


def test_a_vocabulary_that_is_not_utf8_is_refused_on_open_and_the_index_rebuilt(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    rng = random.Random(8)
    _workspace(memory, 20, rng, kit.topic_words(10, rng))
    path = _snapshot_dir(memory)
    terms = path / "terms.txt"
    data = bytearray(terms.read_bytes())
    data[0] = 0xFF  # not UTF-8, same size
    with terms.open("r+b") as f:
        f.write(data)
    with pytest.raises(Damaged):  # trusted without a checksum, the vocabulary is still decoded on open
        Snapshot.load(path, verify=False)
    index = RecallIndex.open(memory)  # the damaged cache is passed over: rebuilt from the files, no crash
    assert index.snapshot.path is None
    assert search(index, RecallQuery("what about the garden")) == []  # the bench workspace has no topic files


def test_a_hit_holds_the_fields_of_what_the_search_found(workspace: Path) -> None:
    from dataclasses import asdict

    from dagmem.memory.recall import Hit, find_hits
    from dagmem.memory.recall._hit import hit_of

    found = find_hits(RecallIndex.open(workspace), RecallQuery("what about the garden and the plan", k=5))
    assert found
    assert all(found_hit.evidence for found_hit in found)
    assert [hit_of(f) for f in found] == [Hit(**asdict(f)) for f in found]


def test_a_texts_term_set_is_its_analysis_kept() -> None:
    from dagmem.memory.recall import _text

    for text in [*TRICKY, "Painted paints, painting!"]:
        assert _text.term_set(text) == frozenset(_text.analyse(text))
        assert _text.term_set(text) is _text.term_set(text)  # kept
    assert len(_text._sets) <= _text._SETS_MAX


def test_text_without_cjk_has_the_terms_the_cjk_patterns_give_it() -> None:
    import string
    import unicodedata

    from dagmem.memory.text import _terms

    word, cjk_run = _terms._cjk_patterns()
    rng = random.Random(12)
    alphabet = string.printable + "'’“”—…éÉßİǅﬁ①Ⅻ²ΣΊ" + "庭の計画정원ᄀ㄰ｶ㈠"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(5_000)]
    texts += ["It's Bob’s plan, don't", "a'b'c 'q' x'", "__init__ snake_case CamelCase 42nd", chr(127) + "ab"]
    texts += ["".join(map(chr, range(128))), "".join(map(chr, range(0x1000, 0x3200))), *TRICKY]
    for text in texts:
        folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
        expected = [w[:-2] if w.endswith("'s") else w for w in word.findall(folded)]
        assert _terms.index_words(text) == (expected, cjk_run.findall(folded)), text


def test_analysing_text_without_cjk_compiles_no_cjk_pattern() -> None:
    code = (
        "from dagmem.memory.recall import _text\n"
        "from dagmem.memory.text import _terms\n"
        "_text.analyse('What did we say about the “garden” — and the plan? café ①')\n"
        "_text.terms('plain ASCII only')\n"
        "before = _terms._cjk_patterns.cache_info().currsize\n"
        "_text.analyse('庭の計画 café')\n"
        "print(before, _terms._cjk_patterns.cache_info().currsize)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0", "1"]


def test_npy_headers_as_numpy_writes_them_are_read_without_its_parser_and_mapped_not_copied(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_parser(fd: int) -> None:
        raise AssertionError("numpy's header parser was used")

    with monkeypatch.context() as patched:
        patched.setattr(snapshot_module, "_header", no_parser)
        arrays = Snapshot.load(_snapshot_dir(workspace)).arrays
    for array in (arrays.dl, arrays.topic, arrays.row_span, arrays.coarse, arrays.vec, arrays.post_doc):
        assert not array.flags.owndata  # a view of its file's map
        assert not array.flags.writeable
    assert type(arrays.post_doc) is np.ndarray  # no `np.memmap`, whose subclass works on every slice
    # Any other header is numpy's to judge: here version 2.0, which numpy reads.
    path = tmp_path / "v2.npy"
    values = np.arange(12, dtype=np.int64).reshape(4, 3)
    with path.open("wb") as f:
        np.lib.format.write_array(f, values, version=(2, 0))
    fd = os.open(path, os.O_RDONLY)
    try:
        assert snapshot_module._written_layout(fd, values.dtype) is None
        assert np.array_equal(snapshot_module.map_npy(fd, path.stat().st_size, values.dtype, 2, (3,)), values)
        with pytest.raises(Damaged):
            snapshot_module.map_npy(fd, path.stat().st_size, np.dtype(np.int32), 2, (3,))
    finally:
        os.close(fd)
