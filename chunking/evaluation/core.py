"""Evaluate one chunking configuration on a question set with gold spans.

For each document the questions are about: cut it with the configuration, embed the
chunks, and for each question retrieve the ``top_k`` chunks of its own document by
cosine similarity. Then score the retrieved spans against the gold spans
(:mod:`chunking.evaluation.spans`), per question, and summarise as mean ± standard
deviation (population std, ``ddof=0``, as the report's code computes it).

precision_Ω and the share of gold spans split across chunks need no embedding model:
pass ``embedder=None`` to compute only those.

Two quirks of the report's code are available for reproducing its numbers exactly
(:attr:`Settings.chroma`): a chunk that only *touches* a reference counts as
intersecting it (for precision_Ω), and a chunk's span is found by searching the document
for its text (first occurrence, a final ``.`` dropped) rather than taken from the
chunker's exact offsets. The second matters where a document repeats itself: finance.md
does, so chunks of the later copy were scored as if they were in the first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..config import Config
from ..core import run
from ..model import Chunk
from ..units import get_sizer
from .questions import Question
from .spans import SpanArray, as_spans, precision_omega, retrieval_scores, split_references

if TYPE_CHECKING:
    import pandas as pd

    from ..embedding.models import Embedder

#: ``progress(fraction, message)``: fraction in [0, 1] of the work done so far.
Progress = Callable[[float, str], None]
METRICS = ("recall", "precision", "iou", "precision_omega")
METRIC_LABELS = {
    "recall": "Recall",
    "precision": "Precision",
    "iou": "IoU",
    "precision_omega": "Precision Ω",
}
Scope = Literal["document", "all"]
#: The Chroma report's recursive separators (LangChain's RecursiveCharacterTextSplitter
#: with these, keep_separator=True and lengths in cl100k tokens).
REPORT_SEPARATORS = ("\n\n", "\n", ".", "?", "!", " ", "")
#: Fixed recursive parameters that make our recursive splitter cut as the report's did.
REPORT_RECURSIVE: Mapping[str, Any] = MappingProxyType(
    {"separators": REPORT_SEPARATORS, "keep_separator": "start"}
)


@dataclass(frozen=True)
class Settings:
    """How retrieval and scoring are done.

    ``scope="document"`` retrieves among the chunks of the question's own document
    (the README's definition); ``"all"`` among the chunks of every document, as the
    report's code queried one collection (chunks of other documents then count in
    precision's denominator but never find gold text).
    """

    top_k: int = 5
    scope: Scope = "document"
    #: A chunk touching a reference (sharing only an end point) counts for precision_Ω.
    touching: bool = False
    #: Locate chunks by searching their text, as the report's code did.
    locate_by_text: bool = False

    def __post_init__(self) -> None:
        if self.top_k < 1:
            raise ValueError(f"top_k must be at least 1; got {self.top_k}")
        if self.scope not in ("document", "all"):
            raise ValueError(f"scope must be 'document' or 'all'; got {self.scope!r}")

    @classmethod
    def chroma(cls, top_k: int = 5, scope: Scope = "document") -> Settings:
        """The report code's span handling, to reproduce its published figures."""
        return cls(top_k=top_k, scope=scope, touching=True, locate_by_text=True)


def _silent(fraction: float, message: str) -> None:
    """The default progress callback: report nothing."""


# ---------------------------------------------------------------------- chunk spans


def locate_by_text(document: str, text: str) -> tuple[int, int] | None:
    """Where the report's code placed a chunk: the first occurrence of its text.

    A final ``.`` is dropped before searching; if the text is not found verbatim, a
    case-insensitive search that lets whitespace differ is tried. ``None`` if neither
    finds it.
    """
    target = text[:-1] if text.endswith(".") else text
    found = document.find(target)
    if found >= 0:
        return found, found + len(target)
    words = target.split()
    if not words:
        return None
    pattern = re.compile(r"\s*".join(re.escape(w) for w in words), re.IGNORECASE)
    match = pattern.search(document)
    return (match.start(), match.end()) if match else None


def chunk_spans(document: str, chunks: Sequence[Chunk], by_text: bool = False) -> SpanArray:
    """The chunks' spans: their exact offsets, or located by text (see :func:`locate_by_text`)."""
    if not by_text:
        return as_spans([(c.start, c.end) for c in chunks])
    located = [locate_by_text(document, c.text) or (c.start, c.end) for c in chunks]
    return as_spans(located)


# ------------------------------------------------------------------------ results


@dataclass(frozen=True)
class Retrieved:
    """The chunks retrieved for one question, best first."""

    corpus_ids: tuple[str, ...]
    chunk_indices: np.ndarray
    scores: np.ndarray


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Everything one configuration produced on one question set."""

    config: Config
    questions: tuple[Question, ...]
    chunks: Mapping[str, tuple[Chunk, ...]]
    chunk_spans: Mapping[str, SpanArray]
    #: One row per question, columns in :data:`METRICS` (NaN when not retrieved).
    scores: Mapping[str, np.ndarray]
    #: Per question: how many of its references no single chunk holds whole.
    split_counts: np.ndarray
    retrieved: tuple[Retrieved, ...] | None
    settings: Settings
    model: str | None
    #: Texts handed to the embedder / texts the model embedded during this evaluation
    #: (the rest came from its cache; another thread using the same embedder at the same
    #: time would be counted too).
    texts_requested: int = 0
    texts_embedded: int = 0
    chunk_tokens: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def n_chunks(self) -> int:
        return sum(len(c) for c in self.chunks.values())

    @property
    def mean_tokens(self) -> float:
        """Mean chunk size in cl100k tokens, over every chunk of every document."""
        return float(self.chunk_tokens.mean()) if len(self.chunk_tokens) else 0.0

    @property
    def mean_chunk_chars(self) -> float:
        """Mean chunk length in characters."""
        lengths = [len(c.text) for cs in self.chunks.values() for c in cs]
        return float(np.mean(lengths)) if lengths else 0.0

    @property
    def mean_gold_chars(self) -> float:
        """Mean number of gold characters per question."""
        gold = [sum(r.end - r.start for r in q.references) for q in self.questions]
        return float(np.mean(gold)) if gold else 0.0

    @property
    def split_share(self) -> float:
        """Share of all gold spans that no single chunk holds whole."""
        total = sum(len(q.references) for q in self.questions)
        return float(self.split_counts.sum() / total) if total else 0.0

    def mean(self, metric: str) -> float:
        """Mean of a metric over the questions (NaN if it was not computed)."""
        return float(np.mean(self.scores[metric])) if self.questions else float("nan")

    def std(self, metric: str) -> float:
        """Population standard deviation (``ddof=0``, as the report's ``np.std``)."""
        return float(np.std(self.scores[metric])) if self.questions else float("nan")

    @cached_property
    def summary(self) -> dict[str, Any]:
        """One flat row: configuration, chunk statistics, metric means and stds."""
        row: dict[str, Any] = config_columns(self.config)
        row.update(
            n_chunks=self.n_chunks,
            mean_tokens=round(self.mean_tokens, 1),
            mean_chunk_chars=round(self.mean_chunk_chars, 1),
            mean_gold_chars=round(self.mean_gold_chars, 1),
        )
        for metric in METRICS:
            row[f"{metric}_mean"] = self.mean(metric)
            row[f"{metric}_std"] = self.std(metric)
        row["split_share"] = self.split_share
        row["questions"] = len(self.questions)
        row["config"] = self.config.to_json()
        return row

    def per_question(self) -> pd.DataFrame:
        """One row per question: document, question, metrics, references and splits."""
        import pandas as pd

        frame = pd.DataFrame(
            {
                "question_index": [q.index for q in self.questions],
                "corpus_id": [q.corpus_id for q in self.questions],
                "question": [q.text for q in self.questions],
                "references": [len(q.references) for q in self.questions],
                "split_references": self.split_counts,
            }
        )
        for metric in METRICS:
            frame[metric] = self.scores[metric]
        return frame

    def retrieved_spans(self, question: int) -> list[tuple[int, int, int, float]]:
        """``(start, end, rank, score)`` of the chunks retrieved for a question (rank 1 first).

        Chunks of another document (``scope="all"``) are left out.
        """
        if self.retrieved is None:
            return []
        hit = self.retrieved[question]
        own = self.questions[question].corpus_id
        out = []
        for rank, (cid, idx, score) in enumerate(
            zip(hit.corpus_ids, hit.chunk_indices, hit.scores, strict=True), start=1
        ):
            if cid == own:
                start, end = self.chunk_spans[cid][int(idx)]
                out.append((int(start), int(end), rank, float(score)))
        return out


def config_columns(config: Config) -> dict[str, Any]:
    """strategy, size (the strategy's size limit), overlap, unit, threshold of a config."""
    params = config.params
    limit = config.limit
    return {
        "strategy": config.strategy,
        "size": limit,
        "overlap": params.get("overlap"),
        "unit": params.get("unit", "chars"),
        "threshold": params.get("threshold"),
    }


# ----------------------------------------------------------------------- evaluation


def chunk_documents(
    documents: Mapping[str, str], config: Config, ids: Sequence[str]
) -> dict[str, tuple[Chunk, ...]]:
    """Cut each document named in ``ids`` with ``config``."""
    return {i: tuple(run(documents[i], config)) for i in ids}


def _token_sizes(chunks: Mapping[str, Sequence[Chunk]], config: Config) -> np.ndarray:
    tokens = get_sizer("tokens")
    same = config.unit == "tokens"
    return np.array(
        [c.size if same else tokens.size(c.text) for cs in chunks.values() for c in cs],
        dtype=np.int64,
    )


def _used_ids(questions: Sequence[Question], documents: Mapping[str, str]) -> list[str]:
    ids = list(dict.fromkeys(q.corpus_id for q in questions))
    unknown = [i for i in ids if i not in documents]
    if unknown:
        raise ValueError(f"question refers to document {unknown[0]!r}, which is not loaded")
    return ids


def evaluate(
    documents: Mapping[str, str],
    questions: Sequence[Question],
    config: Config,
    embedder: Embedder | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> Evaluation:
    """Score ``config`` on ``questions``; see the module docstring for what is computed."""
    if not questions:
        raise ValueError("there are no questions to evaluate")
    settings = settings or Settings()
    report = progress or _silent
    ids = _used_ids(questions, documents)
    report(0.0, f"Chunking {len(ids)} document(s)")
    chunks = chunk_documents(documents, config, ids)
    exact = {i: chunk_spans(documents[i], chunks[i]) for i in ids}
    located = (
        {i: chunk_spans(documents[i], chunks[i], by_text=True) for i in ids}
        if settings.locate_by_text
        else exact
    )
    omega = _omega_scores(questions, located, settings)
    splits = _split_counts(documents, questions, exact)
    scores = {m: np.full(len(questions), np.nan) for m in ("recall", "precision", "iou")}
    scores["precision_omega"] = omega
    retrieved = None
    requested = embedded = 0
    if embedder is not None:
        before = embedder.encoded
        retrieved, requested = _retrieve(chunks, questions, embedder, settings, report)
        embedded = embedder.encoded - before
        _score_retrievals(questions, located, retrieved, scores)
    report(1.0, "Done")
    return Evaluation(
        config=config,
        questions=tuple(questions),
        chunks=chunks,
        chunk_spans=located,
        scores=scores,
        split_counts=splits,
        retrieved=retrieved,
        settings=settings,
        model=embedder.name if embedder is not None else None,
        texts_requested=requested,
        texts_embedded=embedded,
        chunk_tokens=_token_sizes(chunks, config),
    )


def _omega_scores(
    questions: Sequence[Question], located: Mapping[str, SpanArray], settings: Settings
) -> np.ndarray:
    """precision_Ω per question."""
    return np.array(
        [
            precision_omega(located[q.corpus_id], q.spans, touching=settings.touching)
            for q in questions
        ],
        dtype=np.float64,
    )


def _split_counts(
    documents: Mapping[str, str], questions: Sequence[Question], exact: Mapping[str, SpanArray]
) -> np.ndarray:
    """Per question, how many references no single chunk holds whole (exact offsets)."""
    return np.array(
        [
            int(split_references(q.spans, exact[q.corpus_id], documents[q.corpus_id]).sum())
            for q in questions
        ],
        dtype=np.int64,
    )


def _retrieve(
    chunks: Mapping[str, Sequence[Chunk]],
    questions: Sequence[Question],
    embedder: Embedder,
    settings: Settings,
    report: Progress,
) -> tuple[tuple[Retrieved, ...], int]:
    """Embed chunks and questions; the top ``k`` chunks per question, best first."""
    ids = list(chunks)
    texts = [c.text for i in ids for c in chunks[i]]
    owners = np.array([i for i in ids for _ in chunks[i]], dtype=object)
    local = np.array([c.index for i in ids for c in chunks[i]], dtype=np.int64)
    total = len(texts) + len(questions)

    def step(offset: int) -> Callable[[int, int], None]:
        return lambda done, _n: report(
            0.05 + 0.9 * (offset + done) / max(total, 1), f"Embedding {total:,} texts"
        )

    vectors = embedder.embed(texts, progress=step(0))
    asked = embedder.embed([q.text for q in questions], progress=step(len(texts)))
    report(0.95, "Retrieving")
    hits = []
    for row, q in enumerate(questions):
        pool = np.ones(len(texts), dtype=bool) if settings.scope == "all" else owners == q.corpus_id
        candidates = np.flatnonzero(pool)
        sims = vectors[candidates] @ asked[row]
        best = candidates[np.argsort(-sims, kind="stable")[: settings.top_k]]
        hits.append(
            Retrieved(
                corpus_ids=tuple(str(o) for o in owners[best]),
                chunk_indices=local[best],
                scores=(vectors[best] @ asked[row]).astype(np.float64),
            )
        )
    return tuple(hits), total


def _score_retrievals(
    questions: Sequence[Question],
    located: Mapping[str, SpanArray],
    retrieved: Sequence[Retrieved],
    scores: dict[str, np.ndarray],
) -> None:
    """Fill recall, precision and IoU from the retrieved chunks' spans."""
    for row, (q, hit) in enumerate(zip(questions, retrieved, strict=True)):
        own: list[tuple[int, int]] = []
        foreign = 0
        for cid, idx in zip(hit.corpus_ids, hit.chunk_indices, strict=True):
            start, end = (int(v) for v in located[cid][int(idx)])
            if cid == q.corpus_id:
                own.append((start, end))
            else:
                foreign += end - start
        result = retrieval_scores(as_spans(own), q.spans, foreign_length=foreign)
        scores["recall"][row], scores["precision"][row], scores["iou"][row] = result
