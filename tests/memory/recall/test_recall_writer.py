"""The recall index's writer side made cheap without changing what it writes: the embedding's cached
word pieces give WordLlama's own vectors bit for bit, the cached analysis gives the same terms, and what
a writer process remembers between installs (the delta's size, the whole index) is the index a reader
builds from the files, even when another process wrote in between."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from dagmem import FileSessionStore
from dagmem.memory.recall import RecallIndex, analyse, recall_root
from dagmem.memory.recall import _update as update
from dagmem.memory.recall._embed import _load
from dagmem.memory.recall._text import _stemmer, terms
from dagmem.memory.writing import write_home

TRICKY = [
    "",
    " ",
    "   leading and  double   spaces and trailing  ",
    "8 May 2023 User: “I painted a sunrise.” Assistant: “Lovely!”",
    "tabs\tand\nnew lines\r\nand a form feed\x0c here",
    "Ünïcödé café naïve ﬁne Ｆｕｌｌ　ｗｉｄｔｈ ① ẞ İstanbul",
    "漢字かなカナ한국어 mixed with English words 中文查询",
    "emoji 🙂🎉 and the special tokens <s> </s> <unk> in text",
    "it's John’s dog's bowl, don't",
    "¨a ¨ b\u00a0c\u2009d\u202fe\u3000f",
    "a" * 300 + " " + "longword" * 40,
    "▁ boundary ▁▁ characters ▁x",
]


def test_the_embedding_is_wordllamas_own_bit_for_bit() -> None:
    model = _load()
    assert model.fast  # the piece cache is on for this model (else the comparison below proves nothing)
    texts = [*TRICKY, *(f"note {i}: the kettle number {i} needs descaling" for i in range(50))]
    for _round in range(2):  # cold, then from the cache
        assert np.array_equal(model.embed(texts), model.slow(texts))


def test_the_cached_analysis_gives_the_terms_of_the_whole_text() -> None:
    for _round in range(2):
        for text in TRICKY:
            assert analyse(text) == _stemmer().stemWords(terms(text)), text


def _arrays_equal(a: RecallIndex, b: RecallIndex) -> None:
    x, y = update.index_arrays(a), update.index_arrays(b)
    for name in vars(x):
        left, right = getattr(x, name), getattr(y, name)
        if isinstance(left, np.ndarray):
            assert np.array_equal(left, right), name
        else:
            assert bytes(left) == bytes(right) if isinstance(left, bytes) else left == right, name


def _write(home: Path, text: str, recall: update.RecallUpdater) -> None:
    FileSessionStore(home, fsync=False).append("s", "user", text)
    write_home(home, force=True, recall=recall)


_OTHER_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from dagmem import FileSessionStore
    from dagmem.memory.writing import write_home
    home = Path(sys.argv[1])
    FileSessionStore(home, fsync=False).append("s", "user", sys.argv[2])
    write_home(home, force=True)
    """
)


def test_what_the_writer_remembers_is_what_a_reader_builds_from_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(update, "COMPACT_MIN", 3_000)  # a compaction every few installs
    home = tmp_path / "home"
    memory = home / "memory"
    writer = update.RecallUpdater()  # this process's writer, kept across its passes
    for i in range(6):
        _write(home, f"fact {i}: the lighthouse keeper number {i} paints the door blue", writer)
        held = writer.held
        assert held is not None  # held from the first install on (its delta was empty)
        _arrays_equal(held, RecallIndex.open(memory))
    assert len(list(recall_root(memory).glob("snap-*"))) == 2  # it compacted (from the held index)

    # Another process installs meanwhile: this process notices (the seq, the delta's size) and repairs.
    subprocess.run(
        [sys.executable, "-c", _OTHER_WRITER, str(home), "the harbour boat leaves at nine"], check=True
    )
    _write(home, "fact 9: the lighthouse keeper also feeds the cat", writer)
    index = RecallIndex.open(memory)
    assert index.replay_record() is None  # the delta covers every txlog line: nothing is read from files
    texts = [entry.text for _row, entry in index.entries()]
    assert any("harbour boat" in text for text in texts)
    assert any("feeds the cat" in text for text in texts)
    for i in range(10, 14):  # and on, through a compaction: the index it holds again is the readers'
        _write(home, f"fact {i}: the lighthouse keeper number {i} oils the lamp", writer)
    held = writer.held
    assert held is not None
    _arrays_equal(held, RecallIndex.open(memory))


@pytest.mark.anyio
async def test_a_closed_runtime_lets_go_of_the_index_its_writer_held(tmp_path: Path) -> None:
    from dagmem import Runtime

    memory = tmp_path / "home" / "memory"
    async with Runtime.open(tmp_path / "home") as rt:
        await rt.append("s", "user", "the ferry to the island leaves at seven every morning")
        await rt.flush(force=True)
        recall = rt._ctx.recall  # the runtime's own updater, the hook of its writer's workspace
        assert rt._ctx.recall.held is not None  # the writer holds what it wrote
    assert recall.held is None
    assert recall.snapshot is None
    # What it let go of is read from the files again, unchanged.
    assert any("ferry" in entry.text for _row, entry in RecallIndex.open(memory).entries())
    # The block digests outlive a runtime (they belong to no workspace) until they are cleared.
    from dagmem.memory.recall import _entries, clear_caches

    assert _entries._digests
    clear_caches()
    assert not _entries._digests
