"""Semantic chunking: cut where the meaning of consecutive sentences changes.

1. The text is cut into sentences with exact offsets
   (:func:`chunking.splitters.sentences.sentences`, the segmenter of sentence packing,
   which keeps "1." or "IV." with the heading it numbers).
2. Each sentence is embedded together with ``buffer_size`` neighbours on each side.
3. The distance series ``d[i] = 1 - cos(e[i], e[i + 1])`` between consecutive windows
   is computed once (:func:`analyze`).
4. A breakpoint method turns the series into a cutoff; a boundary is placed after
   sentence ``i`` where ``d[i]`` (for ``gradient``: ``np.gradient(d)[i]``) is above it.
5. Chunks over ``max_size`` are cut again at their weakest internal similarity, a
   single sentence over it structurally; chunks under ``min_size`` are merged into
   their more similar neighbour.

Steps 4 and 5 are :meth:`SemanticAnalysis.chunk`: pure numpy and packing, so changing
the method or threshold never embeds again. Every size there is the size of a run of
sentences, asked of the packing engine's :class:`~chunking.engine.packing.RunSizes`
(made once per unit: exact from offsets for characters and words, measured and cached
for tokens); a sentence over the limit is cut by the recursive splitter.

>>> from chunking.splitters.semantic.analysis import analyze
>>> analysis = analyze("Cats purr. Cats nap. Stocks fell. Markets slid.", embedder="hash")
>>> result = analysis.chunk(method="count", threshold=2, unit="chars")
>>> len(result.chunks)
2
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from ...embedding.models import DEFAULT_BATCH_SIZE, Embedder, Progress, embed_chunks, get_embedder
from ...engine.packing import RunSizes
from ...engine.recursive import RecursiveSplitter, recursive_pieces
from ...engine.spans import document_sentences, sentence_spans
from ...model import Chunk, Piece, build_chunks
from ...units import Sizer, get_sizer
from .methods import (
    AUTO_MIN_SIZE,
    DEFAULT_MAX_SIZE,
    DEFAULT_UNIT,
    FORMULA_METHODS,
    AutoChoice,
    check_threshold,
    choose_method,
    cutoff,
    gradient,
    method_default,
)

#: The automatic minimum as a share of the maximum: the share under which the report
#: calls a chunk tiny (:data:`chunking.report.TINY_RATIO`).
MIN_SIZE_RATIO = 0.1

#: The seed's target band for the mean pairwise similarity of chunk embeddings.
COHESION_BAND = (0.3, 0.7)

SIMILARITY = "similarity"
MAX_SIZE_SPLIT = "max-size split"
STRUCTURAL = "structural"
END = "end"


def resolve_min_size(min_size: int, max_size: int) -> int:
    """The minimum chunk size to apply: ``min_size`` itself, or for
    :data:`AUTO_MIN_SIZE` a tenth of ``max_size`` rounded up (26 word pieces for the
    default 254), below ``max_size``. Without a minimum the method's cuts leave chunks of one
    short sentence or a heading alone (2-4 tokens), too small to retrieve on."""
    if min_size != AUTO_MIN_SIZE:
        return min_size
    return min(math.ceil(max_size * MIN_SIZE_RATIO), max_size - 1)


# --- cutting again at the weakest similarity ----------------------------------------


class _RangeArgmax:
    """The position of the largest distance in any range, in constant time (a sparse
    table), so that cutting oversized segments again and again stays cheap."""

    def __init__(self, distances: np.ndarray) -> None:
        self.values: list[float] = distances.tolist()
        levels = [np.arange(len(distances))]
        width = 1
        while 2 * width <= len(distances):
            prev = levels[-1]
            left, right = prev[: len(prev) - width], prev[width:]
            take_left = distances[left] >= distances[right]
            levels.append(np.where(take_left, left, right))
            width *= 2
        self.levels: list[list[int]] = [level.tolist() for level in levels]

    def __call__(self, lo: int, hi: int) -> int:
        """The first index of the largest value in ``[lo, hi)`` (``hi > lo``)."""
        k = (hi - lo).bit_length() - 1
        level = self.levels[k]
        i, j = level[lo], level[hi - (1 << k)]
        values = self.values
        return i if values[i] > values[j] or (values[i] == values[j] and i < j) else j


# --- results --------------------------------------------------------------------------

Breakpoint = tuple[int, float, str]


@dataclass(frozen=True, eq=False)
class SemanticResult:
    """Chunks plus everything a plot of the breakpoints needs.

    ``breakpoints`` holds ``(i, distance, reason)`` for every boundary between chunks:
    after sentence ``i``, with reason ``"similarity"`` (the method's cut) or
    ``"max-size split"``; ``"structural"`` boundaries fall inside sentence ``i`` and have
    a NaN distance. ``merged`` holds, in the same form, the boundaries removed to merge
    chunks under ``min_size`` (with the reason each had).

    ``scores`` is the series the cutoff ``threshold`` applies to: the distances, or their
    gradient for ``gradient``; ``parameter`` is the method's threshold parameter (95 for
    the 95th percentile). ``thresholds`` is the cutoff every formula method would put on
    the same series with its default threshold. ``method`` is the method applied (the
    one chosen when ``auto`` was asked for, with ``auto_reason`` saying why).
    """

    chunks: tuple[Chunk, ...]
    sentences: tuple[tuple[int, int], ...]
    distances: np.ndarray
    scores: np.ndarray
    method: str
    parameter: float
    threshold: float
    thresholds: Mapping[str, float]
    breakpoints: tuple[Breakpoint, ...]
    merged: tuple[Breakpoint, ...] = ()
    auto_reason: str | None = None
    unit: str = DEFAULT_UNIT
    max_size: int = DEFAULT_MAX_SIZE
    min_size: int = 0

    @property
    def similarities(self) -> np.ndarray:
        return 1.0 - self.distances


#: Sentences ``[a, b)``, why the segment ends there, and how many segments it absorbed.
_Segment = tuple[int, int, str, int]


# --- the analysis ----------------------------------------------------------------------


@dataclass(eq=False)
class SemanticAnalysis:
    """A document's sentences, window embeddings and distance series, computed once.

    :meth:`chunk` re-chunks from these with any method, threshold and size bounds
    without embedding again.
    """

    text: str
    sentences: tuple[tuple[int, int], ...]
    embeddings: np.ndarray
    distances: np.ndarray
    buffer_size: int
    embedder: Embedder
    starts: np.ndarray = field(init=False, repr=False)
    ends: np.ndarray = field(init=False, repr=False)
    _sizes: dict[str, RunSizes] = field(default_factory=dict, init=False, repr=False)
    _thresholds: dict[str, float] | None = field(default=None, init=False, repr=False)
    _gradient: np.ndarray | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.distances = np.asarray(self.distances, dtype=np.float64)
        spans = np.asarray(self.sentences, dtype=np.int64).reshape(-1, 2)
        self.starts, self.ends = spans[:, 0].copy(), spans[:, 1].copy()
        self._argmax = _RangeArgmax(self.distances)
        self._structural: dict[tuple[str, int, int], list[Piece]] = {}

    def scores(self, method: str) -> np.ndarray:
        """The series a method's cutoff applies to."""
        if method != "gradient":
            return self.distances
        if self._gradient is None:
            self._gradient = gradient(self.distances)
        return self._gradient

    def thresholds(self) -> dict[str, float]:
        """The cutoff of every formula method with its default threshold."""
        if self._thresholds is None:
            n = len(self.sentences)
            self._thresholds = {
                m: cutoff(m, self.distances, method_default(m, n)) for m in FORMULA_METHODS
            }
        return dict(self._thresholds)

    def resolve(self, method: str, threshold: float | None) -> AutoChoice:
        """The concrete method, its threshold parameter, and the reason for auto."""
        if method == "auto":
            return choose_method(self.distances, len(self.sentences))
        value = method_default(method, len(self.sentences)) if threshold is None else threshold
        check_threshold(method, float(value))
        return AutoChoice(method, float(value), "")

    def chunk(
        self,
        method: str = "percentile",
        threshold: float | None = None,
        unit: str = DEFAULT_UNIT,
        max_size: int = DEFAULT_MAX_SIZE,
        min_size: int = 0,
    ) -> SemanticResult:
        """Cut the document with ``method``, then enforce the size bounds
        (``min_size`` :data:`AUTO_MIN_SIZE`: see :func:`resolve_min_size`)."""
        if max_size < 1:
            raise ValueError(f"max_size must be at least 1; got {max_size}")
        min_size = resolve_min_size(min_size, max_size)
        if not 0 <= min_size < max_size:
            raise ValueError(
                f"min_size ({min_size}) must be at least 0 and below max_size ({max_size})"
            )
        choice = self.resolve(method, threshold)
        scores = self.scores(choice.method)
        cut = cutoff(choice.method, self.distances, choice.threshold)
        sizer = get_sizer(unit)
        sizes = self._run_sizes(unit, sizer)
        segments = self._split_oversized(np.flatnonzero(scores > cut).tolist(), sizes, max_size)
        segments, removed = self._merge_undersized(segments, sizes, min_size, max_size)
        pieces = self._pieces(segments, sizes, unit, sizer, max_size)
        chunks = tuple(build_chunks(self.text, pieces, sizer))
        return SemanticResult(
            chunks=chunks,
            sentences=self.sentences,
            distances=self.distances,
            scores=scores,
            method=choice.method,
            parameter=choice.threshold,
            threshold=cut,
            thresholds=self.thresholds(),
            breakpoints=tuple(self._breakpoints(chunks)),
            merged=tuple((i, float(self.distances[i]), reason) for i, reason in removed),
            auto_reason=choice.reason or None,
            unit=unit,
            max_size=max_size,
            min_size=min_size,
        )

    def sentence_embeddings(self, **embed_options: Any) -> np.ndarray:
        """One vector per sentence on its own (the window vectors when buffer_size is 0)."""
        if self.buffer_size == 0:
            return self.embeddings
        texts = [self.text[s:e] for s, e in self.sentences]
        return self.embedder.embed(texts, **embed_options)

    # -- steps of chunk() -------------------------------------------------------------

    def _run_sizes(self, unit: str, sizer: Sizer) -> RunSizes:
        """The packing engine's sizes of sentence runs, made once per unit: sentences
        ``[a, b)`` are the run ``a..b-1``."""
        sizes = self._sizes.get(unit)
        if sizes is None:
            spans = list(zip(self.starts.tolist(), self.ends.tolist(), strict=True))
            sizes = self._sizes[unit] = RunSizes.of(self.text, spans, sizer)
        return sizes

    def _split_oversized(self, cuts: list[int], sizes: RunSizes, limit: int) -> list[_Segment]:
        """The method's segments (a boundary after each sentence in ``cuts``), each one over
        ``limit`` cut at its largest internal distance, again and again. A single
        sentence over the limit is left for the structural split."""
        out: list[_Segment] = []
        over, argmax = sizes.over, self._argmax
        bounds = [0, *(i + 1 for i in cuts), len(self.sentences)]
        reasons = [SIMILARITY] * (len(bounds) - 2) + [END]
        for (a, b), reason in zip(itertools.pairwise(bounds), reasons, strict=True):
            stack = [(a, b, reason, 0)]
            while stack:
                segment = stack.pop()
                a, b, reason, _ = segment
                if b - a < 2 or not over(a, b - 1, limit):
                    out.append(segment)
                    continue
                i = argmax(a, b - 1)
                stack.append((i + 1, b, reason, 0))
                stack.append((a, i + 1, MAX_SIZE_SPLIT, 0))
        return out

    def _merge_undersized(
        self, segments: list[_Segment], sizes: RunSizes, min_size: int, max_size: int
    ) -> tuple[list[_Segment], list[tuple[int, str]]]:
        """Merge each segment under ``min_size`` into its more similar neighbour (across
        the smaller distance) when the result fits ``max_size``; smallest first.

        Returns the segments and the boundaries removed: (sentence index, reason)."""
        if min_size <= 0 or len(segments) < 2:
            return segments, []
        n = len(segments)
        seg: list[list[Any]] = [list(s) for s in segments]
        size = [sizes.measure(a, b - 1) for a, b, _, _ in segments]
        heap = [(sz, k) for k, sz in enumerate(size) if sz < min_size]
        heapq.heapify(heap)
        prev, nxt = list(range(-1, n - 1)), list(range(1, n + 1))
        alive = [True] * n
        removed: list[tuple[int, str]] = []
        d = self._argmax.values
        while heap:
            sz, k = heapq.heappop(heap)
            if not alive[k] or sz != size[k]:
                continue
            options = []
            if prev[k] >= 0:
                options.append((d[seg[k][0] - 1], prev[k], k))
            if nxt[k] < n:
                options.append((d[seg[k][1] - 1], k, nxt[k]))
            for _, left, right in sorted(options):
                lo, hi = seg[left], seg[right]
                if sizes.over(lo[0], hi[1] - 1, max_size):
                    continue
                removed.append((lo[1] - 1, lo[2]))
                lo[1], lo[2], lo[3] = hi[1], hi[2], lo[3] + hi[3] + 1
                size[left] = sizes.measure(lo[0], lo[1] - 1)
                alive[right] = False
                nxt[left] = nxt[right]
                if nxt[right] < n:
                    prev[nxt[right]] = left
                if size[left] < min_size:
                    heapq.heappush(heap, (size[left], left))
                break
        merged = [(a, b, r, m) for (a, b, r, m), keep in zip(seg, alive, strict=True) if keep]
        return merged, sorted(removed)

    def _pieces(
        self, segments: list[_Segment], sizes: RunSizes, unit: str, sizer: Sizer, limit: int
    ) -> list[Piece]:
        starts, ends, d = sizes.starts, sizes.ends, self._argmax.values
        last = len(d)
        out: list[Piece] = []
        for a, b, reason, merged in segments:
            meta: dict[str, Any] = {
                "boundary": reason,
                "sentences": [a, b],
                "distance": d[b - 1] if b - 1 < last else None,
            }
            if merged:
                meta["merged"] = {"count": merged, "reason": "under min_size"}
            size = sizes.measure(a, b - 1)
            if size <= limit:
                out.append(Piece(starts[a], ends[b - 1], MappingProxyType(meta), size))
            else:  # one sentence over the limit
                out.extend(self._split_sentence(starts[a], ends[b - 1], unit, sizer, limit, meta))
        return out

    def _split_sentence(
        self, lo: int, hi: int, unit: str, sizer: Sizer, limit: int, meta: Mapping[str, Any]
    ) -> Iterator[Piece]:
        """Pieces of one sentence over the limit: boundary ``"structural"`` inside it,
        the sentence's own boundary at its end. Splits are remembered."""
        key = (unit, limit, lo)
        pieces = self._structural.get(key)
        if pieces is None:
            splitter = RecursiveSplitter(self.text, sizer, limit)
            pieces = self._structural[key] = structural_pieces(splitter, lo, hi)
        last = len(pieces) - 1
        for k, p in enumerate(pieces):
            own = {"boundary": STRUCTURAL, "distance": None} if k < last else {}
            yield Piece(p.start, p.end, {**meta, **p.metadata, **own}, p.size)

    def _breakpoints(self, chunks: Sequence[Chunk]) -> Iterator[Breakpoint]:
        d = self._argmax.values
        for c in chunks[:-1]:
            reason = c.metadata["boundary"]
            last = c.metadata["sentences"][1] - 1
            yield last, (math.nan if reason == STRUCTURAL else d[last]), reason


