"""What a trial is scored on: an objective on the gold spans, per question, and a cost.

Objectives (higher is better), never the similarity of chunks to the query:
``recall``, ``precision``, ``iou``, ``precision_omega`` (as :func:`evaluate` scores them),
``mrr`` (1 / rank of the first returned unit of the question's document that shares a
character with a gold span, 0 when none does) and ``pass@k`` (the share of the
question's gold spans the top-k units cover by half, :mod:`chunking.evaluation.passk`).

Boundary objectives (:data:`BOUNDARY_OBJECTIVES`) need no question and no model: each
trial's chunk starts are scored against a gold segmentation drawn by hand
(:func:`chunking.evaluation.boundaries.boundary_scores`): ``boundary_f1``, boundary F1
within a tolerance, and ``boundary_b``, boundary similarity B. There is one score per
document with a gold segmentation, not one per question, so a search on them reports no
interval (see :func:`boundary_score`).

Costs (lower is better): ``tokens_sent``, the mean cl100k tokens of the top-k units
returned per question (what a language model reads); ``chunks``, how many chunks the
documents were cut into; ``embedded_tokens``, the cl100k tokens of every text embedded to
index them (0 for BM25, which embeds nothing); ``seconds``, the trial's wall time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..evaluation.boundaries import ToleranceUnit, boundary_scores
from ..evaluation.core import Evaluation, searched_texts
from ..evaluation.passk import FOUND_AT, pass_scores
from ..evaluation.spans import intersecting
from ..model import Chunk
from ..units import get_sizer

#: The objectives scored on questions with gold spans.
OBJECTIVES = ("recall", "precision", "iou", "precision_omega", "mrr", "pass@k")
#: The objectives scored against a gold segmentation, and the score each one takes.
BOUNDARY_OBJECTIVES = ("boundary_f1", "boundary_b")
BOUNDARY_KEYS = {"boundary_f1": "f1", "boundary_b": "b"}
#: Every objective a search can use.
ALL_OBJECTIVES = (*OBJECTIVES, *BOUNDARY_OBJECTIVES)
#: The costs a boundary objective can weigh (nothing is retrieved: no tokens are sent).
BOUNDARY_COSTS = ("chunks", "embedded_tokens", "seconds")
COSTS = ("tokens_sent", "chunks", "embedded_tokens", "seconds")
OBJECTIVE_LABELS = {
    "recall": "recall",
    "precision": "precision",
    "iou": "IoU",
    "precision_omega": "precision Ω",
    "mrr": "MRR",
    "pass@k": "pass@k",
    "boundary_f1": "boundary F1",
    "boundary_b": "boundary B",
}
COST_LABELS = {
    "tokens_sent": "tokens sent per question",
    "chunks": "chunks",
    "embedded_tokens": "tokens embedded",
    "seconds": "seconds",
}


def check_objective(objective: str) -> str:
    if objective not in ALL_OBJECTIVES:
        raise ValueError(
            f"unknown objective {objective!r}; choose one of: {', '.join(ALL_OBJECTIVES)}"
        )
    return objective


def is_boundary(objective: str) -> bool:
    """Whether the objective scores chunk starts against a gold segmentation."""
    return objective in BOUNDARY_OBJECTIVES


def check_cost(cost: str) -> str:
    if cost not in COSTS:
        raise ValueError(f"unknown cost {cost!r}; choose one of: {', '.join(COSTS)}")
    return cost


def needs_retrieval(objective: str) -> bool:
    """Whether the objective scores what was retrieved (all but precision_Ω and the
    boundary objectives)."""
    return objective != "precision_omega" and not is_boundary(objective)


def boundary_score(
    text: str,
    gold: Sequence[int],
    chunks: Sequence[Chunk],
    objective: str,
    tolerance: int = 0,
    tolerance_unit: ToleranceUnit = "chars",
) -> float:
    """``boundary_f1`` (within ``tolerance``) or ``boundary_b`` of the chunks' starts
    against the ``gold`` boundaries of ``text``; higher is better, 1 is perfect.

    One number per document: it compares two segmentations, it is not a mean over
    questions, so no bootstrap over questions applies to it."""
    if not is_boundary(objective):
        raise ValueError(f"{objective!r} is not a boundary objective")
    scores = boundary_scores(
        text, gold, list(chunks), tolerance=tolerance, tolerance_unit=tolerance_unit
    )
    return float(scores[BOUNDARY_KEYS[objective]])


def mrr_scores(evaluation: Evaluation) -> np.ndarray:
    """Per question, 1 / rank of the first returned unit of its own document that shares
    a character with one of its gold spans (0 when none of the top-k does)."""
    n = len(evaluation.questions)
    if evaluation.retrieved is None:
        return np.full(n, np.nan)
    out = np.zeros(n, dtype=np.float64)
    for row, (q, hit) in enumerate(zip(evaluation.questions, evaluation.retrieved, strict=True)):
        own = np.array([c == q.corpus_id for c in hit.corpus_ids], dtype=bool)
        if not len(hit.spans) or not len(q.spans):
            continue
        touches = intersecting(hit.spans, q.spans) & own
        first = np.flatnonzero(touches)
        if len(first):
            out[row] = 1.0 / (int(first[0]) + 1)
    return out


def objective_scores(
    evaluation: Evaluation, documents: Mapping[str, str], objective: str
) -> np.ndarray:
    """The objective per question (NaN when it needs retrieval and none was done)."""
    check_objective(objective)
    if objective == "mrr":
        return mrr_scores(evaluation)
    if objective == "pass@k":
        return pass_scores(evaluation, documents, evaluation.settings.top_k, FOUND_AT)
    return np.asarray(evaluation.scores[objective], dtype=np.float64)


class TokenCounter:
    """cl100k tokens of document slices, each slice counted once."""

    def __init__(self, documents: Mapping[str, str]) -> None:
        self.documents = documents
        self.sizer = get_sizer("tokens")
        self._seen: dict[tuple[str, int, int], int] = {}

    def span(self, corpus_id: str, start: int, end: int) -> int:
        key = (corpus_id, start, end)
        if key not in self._seen:
            self._seen[key] = self.sizer.size(self.documents[corpus_id][start:end])
        return self._seen[key]

    def text(self, text: str) -> int:
        return self.sizer.size(text)


def tokens_sent(evaluation: Evaluation, counter: TokenCounter) -> float:
    """Mean cl100k tokens of the units returned per question (0 without retrieval)."""
    if evaluation.retrieved is None or not evaluation.questions:
        return 0.0
    totals = [
        sum(
            counter.span(cid, int(s), int(e))
            for cid, (s, e) in zip(hit.corpus_ids, hit.spans, strict=True)
        )
        for hit in evaluation.retrieved
    ]
    return float(np.mean(totals))


def embedded_tokens(evaluation: Evaluation, counter: TokenCounter) -> int:
    """cl100k tokens of the texts embedded to index the chunks (their context too)."""
    technique = evaluation.technique
    if not technique.uses_vectors:
        return 0
    if technique.embedding == "late":  # the whole documents go through the model
        return sum(counter.text(counter.documents[i]) for i in evaluation.chunks)
    return sum(
        counter.text(t) for cs in evaluation.chunks.values() for t in searched_texts(cs, technique)
    )


def trial_costs(evaluation: Evaluation, counter: TokenCounter, seconds: float) -> dict[str, float]:
    """Every cost of one evaluated trial."""
    return {
        "tokens_sent": tokens_sent(evaluation, counter),
        "chunks": float(evaluation.n_chunks),
        "embedded_tokens": float(embedded_tokens(evaluation, counter)),
        "seconds": round(seconds, 3),
    }
