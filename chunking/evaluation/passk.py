"""Pass@k, as the Anthropic cookbook's contextual-retrieval guide defines it, and every
metric at several k from one retrieval.

For one question, Pass@k is the share of its golden chunks (its references) *found*
among the top ``k`` retrieved units; averaged over the questions, in percent. What
"found" means depends on the chunks:

- **the set's own chunks** (``found_at=None``, the exact rule): a golden chunk is found
  when one of the top-k units returned *is* it: its text, stripped of surrounding
  whitespace, equals the golden chunk's stripped text (the guide compares contents, so an
  identical licence header in another file counts), or the unit returned holds the
  golden chunk's span whole (a window or parent around it);
- **any other chunking** (``found_at=f``, 0.5 by default): a golden chunk is found when
  the top-k units of its document together cover at least the share ``f`` of its
  non-whitespace characters. The set's own chunks do not overlap, so a unit either is a
  golden chunk or shares no character with it, and with distinct texts the two rules
  agree for every ``f`` in (0, 1].

Recall, precision and IoU at each k are those of :mod:`chunking.evaluation.spans` on the
first k units returned. An evaluation retrieved with ``top_k = max(ks)`` holds every
smaller k: units come best first and are distinct, so the first k of the top 20 are the
top k.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

import numpy as np

from .core import Evaluation, Retrieved, hit_scores
from .questions import Question
from .spans import SpanArray, union

if TYPE_CHECKING:
    import pandas as pd

#: The default share of a golden chunk's non-whitespace characters that must be covered.
FOUND_AT: Final = 0.5
#: Metrics reported at every k (``pass`` in percent, the others as shares in [0, 1]).
K_METRICS: Final = ("pass", "recall", "precision", "iou")


def column(metric: str, k: int) -> str:
    """The results column of ``metric`` at ``k``: ``pass@5``, ``recall@10``."""
    return f"{metric}@{k}"


def check_ks(ks: Sequence[int]) -> list[int]:
    """The k values sorted, without duplicates; ``ValueError`` for none or one below 1."""
    if not ks:
        raise ValueError("give at least one k (e.g. --top-k 5 10 20)")
    bad = [k for k in ks if k < 1]
    if bad:
        raise ValueError(f"k must be at least 1; got {bad[0]}")
    return sorted(set(ks))


def check_found_at(found_at: float | None) -> float | None:
    """``found_at`` if it is a share in (0, 1] (or None: the exact rule)."""
    if found_at is not None and not 0 < found_at <= 1:
        raise ValueError(
            f"--found-at is the share of a golden chunk's non-whitespace characters the "
            f"top-k chunks must cover, in (0, 1]; got {found_at:g}"
        )
    return found_at


class _NonSpace:
    """Counts of non-whitespace characters in any span of the documents (prefix sums)."""

    def __init__(self, documents: Mapping[str, str]) -> None:
        self.documents = documents
        self._sums: dict[str, np.ndarray] = {}

    def count(self, corpus_id: str, spans: SpanArray) -> int:
        """Non-whitespace characters covered by the ``spans`` (overlaps counted once)."""
        sums = self._sums.get(corpus_id)
        if sums is None:
            text = self.documents[corpus_id]
            marks = np.fromiter((not ch.isspace() for ch in text), dtype=np.int64, count=len(text))
            sums = self._sums[corpus_id] = np.concatenate([[0], np.cumsum(marks)])
        merged = union(spans)
        return int((sums[merged[:, 1]] - sums[merged[:, 0]]).sum()) if len(merged) else 0


def _first(hit: Retrieved, k: int) -> Retrieved:
    """The first ``k`` units returned (the rest of the record unchanged)."""
    return dataclasses.replace(
        hit,
        corpus_ids=hit.corpus_ids[:k],
        chunk_indices=hit.chunk_indices[:k],
        scores=hit.scores[:k],
        spans=hit.spans[:k],
    )


def _clip(spans: SpanArray, start: int, end: int) -> SpanArray:
    """The parts of ``spans`` inside ``[start, end)``, empty parts dropped."""
    clipped = np.column_stack([np.maximum(spans[:, 0], start), np.minimum(spans[:, 1], end)])
    return clipped[clipped[:, 1] > clipped[:, 0]]


def pass_scores(
    evaluation: Evaluation,
    documents: Mapping[str, str],
    k: int,
    found_at: float | None = FOUND_AT,
) -> np.ndarray:
    """Per question, the share (0 to 1) of its golden chunks found among the top ``k``.

    ``found_at=None`` is the exact rule for the set's own chunks, a share the coverage
    rule (see the module docstring). NaN for every question when nothing was retrieved.
    """
    return _pass_scores(evaluation, documents, [k], found_at)[k]


def _pass_scores(
    evaluation: Evaluation,
    documents: Mapping[str, str],
    ks: Sequence[int],
    found_at: float | None,
) -> dict[int, np.ndarray]:
    check_found_at(found_at)
    n = len(evaluation.questions)
    if evaluation.retrieved is None:
        return {k: np.full(n, np.nan) for k in ks}
    counter = _NonSpace(documents)
    out = {k: np.zeros(n, dtype=np.float64) for k in ks}
    for row, (q, hit) in enumerate(zip(evaluation.questions, evaluation.retrieved, strict=True)):
        for k in ks:
            found = _found(q, _first(hit, k), documents, found_at, counter)
            out[k][row] = sum(found) / len(found)
    return out


def _found(
    question: Question,
    top: Retrieved,
    documents: Mapping[str, str],
    found_at: float | None,
    counter: _NonSpace,
) -> list[bool]:
    """Which of the question's golden chunks the units ``top`` find."""
    mine = np.array([c == question.corpus_id for c in top.corpus_ids], dtype=bool)
    own = top.spans[mine] if len(top.spans) else top.spans
    if found_at is None:
        returned = {
            documents[c][s:e].strip() for c, (s, e) in zip(top.corpus_ids, top.spans, strict=True)
        }
        return [
            r.content.strip() in returned
            or bool(((own[:, 0] <= r.start) & (r.end <= own[:, 1])).any())
            for r in question.references
        ]
    found = []
    for r in question.references:
        gold = counter.count(question.corpus_id, np.array([[r.start, r.end]]))
        covered = counter.count(question.corpus_id, _clip(own, r.start, r.end))
        found.append(gold > 0 and covered >= found_at * gold)
    return found