def structural_pieces(splitter: RecursiveSplitter, lo: int, hi: int) -> list[Piece]:
    """``text[lo:hi]`` cut by the recursive splitter, every piece measured and within
    the splitter's limit unless flagged ``"over limit: unsplittable"``."""
    text, sizer = splitter.text, splitter.sizer
    pieces: list[Piece] = []
    for p in recursive_pieces(text, sizer, splitter, lo, hi):
        flags = {"flags": list(p.metadata["flags"])} if "flags" in p.metadata else {}
        size = p.size if p.size is not None else sizer.size(text[p.start : p.end])
        pieces.append(Piece(p.start, p.end, flags, size))
    return pieces


# --- analysing a document ------------------------------------------------------------


def analysis_sentences(text: str) -> tuple[tuple[int, int], ...]:
    """The sentences whose windows the analysis embeds: the document's shared ones
    (:func:`~chunking.engine.spans.document_sentences`, segmented once per process), or
    the whole text as one when it has none."""
    return document_sentences(text) or ((0, len(text)),)


def window_texts(text: str, spans: Sequence[tuple[int, int]], buffer_size: int) -> list[str]:
    """Each sentence with ``buffer_size`` neighbours on each side, as cut from the source."""
    n = len(spans)
    return [
        text[spans[max(0, i - buffer_size)][0] : spans[min(n - 1, i + buffer_size)][1]]
        for i in range(n)
    ]


