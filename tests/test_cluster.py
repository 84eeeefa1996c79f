"""The cluster-semantic chunker: the dynamic programme, the size bound, the strategy."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

import chunking
from chunking import Config
from chunking.embedding.models import get_embedder
from chunking.engine.packing import RunSizes
from chunking.splitters.cluster import best_segments, earliest_starts
from chunking.units import get_sizer
from tests.conftest import SAMPLE_DOCS
from tests.invariants import check_invariants
from tests.test_semantic import TOPICS


def _column(matrix: np.ndarray):
    return lambda lo, j: matrix[lo:j, j]


def _reward(matrix: np.ndarray, segments: list[tuple[int, int]]) -> float:
    """The study's reward, written out: the sum of the matrix over each segment's block,
    without its diagonal."""
    total = 0.0
    for a, b in segments:
        block = matrix[a:b, a:b]
        total += float(block.sum() - np.trace(block))
    return total


def _every_segmentation(n: int):
    for cuts in itertools.product((False, True), repeat=n - 1):
        bounds = [0, *(k + 1 for k, cut in enumerate(cuts) if cut), n]
        yield list(itertools.pairwise(bounds))


def test_two_blocks_of_alike_pieces_become_two_chunks() -> None:
    alike, unlike = 0.5, -0.4
    matrix = np.full((6, 6), unlike)
    matrix[:3, :3] = matrix[3:, 3:] = alike
    np.fill_diagonal(matrix, 0)
    assert best_segments([0] * 6, _column(matrix)) == [(0, 3), (3, 6)]


def test_the_size_bound_can_force_a_worse_but_allowed_cut() -> None:
    matrix = np.full((4, 4), 0.5)
    np.fill_diagonal(matrix, 0)
    # At most two pieces per chunk: everything together is not allowed.
    assert best_segments([0, 0, 1, 2], _column(matrix)) == [(0, 2), (2, 4)]


def test_the_programme_finds_the_brute_force_optimum() -> None:
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 8)
        half = np.array([[rng.uniform(-1, 1) for _ in range(n)] for _ in range(n)])
        matrix = (half + half.T) / 2
        np.fill_diagonal(matrix, 0)
        first, a = [], 0
        for j in range(n):
            a = rng.randint(a, j)
            first.append(a)
        allowed = [s for s in _every_segmentation(n) if all(a >= first[b - 1] for a, b in s)]
        expected = max(_reward(matrix, s) for s in allowed)
        found = best_segments(first, _column(matrix))
        assert found in allowed
        assert _reward(matrix, found) == pytest.approx(expected)


def test_equal_rewards_prefer_the_longest_chunk() -> None:
    assert best_segments([0, 0, 0], _column(np.zeros((3, 3)))) == [(0, 3)]


def test_a_start_list_that_breaks_the_size_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="never decrease"):
        best_segments([0, 1, 0], _column(np.zeros((3, 3))))


def test_earliest_starts_follow_the_size_of_each_run() -> None:
    text = "aaaa bbbb cccc dddd"
    spans = [(0, 4), (5, 9), (10, 14), (15, 19)]
    sizes = RunSizes.of(text, spans, get_sizer("chars"))
    # Two pieces with the space between are 9 characters; three are 14.
    assert earliest_starts(sizes, 9) == [0, 0, 1, 2]
    assert earliest_starts(sizes, 14) == [0, 0, 0, 1]
    assert earliest_starts(sizes, 3) == [0, 1, 2, 3]


@pytest.mark.parametrize(("unit", "size", "piece_size"), [("tokens", 60, 15), ("chars", 300, 80)])
def test_every_chunk_fits_the_size_and_the_text_is_kept(
    unit: str, size: int, piece_size: int
) -> None:
    text = (SAMPLE_DOCS / "technical_guide.md").read_text(encoding="utf-8")
    config = Config.create("cluster", size=size, unit=unit, piece_size=piece_size, model="hash")
    chunks = chunking.run(text, config)
    check_invariants(text, chunks, config)
    assert all(c.size <= size for c in chunks)
    assert len(chunks) > 1
    assert [c.metadata["boundary"] for c in chunks[-1:]] == ["end"]
    pieces = [c.metadata["pieces"] for c in chunks]
    assert pieces[0][0] == 0 and all(p[1] == q[0] for p, q in itertools.pairwise(pieces))


def test_a_piece_size_over_the_size_is_lowered_to_it() -> None:
    text = "word " * 200
    chunks = chunking.chunk(text, "cluster", size=10, unit="words", piece_size=50, model="hash")
    assert all(c.size <= 10 for c in chunks)


def test_pieces_embedded_once_are_not_embedded_again() -> None:
    text = " ".join(s for topic in TOPICS for s in topic)
    embedder = get_embedder("hash")
    chunking.chunk(text, "cluster", size=80, piece_size=20, model="hash")
    before = embedder.encoded
    again = chunking.chunk(text, "cluster", size=120, piece_size=20, model="hash")
    assert embedder.encoded == before
    assert again


def test_strategy_is_registered_with_its_parameters() -> None:
    spec = chunking.get_strategy("cluster")
    assert spec.param_names == ("size", "unit", "piece_size", "model")
    assert spec.limit_param == "size"
    with pytest.raises(ValueError, match="piece_size"):
        Config.create("cluster", piece_size=0)


@pytest.mark.slow
def test_the_real_model_groups_sentences_by_topic() -> None:
    topics = TOPICS[:3]
    text = "\n".join(" ".join(topic) for topic in topics)
    chunks = chunking.chunk(text, "cluster", size=200, piece_size=25)
    switches = [text.index(topic[0]) for topic in topics[1:]]
    for c in chunks:
        assert not any(c.start < s < c.end for s in switches), (
            f"chunk {c.index} mixes two topics: {c.text!r}"
        )
    assert len(chunks) <= 6


@pytest.mark.slow
def test_the_real_model_on_a_sample_document() -> None:
    text = (SAMPLE_DOCS / "long_essay.txt").read_text(encoding="utf-8")
    config = Config.create("cluster", size=200, unit="tokens", model="")
    chunks = chunking.run(text, config)
    check_invariants(text, chunks, config)
    assert all(c.size <= 200 for c in chunks)
    # Grouping pieces of about 50 tokens makes chunks well above one piece on average.
    assert sum(c.size for c in chunks) / len(chunks) > 100
