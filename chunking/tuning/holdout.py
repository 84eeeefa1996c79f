"""Held-out questions: a seeded split, stratified by document.

From each document's questions a share (rounded) is held out, chosen at random with the
seed; every document keeps at least one question for tuning. The search sees only the
tuning split; the finalists are scored on the held-out split afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..evaluation.questions import Question

#: The share held out unless told otherwise (0 switches holding out off).
DEFAULT_HOLDOUT = 0.3


def check_share(share: float) -> float:
    if not 0 <= share < 1:
        raise ValueError(f"--holdout is the share of questions held out, in [0, 1); got {share:g}")
    return float(share)


def split_questions(
    questions: Sequence[Question], share: float, seed: int
) -> tuple[list[Question], list[Question]]:
    """``(tuning, held_out)``, each in the original order, questions unchanged."""
    check_share(share)
    if share == 0:
        return list(questions), []
    rng = np.random.default_rng(seed)
    by_document: dict[str, list[int]] = {}
    for position, question in enumerate(questions):
        by_document.setdefault(question.corpus_id, []).append(position)
    held: set[int] = set()
    for positions in by_document.values():
        count = min(round(share * len(positions)), len(positions) - 1)
        if count > 0:
            held.update(int(p) for p in rng.choice(positions, size=count, replace=False))
    tuning = [q for p, q in enumerate(questions) if p not in held]
    held_out = [q for p, q in enumerate(questions) if p in held]
    return tuning, held_out
