"""Recall's k best are the k best: a block's score depends neither on k nor on the index's history (a
delta never compacted, a compacted snapshot, a rebuild from the files), and a smaller k's hits are the
first of a larger k's, with the same scores (seeded loops over a corpus with rewritten topics and
repeated texts, so there are dead rows and exact ties)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from dagmem import FileSessionStore, Hit
from dagmem.memory.recall import RecallIndex, RecallQuery, compact, reader_for, search
from dagmem.memory.shapes import shapes_for
from dagmem.memory.writing import write_home

WORDS = (
    "ferry harbour lantern tomato greenhouse bicycle chain kettle garden lighthouse keeper pier island "
    "seedling repair descaling boiler plumber dentist appointment passport museum tram station bakery "
    "violin lesson marathon training recipe curry spinach mushroom hiking trail glacier camera lens"
).split()
K_MAX = 25  # the k up to which the claim is exact (recall's WIDTH / 8, see its search)


def _turn(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 14))) + "."


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """A home written in several installs (topics rewritten: dead rows in the delta), with repeated
    turns (equal scores). Returns it and each session's node ids in order."""
    home = tmp_path_factory.mktemp("topk") / "home"
    rng = random.Random(31)
    store = FileSessionStore(home, fsync=False)
    nodes: dict[str, list[str]] = {}
    said: list[str] = []
    for _round in range(10):
        for session in ("s1", "s2", "s3"):
            for _ in range(30):
                text = rng.choice(said) if said and rng.random() < 0.15 else _turn(rng)
                said.append(text)
                node = store.append(session, rng.choice(("user", "assistant")), text)
                nodes.setdefault(session, []).append(node.id)
        write_home(home, force=True)
    index = RecallIndex.open(home / "memory")
    assert index.live > 16 * K_MAX  # more blocks than either candidate list holds
    assert index.snapshot.arrays.n == 0  # never compacted: everything is in the delta
    assert index.live < index.size  # rewritten topics left dead rows
    return home, nodes


def _queries(rng: random.Random, count: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))) for _ in range(count)]


def _key(hits: list[Hit]) -> list[tuple[object, ...]]:
    return [(h.topic, h.block_id, h.score, h.branch) for h in hits]


def test_a_smaller_k_gives_the_first_hits_of_a_larger_k_with_the_same_scores(
    corpus: tuple[Path, dict[str, list[str]]],
) -> None:
    home, nodes = corpus
    index = RecallIndex.open(home / "memory")
    rng = random.Random(7)
    tip = nodes["s2"][len(nodes["s2"]) // 2 - 1]
    shapes = shapes_for(home)
    for query in _queries(rng, 40):
        for session in (None, "s2"):
            ks = sorted(rng.sample(range(1, K_MAX + 1), 4))
            answers = {
                k: _key(
                    search(
                        index,
                        RecallQuery(query, k=k),
                        reader=reader_for(shapes, session, tip if session else None),
                    )
                )
                for k in ks
            }
            largest = answers[ks[-1]]
            assert len(largest) == ks[-1]
            for k in ks[:-1]:
                assert answers[k] == largest[:k], (query, session, k, ks[-1])


def test_the_same_hits_with_and_without_the_cache(
    corpus: tuple[Path, dict[str, list[str]]], tmp_path: Path
) -> None:
    home, _nodes = corpus
    delta_only = RecallIndex.open(home / "memory")
    copy = tmp_path / "home"
    shutil.copytree(home, copy)
    compact(copy / "memory", fsync=False)
    compacted = RecallIndex.open(copy / "memory")
    assert compacted.snapshot.arrays.n == compacted.live  # all of it in the snapshot now
    shutil.rmtree(copy / "memory" / ".dagmem" / "recall")
    rebuilt = RecallIndex.open(copy / "memory")  # no cache at all: from the files
    assert rebuilt.snapshot.path is None
    rng = random.Random(11)
    for query in _queries(rng, 40):
        for k in (1, 5, K_MAX):
            expected = search(rebuilt, RecallQuery(query, k=k))
            assert search(delta_only, RecallQuery(query, k=k)) == expected, (query, k)
            assert search(compacted, RecallQuery(query, k=k)) == expected, (query, k)
