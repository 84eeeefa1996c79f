"""Character-span arithmetic and the retrieval metrics of the chroma-eval report.

A *span set* is an ``(n, 2)`` integer array of half-open character ranges
``[start, end)``. Spans may overlap and come in any order; :func:`union` merges them.
Everything below is built from two measures:

- :func:`total_length`: the sum of the spans' lengths, overlaps counted twice;
- :func:`measure`: the number of characters covered by at least one span.

For two span sets A and B, ``|A ∩ B| = |A| + |B| - |A ∪ B|`` (:func:`overlap`), so the
intersection of two unions never needs a pairwise loop.

The metrics, for one question with gold reference spans R and retrieved chunk spans C
(chroma-eval README, "Metrics as the report defines them")::

    recall      = |C ∩ R| / |R|
    precision   = |C ∩ R| / total_length(C)      # overlapping chunks counted twice
    IoU         = |C ∩ R| / (total_length(C) + |R \\ C|)
    precision_Ω = |C* ∩ R| / |C* ∪ R|            # C*: every chunk touching a reference

``|R|`` counts gold characters once even if two references overlap; the report's code
sums reference lengths, which is the same thing when references do not overlap (they
never do in chroma-eval).

>>> gold = as_spans([(10, 20)])
>>> retrieval_scores(as_spans([(0, 15)]), gold)
Scores(recall=0.5, precision=0.3333333333333333, iou=0.25)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from ..engine.spans import strip_span

#: An ``(n, 2)`` int64 array of half-open ``[start, end)`` character ranges.
SpanArray = np.ndarray

_EMPTY = np.zeros((0, 2), dtype=np.int64)


def as_spans(pairs: Iterable[tuple[int, int]] | np.ndarray) -> SpanArray:
    """``pairs`` as an ``(n, 2)`` int64 array; raises ``ValueError`` on a reversed span."""
    array = np.asarray(pairs if isinstance(pairs, np.ndarray) else list(pairs), dtype=np.int64)
    if array.size == 0:
        return _EMPTY.copy()
    if array.ndim != 2 or array.shape[1] != 2:
        raise ValueError(f"spans must be (start, end) pairs; got an array of shape {array.shape}")
    if (array[:, 1] < array[:, 0]).any():
        bad = array[array[:, 1] < array[:, 0]][0]
        raise ValueError(f"span ({bad[0]}, {bad[1]}) ends before it starts")
    return array


def total_length(span_set: SpanArray) -> int:
    """Sum of the spans' lengths; characters in two spans count twice."""
    return int((span_set[:, 1] - span_set[:, 0]).sum()) if len(span_set) else 0


def union(span_set: SpanArray) -> SpanArray:
    """The same characters as disjoint, sorted, non-empty spans (touching spans merge).

    Sort by start; a span opens a new group when it starts after the furthest end seen
    so far; each group runs from its first start to its furthest end.
    """
    kept = span_set[span_set[:, 1] > span_set[:, 0]] if len(span_set) else span_set
    if len(kept) == 0:
        return _EMPTY.copy()
    kept = kept[np.argsort(kept[:, 0], kind="stable")]
    furthest_end = np.maximum.accumulate(kept[:, 1])
    opens_group = np.ones(len(kept), dtype=bool)
    opens_group[1:] = kept[1:, 0] > furthest_end[:-1]
    firsts = np.flatnonzero(opens_group)
    return np.column_stack([kept[firsts, 0], np.maximum.reduceat(kept[:, 1], firsts)])


def measure(span_set: SpanArray) -> int:
    """How many characters at least one span covers."""
    return total_length(union(span_set))


def overlap(a: SpanArray, b: SpanArray) -> int:
    """How many characters are covered by both span sets: ``|A| + |B| - |A ∪ B|``."""
    if len(a) == 0 or len(b) == 0:
        return 0
    return measure(a) + measure(b) - measure(np.concatenate([a, b]))


def intersecting(chunks: SpanArray, refs: SpanArray, *, touching: bool = False) -> np.ndarray:
    """Boolean mask: which ``chunks`` share at least one character with any of ``refs``.

    With ``touching=True`` a chunk that only shares an end point with a reference
    (``chunk.end == ref.start`` or ``chunk.start == ref.end``) counts too: that is what
    the report's code does (its range intersection returns an empty range for
    touching spans and treats it as a hit).
    """
    if len(chunks) == 0 or len(refs) == 0:
        return np.zeros(len(chunks), dtype=bool)
    lo = np.maximum(chunks[:, None, 0], refs[None, :, 0])
    hi = np.minimum(chunks[:, None, 1], refs[None, :, 1])
    hits = lo <= hi if touching else lo < hi
    return hits.any(axis=1)


def contained(refs: SpanArray, chunks: SpanArray) -> np.ndarray:
    """Boolean mask: which ``refs`` lie entirely inside at least one single chunk."""
    if len(refs) == 0:
        return np.zeros(0, dtype=bool)
    if len(chunks) == 0:
        return np.zeros(len(refs), dtype=bool)
    inside = (chunks[None, :, 0] <= refs[:, None, 0]) & (refs[:, None, 1] <= chunks[None, :, 1])
    return np.asarray(inside.any(axis=1))


class Scores(NamedTuple):
    """Retrieval scores of one question, each in [0, 1]."""

    recall: float
    precision: float
    iou: float


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def retrieval_scores(retrieved: SpanArray, refs: SpanArray, foreign_length: int = 0) -> Scores:
    """Recall, precision and IoU of the ``retrieved`` chunk spans against ``refs``.

    Precision divides by the retrieved chunks' *summed* lengths, so two retrieved
    chunks that overlap pay for the shared text twice. ``foreign_length`` is the length
    of chunks retrieved from other documents: it adds to the retrieved length but can
    never match gold text. A score with a zero denominator is 0, as in the report's code.
    """
    found = overlap(retrieved, refs)
    gold = measure(refs)
    retrieved_length = total_length(retrieved) + foreign_length
    missed = gold - found
    return Scores(
        recall=_ratio(found, gold),
        precision=_ratio(found, retrieved_length),
        iou=_ratio(found, retrieved_length + missed),
    )


def precision_omega(chunks: SpanArray, refs: SpanArray, *, touching: bool = False) -> float:
    """Precision with perfect recall: keep every chunk that intersects a reference.

    ``|kept ∩ refs| / |kept ∪ refs|``. It needs no retrieval: it is the best precision
    any retriever could reach with these chunks while finding every gold character.
    """
    kept = chunks[intersecting(chunks, refs, touching=touching)]
    found = overlap(kept, refs)
    return _ratio(found, measure(np.concatenate([kept, refs])))


def split_references(refs: SpanArray, chunks: SpanArray, text: str) -> np.ndarray:
    """Boolean mask: which references no single chunk holds whole.

    A reference's leading and trailing whitespace is ignored (chunkers usually trim
    it), so a gold sentence followed by a newline is not "split" by that newline.
    """
    trimmed = np.array([strip_span(text, int(s), int(e)) for s, e in refs], dtype=np.int64)
    return ~contained(trimmed.reshape(-1, 2), chunks)
