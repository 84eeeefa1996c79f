"""Lexical retrieval (BM25) and reciprocal-rank fusion, for the ``bm25`` and ``hybrid``
retrievers.

BM25 is the ``bm25s`` library's, with its defaults: the Lucene variant, ``k1 = 1.5``,
``b = 0.75``, English stop words removed, lower-cased words of two or more characters,
no stemming. For a query word ``t`` and a chunk ``d`` of ``|d|`` words (after stop words)
among ``N`` chunks, ``n(t)`` of which contain ``t``::

    idf(t)      = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))
    score(t, d) = idf(t) · tf / (tf + k1 · (1 - b + b · |d| / avg|d|))

and a chunk's score is the sum over the query's words.

Reciprocal-rank fusion scores an item ``Σ 1 / (k + rank)`` over the rankings that hold
it (rank 1 is the best). ``k = 60`` is the constant of Cormack, Clarke and Büttcher
(SIGIR 2009), who found it robust across collections; it is also what Elasticsearch,
OpenSearch and most hybrid-search guides use. A larger ``k`` flattens the difference
between the top ranks, so no single ranking dominates; fusing ranks rather than scores
needs no calibration between cosine similarities and BM25 scores, which live on
unrelated scales.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Reciprocal-rank fusion constant (Cormack et al. 2009; see the module docstring).
RRF_K = 60


def words(texts: Sequence[str]) -> list[list[str]]:
    """The BM25 words of each text (bm25s's tokenizer: lower case, no stop words)."""
    import bm25s  # type: ignore[import-untyped,unused-ignore]

    tokens = bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)
    return [list(t) for t in tokens]


class BM25Index:
    """A BM25 index over a fixed list of texts."""

    def __init__(self, texts: Sequence[str]) -> None:
        import bm25s  # type: ignore[import-untyped,unused-ignore]

        self.size = len(texts)
        self._index = bm25s.BM25()
        corpus = words(texts)
        # bm25s cannot index a corpus without a single word; every score is 0 then
        self._empty = not any(corpus)
        if not self._empty:
            self._index.index(corpus, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """One score per indexed text (0 where no query word occurs)."""
        (asked,) = words([query])
        known = [w for w in asked if w in self._index.vocab_dict] if not self._empty else []
        if not known:
            return np.zeros(self.size, dtype=np.float64)
        return np.asarray(self._index.get_scores(known), dtype=np.float64)


def ranks(scores: np.ndarray) -> np.ndarray:
    """Rank of each item (1 = best); ties keep the items' order."""
    order = np.argsort(-scores, kind="stable")
    out = np.empty(len(scores), dtype=np.int64)
    out[order] = np.arange(1, len(scores) + 1)
    return out


def reciprocal_rank_fusion(*scores: np.ndarray, k: int = RRF_K) -> np.ndarray:
    """Fused score of each item: ``Σ 1 / (k + rank)`` over the given score arrays."""
    if k < 0:
        raise ValueError(f"the fusion constant k must not be negative; got {k}")
    fused = np.zeros(len(scores[0]) if scores else 0, dtype=np.float64)
    for item_scores in scores:
        fused += 1.0 / (k + ranks(item_scores))
    return fused