def scores_at(evaluation: Evaluation, k: int) -> dict[str, np.ndarray]:
    """Recall, precision and IoU per question on the first ``k`` units returned (NaN
    when nothing was retrieved), scored as :func:`~chunking.evaluation.evaluate` does."""
    n = len(evaluation.questions)
    scores = {m: np.full(n, np.nan) for m in ("recall", "precision", "iou")}
    if evaluation.retrieved is None:
        return scores
    for row, (q, hit) in enumerate(zip(evaluation.questions, evaluation.retrieved, strict=True)):
        result = hit_scores(q, _first(hit, k))
        scores["recall"][row], scores["precision"][row], scores["iou"][row] = result
    return scores


def k_columns(
    evaluation: Evaluation,
    documents: Mapping[str, str],
    ks: Sequence[int],
    found_at: float | None = FOUND_AT,
) -> dict[str, float]:
    """Every :data:`K_METRICS` column at every k, averaged over the questions:
    ``pass@k`` in percent (two decimals, as the guide), the others as shares."""
    ks = check_ks(ks)
    top = evaluation.settings.top_k
    over = [k for k in ks if k > top]
    if over:
        raise ValueError(f"k = {over[0]} is more than the {top} units retrieved per question")
    row: dict[str, float] = {}
    for k, passed in _pass_scores(evaluation, documents, ks, found_at).items():
        row[column("pass", k)] = round(100 * float(np.mean(passed)), 2)
    for k in ks:
        for metric, values in scores_at(evaluation, k).items():
            row[column(metric, k)] = float(np.mean(values))
    return row


def with_k_columns(
    table: pd.DataFrame,
    evaluations: Sequence[Evaluation],
    documents: Mapping[str, str],
    ks: Sequence[int],
    found_at: float | None = FOUND_AT,
) -> pd.DataFrame:
    """``table`` (one row per evaluation, in order: a results or techniques table) with
    the :func:`k_columns` of each row's evaluation added."""
    import pandas as pd

    if len(table) != len(evaluations):
        raise ValueError(f"{len(table)} table rows for {len(evaluations)} evaluations")
    extra = pd.DataFrame.from_records(
        [k_columns(e, documents, ks, found_at) for e in evaluations], index=table.index
    )
    return pd.concat([table, extra], axis=1)


def table_ks(table: pd.DataFrame) -> list[int]:
    """The k values of a table's ``pass@k`` columns, in order."""
    return sorted(int(c.split("@", 1)[1]) for c in table.columns if str(c).startswith("pass@"))


def k_display(table: pd.DataFrame, *, every_metric: bool = True) -> dict[str, list[str]]:
    """The per-k columns as people read them: ``Pass@5`` (percent, two decimals), then
    (with ``every_metric``) ``Recall@5``, ``Precision@5``, ``IoU@5`` in percent."""
    labels = {"recall": "Recall", "precision": "Precision", "iou": "IoU"}
    ks = table_ks(table)
    shown = {f"Pass@{k}": [_number(v, 2, 1) for v in table[column("pass", k)]] for k in ks}
    if every_metric:
        for metric, label in labels.items():
            for k in ks:
                values = table[column(metric, k)]
                shown[f"{label}@{k}"] = [_number(v, 1, 100) for v in values]
    return shown


def _number(value: float, digits: int, scale: float) -> str:
    return "—" if value != value else f"{scale * value:.{digits}f}"  # NaN is not itself
