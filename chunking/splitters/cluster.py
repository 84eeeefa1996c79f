"""The ``cluster`` strategy: Chroma's cluster-semantic chunker.

Chroma's chunking study ("Evaluating Chunking Strategies for Retrieval", 2024) cuts a
document into small pieces, embeds each piece, and then chooses, by dynamic
programming, the cut positions that maximise the similarity of the pieces that end up
together, under a size bound:

1. The text is cut into pieces of at most ``piece_size`` (about 50 tokens) by the
   recursive splitter, which prefers paragraph, line, sentence and word boundaries;
   offsets are exact.
2. Every piece is embedded on its own (through the embedder's cache: pieces already
   embedded are not embedded again).
3. The cosine similarity of every pair of pieces is centred on the mean similarity of
   all pairs, ``M[a, b] = cos(v_a, v_b) - mean`` (the diagonal counts 0), so that
   joining pieces that are less alike than usual *costs* reward.
4. The reward of a chunk made of pieces ``a..b`` is the sum of ``M`` over every pair
   inside it (both orders, as in the study); :func:`best_segments` finds the cuts with
   the largest total reward among those whose every chunk fits ``size``.

Differences from the study's code: the size bound is checked on each chunk's real
size in the chosen unit (the study counts pieces: ``max_chunk_size // piece size``),
and the programme compares every allowed start of a chunk, negative totals included.
The only similarities computed are those of pieces that can share a chunk, so memory
stays linear in the document.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..engine.packing import RunSizes
from ..model import Piece
from ..params import Param, Strategy, size_param, unit_param
from ..units import Sizer
from .semantic.strategy import SEMANTIC

if TYPE_CHECKING:
    import numpy as np

#: ``column(lo, j)``: the centred similarities of pieces ``lo..j-1`` to piece ``j``.
Column = Callable[[int, int], "np.ndarray"]

CLUSTER_BOUNDARY = "cluster"


def best_segments(first: Sequence[int], column: Column) -> list[tuple[int, int]]:
    """The segmentation of pieces ``0..n-1`` (``n == len(first)``) with the largest total
    reward, as ``[a, b)`` piece ranges in order.

    ``first[j]`` is the first piece a chunk ending with piece ``j`` may start at (the
    size bound); it must never decrease. The reward of a segment is the sum of the
    centred similarities of all ordered pairs of distinct pieces in it (see the module
    docstring). Among equally good choices for a chunk's start, the longest chunk wins.

    The programme keeps, for each start ``a``, the reward of ``a..j`` as ``j`` grows:
    adding piece ``j`` adds twice its similarities to ``a..j-1``, a suffix sum of
    ``column``. Time is proportional to the number of (start, end) pairs that fit.
    """
    import numpy as np

    n = len(first)
    best = np.zeros(n + 1)
    start_of = [0] * (n + 1)
    reward = np.zeros(n)  # reward[a]: the reward of segment a..j for the current j
    for j in range(n):
        lo = first[j]
        if not 0 <= lo <= j or (j and lo < first[j - 1]):
            raise ValueError(f"first[{j}] = {lo} must be in 0..{j} and never decrease")
        if lo < j:
            column_j = np.asarray(column(lo, j), dtype=np.float64)
            reward[lo:j] += 2.0 * np.cumsum(column_j[::-1])[::-1]
        reward[j] = 0.0
        totals = best[lo : j + 1] + reward[lo : j + 1]
        k = int(np.argmax(totals))  # the first maximum: the smallest start
        best[j + 1] = totals[k]
        start_of[j + 1] = lo + k
    segments = []
    b = n
    while b > 0:
        segments.append((start_of[b], b))
        b = start_of[b]
    return segments[::-1]


def earliest_starts(sizes: RunSizes, limit: int) -> list[int]:
    """For each piece ``j``, the first piece ``a`` such that pieces ``a..j`` fit
    ``limit`` (``j`` itself when even the pair does not fit), never decreasing."""
    first: list[int] = []
    a = 0
    for j in range(len(sizes)):
        while a < j and sizes.over(a, j, limit):
            a += 1
        first.append(a)
    return first


def _pieces(text: str, sizer: Sizer, piece_size: int) -> list[Piece]:
    """Small pieces of the whole text, measured (the recursive splitter)."""
    from ..engine.recursive import RecursiveSplitter
    from .semantic.analysis import structural_pieces

    return structural_pieces(RecursiveSplitter(text, sizer, piece_size), 0, len(text))


def cluster_pieces(
    text: str, sizer: Sizer, size: int, piece_size: int, model: str | None
) -> Iterator[Piece]:
    """The ``cluster`` strategy's chunks (see the module docstring).

    ``piece_size`` above ``size`` is lowered to ``size``. Metadata: ``pieces`` (the
    range ``[a, b)`` of pieces in the chunk), ``boundary`` (``"cluster"``, or ``"end"``
    for the last chunk) and the flags of an unsplittable piece.
    """
    import numpy as np

    from ..embedding.models import get_embedder
    from .semantic.analysis import mean_pairwise_similarity

    pieces = _pieces(text, sizer, min(piece_size, size))
    if len(pieces) < 2:
        yield from pieces
        return
    vectors = get_embedder(model).embed([text[p.start : p.end] for p in pieces])
    vectors = np.asarray(vectors, dtype=np.float64)
    mean = mean_pairwise_similarity(vectors)
    mean = 0.0 if math.isnan(mean) else mean

    def column(lo: int, j: int) -> np.ndarray:
        return vectors[lo:j] @ vectors[j] - mean

    sizes = RunSizes.of(text, [(p.start, p.end) for p in pieces], sizer)
    segments = best_segments(earliest_starts(sizes, size), column)
    for k, (a, b) in enumerate(segments):
        meta: dict[str, Any] = {
            "boundary": CLUSTER_BOUNDARY if k + 1 < len(segments) else "end",
            "pieces": [a, b],
        }
        if b - a == 1 and "flags" in pieces[a].metadata:
            meta["flags"] = list(pieces[a].metadata["flags"])
        size_ab = pieces[a].size if b - a == 1 else sizes.measure(a, b - 1)
        yield Piece(pieces[a].start, pieces[b - 1].end, meta, size_ab)


def _cluster(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    return cluster_pieces(text, sizer, p["size"], p["piece_size"], p["model"])


CLUSTER = Strategy(
    "cluster",
    label="Cluster semantic",
    description="Chroma's cluster-semantic chunker: cut the text into small pieces "
    "(about 50 tokens, at paragraph, sentence or word boundaries), embed each, and "
    "choose by dynamic programming the chunks whose pieces are most similar to each "
    "other (similarities centred on their mean, so joining unrelated pieces costs), "
    "every chunk within the size. Runs the embedding model on this machine.",
    params=(
        size_param(
            160,
            "Largest chunk, in the chosen unit (Chroma's study used 200-400 tokens; "
            "all-MiniLM-L6-v2 reads only the first 256 word pieces of a chunk, which "
            "200 tokens of German or code can exceed).",
        ),
        unit_param("tokens"),
        Param(
            "piece_size",
            int,
            50,
            "Largest piece, in the chosen unit: the text is cut into pieces this big "
            "(at paragraph, sentence or word boundaries) before they are grouped; "
            "lowered to the size when larger. Smaller pieces give finer cuts and more "
            "texts to embed.",
            minimum=1,
            maximum=100_000,
        ),
        SEMANTIC.param("model"),
    ),
    split=_cluster,
)