def consecutive_distances(embeddings: np.ndarray) -> np.ndarray:
    """``1 - cos(e[i], e[i + 1])`` for unit-length rows."""
    if len(embeddings) < 2:
        return np.zeros(0)
    sims = np.einsum("ij,ij->i", embeddings[:-1], embeddings[1:]).astype(np.float64)
    return 1.0 - np.clip(sims, -1.0, 1.0)


def analyze(
    text: str,
    *,
    embedder: Embedder | str | None = None,
    buffer_size: int = 1,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Progress | None = None,
    disk_cache: bool | None = None,
) -> SemanticAnalysis:
    """Segment ``text`` into sentences, embed their windows once and compute distances."""
    if buffer_size < 0:
        raise ValueError(f"buffer_size must be 0 or more; got {buffer_size}")
    if not isinstance(embedder, Embedder):
        embedder = get_embedder(embedder)
    spans = analysis_sentences(text)
    vectors = embedder.embed(
        window_texts(text, spans, buffer_size),
        batch_size=batch_size,
        progress=progress,
        disk_cache=disk_cache,
    )
    return SemanticAnalysis(
        text=text,
        sentences=spans,
        embeddings=vectors,
        distances=consecutive_distances(vectors),
        buffer_size=buffer_size,
        embedder=embedder,
    )


