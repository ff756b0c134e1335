"""The BPE table a reader embeds a query with instead of the tokenizer: its ids are the tokenizer's own
for every vocabulary token, real words and odd characters; the writer leaves it once per workspace; a
fresh reader then loads no tokenizer and gets the same vectors and hits; a damaged or foreign table is
not used."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dagmem import FileSessionStore
from dagmem.bench import _kit as kit
from dagmem.memory.recall import RecallIndex, RecallQuery, search
from dagmem.memory.recall import _embed as embed_module
from dagmem.memory.recall._bpe import Table, table_path
from dagmem.memory.recall._bpe_cache import CACHE_ENV, shared_path
from dagmem.memory.writing import write_home

from .test_recall_writer import TRICKY


def _table() -> Table:
    model = embed_module._load()
    assert model.source is not None
    assert model.sha256 is not None
    table = Table.from_json(model.sha256, json.loads(model.source.read_bytes()), len(model.rows))
    assert table is not None
    return table


def _pieces(texts: list[str]) -> list[str]:
    boundary = embed_module._BOUNDARY
    return [p for t in texts for p in embed_module._PIECE.findall(boundary + t.replace(" ", boundary))]


def test_the_tables_ids_are_the_tokenizers_for_every_token_and_many_words() -> None:
    table = _table()
    bpe = embed_module._load().tokenizer.model
    rng = random.Random(9)
    odd = [
        "".join(chr(rng.choice([rng.randint(32, 0x2FF), rng.randint(0x4E00, 0x9FFF), rng.randint(0x1F300, 0x1FAFF)]))
                for _ in range(rng.randint(1, 14)))
        for _ in range(3_000)
    ]  # fmt: skip
    words = [
        f"I said {w} and {w.lower()}s, {w.upper()}!" for w in ("descaling", "Tomatoes", "Zürich", "naïveté")
    ]
    pieces = [*embed_module._load().tokenizer.get_vocab(), *_pieces([*TRICKY, *odd, *words])]
    wrong = [p for p in pieces if table.ids(p) != [t.id for t in bpe.tokenize(p)]]
    assert wrong == []
    assert len(pieces) > 35_000


def test_the_table_round_trips_and_refuses_damage_and_another_tokenizer() -> None:
    table = _table()
    data = table.to_bytes()
    again = Table.from_bytes(data, table.sha256)
    assert again is not None
    assert again.ids("\u2581descaling") == table.ids("\u2581descaling")
    damaged = bytearray(data)
    damaged[-5] ^= 0x01
    assert Table.from_bytes(bytes(damaged), table.sha256) is None
    assert Table.from_bytes(data, "0" * 64) is None  # another tokenizer file's name
    assert Table.from_bytes(data[: len(data) // 2], table.sha256) is None
    assert Table.from_bytes(b"", table.sha256) is None


def test_a_model_the_rule_does_not_cover_gets_no_table() -> None:
    config = json.loads(embed_module._load().source.read_bytes())  # type: ignore[union-attr]
    for key, value in (
        ("ignore_merges", True),
        ("byte_fallback", False),
        ("dropout", 0.1),
        ("type", "WordPiece"),
    ):
        changed = json.loads(json.dumps(config))
        changed["model"][key] = value
        assert Table.from_json("x" * 64, changed, 32_000) is None, key


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("bpe")
    store = FileSessionStore(home, fsync=False)
    for i in range(12):
        role = "user" if i % 2 == 0 else "assistant"
        store.append("s", role, f"We talked about the garden, bed {i}, and planting tomatoes in Zürich.")
    write_home(home, force=True)
    return home


_READER = """
import json, sys
from pathlib import Path
from dagmem.memory.recall import RecallIndex, RecallQuery, search, _embed
memory = Path(sys.argv[1])
hits = search(RecallIndex.open(memory), RecallQuery(sys.argv[2], k=3))
vector = _embed.embed([sys.argv[2]], memory)[0]
print(json.dumps({"hits": [h.block_id for h in hits], "vector": vector.tolist(),
                  "tokenizers": "tokenizers" in sys.modules, "table": _embed._model.table is not None}))
"""


def _fresh_reader(memory: Path, query: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _READER, str(memory), query],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_the_writer_leaves_the_table_and_a_fresh_reader_needs_no_tokenizer(home: Path) -> None:
    model = embed_module._load()
    assert model.sha256 is not None
    memory = home / "memory"
    assert shared_path(model.sha256).is_file()  # once per machine, in the cache ...
    assert not table_path(memory, model.sha256).exists()  # ... not in every home
    for query in ("what did we plant in the garden?", "Zürich 🙂 tomatoes, bed 7"):
        found = _fresh_reader(memory, query)
        assert found["table"] is True
        assert found["tokenizers"] is False
        assert found["hits"] == [
            h.block_id for h in search(RecallIndex.open(memory), RecallQuery(query, k=3))
        ]
        assert np.array_equal(np.array(found["vector"], dtype=np.float32), embed_module.embed([query])[0])
    # A text naming a special token takes the tokenizer's own path: loaded then, the same vector.
    special = _fresh_reader(memory, "the <s> garden")
    assert special["tokenizers"] is True
    assert np.array_equal(
        np.array(special["vector"], dtype=np.float32), embed_module.embed(["the <s> garden"])[0]
    )


def test_a_damaged_table_is_not_used(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = embed_module._load()
    assert model.sha256 is not None
    memory = home / "memory"
    original = shared_path(model.sha256).read_bytes()
    # A cache of this test's own: a writer elsewhere (a hook's detached worker) would mend the shared one.
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    path = shared_path(model.sha256)
    path.parent.mkdir()
    path.write_bytes(original[:-3] + bytes(3))
    found = _fresh_reader(memory, "what did we plant in the garden?")
    assert found["table"] is False
    assert found["tokenizers"] is True
    assert found["hits"] == [
        h.block_id
        for h in search(RecallIndex.open(memory), RecallQuery("what did we plant in the garden?", k=3))
    ]


def test_made_up_words_tokenize_as_the_tokenizer_does() -> None:
    table = _table()
    bpe = embed_module._load().tokenizer.model
    rng = random.Random(10)
    words = kit.topic_words(5_000, rng)
    texts = [kit.topic_text(rng, rng.choice(words), 2, numbers=True) for _ in range(500)]
    pieces = _pieces([" ".join(words), *texts])
    assert [p for p in pieces if table.ids(p) != [t.id for t in bpe.tokenize(p)]] == []