# --- cohesion ------------------------------------------------------------------------


def mean_pairwise_similarity(vectors: np.ndarray) -> float:
    """Mean cosine similarity over all pairs of distinct rows (NaN for fewer than 2).

    The seed's target band for chunk embeddings is :data:`COHESION_BAND` (0.3-0.7):
    lower means unrelated chunks, higher means chunks that repeat each other.
    """
    n = len(vectors)
    if n < 2:
        return math.nan
    v = np.asarray(vectors, dtype=np.float64)
    total = v.sum(axis=0)
    pair_sum = float(total @ total) - float(np.einsum("ij,ij->", v, v))
    return pair_sum / (n * (n - 1))


def cohesion(vectors: np.ndarray) -> float:
    """Mean cosine similarity of unit rows to their centroid (1.0 for one row)."""
    v = np.asarray(vectors, dtype=np.float64)
    centroid = v.mean(axis=0)
    norm = float(np.linalg.norm(centroid))
    if len(v) == 0 or norm == 0:
        return math.nan if len(v) == 0 else 0.0
    return float(np.mean(v @ (centroid / norm)))


def chunk_cohesion(
    chunks: Sequence[Any], embedder: Embedder | str | None = None, **embed_options: Any
) -> np.ndarray:
    """Each chunk's internal cohesion: the mean similarity of its sentences to their
    centroid. Works on any strategy's chunks (objects with ``.text``, or strings)."""
    if not isinstance(embedder, Embedder):
        embedder = get_embedder(embedder)
    texts = [c if isinstance(c, str) else c.embedding_text for c in chunks]
    groups = [[t[s:e] for s, e in sentence_spans(t)] or [t] for t in texts]
    vectors = embedder.embed([s for g in groups for s in g], **embed_options)
    out = np.empty(len(groups))
    at = 0
    for k, group in enumerate(groups):
        out[k] = cohesion(vectors[at : at + len(group)])
        at += len(group)
    return out


@dataclass(frozen=True, eq=False)
class CohesionReport:
    """The seed's two cohesion metrics for one set of chunks."""

    mean_pairwise: float
    per_chunk: np.ndarray
    band: tuple[float, float] = COHESION_BAND

    @property
    def in_band(self) -> bool:
        lo, hi = self.band
        return lo <= self.mean_pairwise <= hi

    def summary(self) -> str:
        lo, hi = self.band
        verdict = "inside" if self.in_band else "outside"
        return (
            f"mean pairwise chunk similarity {self.mean_pairwise:.2f} ({verdict} the target "
            f"band {lo}-{hi}); mean internal cohesion {float(np.nanmean(self.per_chunk)):.2f}"
        )


def cohesion_report(
    chunks: Sequence[Any], embedder: Embedder | str | None = None, **embed_options: Any
) -> CohesionReport:
    """Mean pairwise similarity of the chunks' embeddings and each chunk's cohesion."""
    if not isinstance(embedder, Embedder):
        embedder = get_embedder(embedder)
    vectors = embed_chunks(chunks, embedder, **embed_options).vectors
    return CohesionReport(
        mean_pairwise_similarity(vectors), chunk_cohesion(chunks, embedder, **embed_options)
    )
