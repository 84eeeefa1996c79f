"""Evaluate one chunking configuration on a question set with gold spans.

For each document the questions are about: cut it with the configuration, embed the
chunks, and for each question retrieve the ``top_k`` chunks of its own document by
cosine similarity. Then score the retrieved spans against the gold spans
(:mod:`chunking.evaluation.spans`), per question, and summarise as mean ± standard
deviation (population std, ``ddof=0``, as the report's code computes it).

How chunks are retrieved, embedded, given context and returned is a
:class:`~chunking.evaluation.techniques.Technique` (dense retrieval of chunks by
default); recall, precision and IoU score the spans that are *returned* (a parent, a
window), precision_Ω the chunks themselves.

precision_Ω and the share of gold spans split across chunks need no embedding model:
pass ``embedder=None`` to compute only those (or retrieve with ``bm25``).

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
from ..model import Chunk, Progress, report_fraction
from ..units import get_sizer
from .context import context_provider, embedded_text, with_context
from .questions import Question
from .retrievers import BM25Index, reciprocal_rank_fusion
from .spans import (
    Scores,
    SpanArray,
    as_spans,
    precision_omega,
    retrieval_scores,
    split_references,
)
from .techniques import DENSE, Technique, window_size

if TYPE_CHECKING:
    import pandas as pd

    from ..embedding.models import Embedder

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
    """What was returned for one question, best first: the document and index of each
    returned chunk (the parent's, for ``parent``), its score and the span returned (the
    chunk's, its parent's or its window's)."""

    corpus_ids: tuple[str, ...]
    chunk_indices: np.ndarray
    scores: np.ndarray
    spans: np.ndarray
    #: For each chunk of the question's own document, its rank (1 = best) as a returned
    #: unit in the whole ranking of what was searched, beyond ``top_k``; 0 for a chunk
    #: that is no searched chunk's unit (a leaf under ``parent``). Read by the lens.
    own_ranks: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Everything one configuration produced on one question set."""

    #: None when the chunks were given as they are (a data set's own), not cut.
    config: Config | None
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
    technique: Technique = DENSE
    #: Chunk texts embedded alone, how many of them were longer than the model reads
    #: (its own word pieces, context included), and that limit. Late chunking and BM25
    #: embed no chunk alone: nothing is truncated and the limit is None.
    embedded_chunks: int = 0
    truncated: int = 0
    model_limit: int | None = None

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
            model=self.model,
            technique=self.technique.name,
            n_chunks=self.n_chunks,
            mean_tokens=round(self.mean_tokens, 1),
            mean_chunk_chars=round(self.mean_chunk_chars, 1),
            mean_gold_chars=round(self.mean_gold_chars, 1),
        )
        for metric in METRICS:
            row[f"{metric}_mean"] = self.mean(metric)
            row[f"{metric}_std"] = self.std(metric)
        row["split_share"] = self.split_share
        row["truncated_share"] = (
            self.truncated / self.embedded_chunks if self.embedded_chunks else 0.0
        )
        row["model_limit"] = self.model_limit
        row["questions"] = len(self.questions)
        row["config"] = self.config.to_json() if self.config is not None else None
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
        for rank, (cid, span, score) in enumerate(
            zip(hit.corpus_ids, hit.spans, hit.scores, strict=True), start=1
        ):
            if cid == own:
                out.append((int(span[0]), int(span[1]), rank, float(score)))
        return out

    @property
    def label(self) -> str:
        """The configuration's one-line label, or :data:`GIVEN` for given chunks."""
        return self.config.label() if self.config is not None else GIVEN


#: The ``strategy`` of chunks evaluated as they were given (a data set's own chunks).
GIVEN = "given chunks"


def config_columns(config: Config | None) -> dict[str, Any]:
    """strategy, size (the strategy's size limit), overlap, unit, threshold of a config
    (strategy :data:`GIVEN` and the rest empty for given chunks)."""
    if config is None:
        return {
            "strategy": GIVEN,
            "size": None,
            "overlap": None,
            "unit": "chars",
            "threshold": None,
        }
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


def _token_sizes(chunks: Mapping[str, Sequence[Chunk]], config: Config | None) -> np.ndarray:
    tokens = get_sizer("tokens")
    same = config is not None and config.unit == "tokens"
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
    config: Config | None,
    embedder: Embedder | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
    technique: Technique = DENSE,
    llm: Any = None,
    chunks: Mapping[str, tuple[Chunk, ...]] | None = None,
) -> Evaluation:
    """Score ``config`` on ``questions``; see the module docstring for what is computed.

    ``technique`` says how chunks are retrieved and what is returned
    (:mod:`chunking.evaluation.techniques`); ``llm`` is the language model of the
    ``llm`` context. Retrieval needs ``embedder`` unless the retriever is ``bm25``.
    ``chunks`` (with ``config=None``) are every document's chunks, evaluated as they
    are instead of cut (a data set's own chunks, :mod:`chunking.evaluation.datasets`).
    With ``scope="all"`` every document is cut and searched, not only those the
    questions are about.
    """
    if not questions:
        raise ValueError("there are no questions to evaluate")
    if (config is None) == (chunks is None):
        raise ValueError("evaluate a configuration or given chunks: one of them")
    if config is not None:
        technique.check(config)
    elif technique.returned == "parent":
        raise ValueError(
            "returning parents needs a parent-child configuration; given chunks have none"
        )
    settings = settings or Settings()

    def report(fraction: float, what: str) -> None:
        report_fraction(progress, fraction, what)

    ids = _used_ids(questions, documents)
    if settings.scope == "all":
        ids = list(dict.fromkeys([*ids, *documents]))
    if chunks is None:
        assert config is not None
        report(0.0, f"Chunking {len(ids)} document(s)")
        chunks = chunk_documents(documents, config, ids)
    else:
        missing = [i for i in ids if i not in chunks]
        if missing:
            raise ValueError(f"no given chunks for document {missing[0]!r}")
        chunks = {i: tuple(chunks[i]) for i in ids}
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
    alone: list[str] = []
    retrieves = embedder is not None or not technique.uses_vectors
    if retrieves:
        if technique.context != "none":
            report(0.02, f"Writing the {technique.context} context of every chunk")
        chunks = {
            i: technique_chunks(documents[i], c, i, technique, llm) for i, c in chunks.items()
        }
        before = embedder.encoded if embedder is not None else 0
        search = _Search(documents, chunks, located, technique, embedder, report)
        retrieved, requested = search.run(questions, settings)
        embedded = embedder.encoded - before if embedder is not None else 0
        _score_retrievals(questions, retrieved, scores)
        if technique.uses_vectors and technique.embedding == "naive":
            alone = [t for i in ids for t in searched_texts(chunks[i], technique)]
    limit = embedder.token_limit if embedder is not None and alone else None
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
        technique=technique,
        embedded_chunks=len(alone),
        truncated=_over_limit(alone, embedder) if embedder is not None and alone else 0,
        model_limit=limit,
    )


def _over_limit(texts: Sequence[str], embedder: Embedder) -> int:
    """How many texts are longer than the model reads (in its own word pieces)."""
    limit = embedder.token_limit
    return sum(n > limit for n in embedder.count_tokens_batch(texts))


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


class _Search:
    """Retrieval with one technique over the chunks of every document.

    Chunks are laid out flat (document after document). A *unit* is what is returned
    for a chunk: the chunk itself, or its parent for ``parent``; units are returned
    at most once per question, so ``top_k`` distinct units come back.
    """

    def __init__(
        self,
        documents: Mapping[str, str],
        chunks: Mapping[str, Sequence[Chunk]],
        located: Mapping[str, SpanArray],
        technique: Technique,
        embedder: Embedder | None,
        report: Callable[[float, str], None],
    ) -> None:
        self.documents, self.chunks, self.located = documents, chunks, located
        self.technique, self.embedder, self.report = technique, embedder, report
        ids = list(chunks)
        self.owners = np.array([i for i in ids for _ in chunks[i]], dtype=object)
        self.units = np.concatenate(
            [chunk_units(chunks[i], technique) for i in ids] or [np.zeros(0, dtype=np.int64)]
        )
        self.unit_spans = {i: unit_spans(located[i], technique) for i in ids}
        # each document's first flat index, so that a unit has one key across documents
        sizes = [len(chunks[i]) for i in ids]
        self.offsets = dict(zip(ids, np.cumsum([0, *sizes[:-1]]).tolist(), strict=True))
        self.unit_keys = self.units + np.repeat([self.offsets[i] for i in ids], sizes)
        self.searched = np.concatenate(
            [searched_mask(chunks[i], technique) for i in ids] or [np.zeros(0, dtype=bool)]
        )
        self._lexical: dict[str, tuple[BM25Index, np.ndarray]] = {}

    def run(
        self, questions: Sequence[Question], settings: Settings
    ) -> tuple[tuple[Retrieved, ...], int]:
        """The returned units per question, and how many texts were embedded or asked."""
        texts = [embedded_text(c) for i in self.chunks for c in self.chunks[i]]
        vectors = asked = None
        requested = 0
        if self.technique.uses_vectors:
            assert self.embedder is not None  # evaluate() checked
            vectors, requested = self._chunk_vectors(texts)
            asked = self.embedder.embed_queries([q.text for q in questions])
            requested += len(questions)
        self.report(0.95, "Retrieving")
        hits = []
        for row, q in enumerate(questions):
            key = "" if settings.scope == "all" else q.corpus_id
            pool = self.searched if not key else self.searched & (self.owners == key)
            candidates = np.flatnonzero(pool)
            dense = (
                vectors[candidates] @ asked[row]
                if vectors is not None and asked is not None
                else None
            )
            lexical = self._bm25(key, pool, texts, candidates, q.text)
            scores = self._fuse(dense, lexical)
            hits.append(self._hits(candidates, scores, settings.top_k, q.corpus_id))
        return tuple(hits), requested

    def _fuse(self, dense: np.ndarray | None, lexical: np.ndarray | None) -> np.ndarray:
        if self.technique.retriever == "hybrid":
            assert dense is not None and lexical is not None
            return reciprocal_rank_fusion(dense, lexical)
        scores = dense if self.technique.retriever == "dense" else lexical
        assert scores is not None
        return np.asarray(scores, dtype=np.float64)

    def _chunk_vectors(self, texts: list[str]) -> tuple[np.ndarray, int]:
        """Chunk vectors: each text embedded alone, or late-pooled plus its context."""
        assert self.embedder is not None
        if self.technique.embedding == "late":
            return self._late_vectors()
        searched = np.flatnonzero(self.searched)
        total = len(searched)

        def step(done: int, n: int, what: str) -> None:
            self.report(0.05 + 0.85 * done / max(n, 1), f"Embedding {total:,} chunk texts")

        vectors = np.zeros((len(texts), self.embedder.dimension), dtype=np.float32)
        vectors[searched] = self.embedder.embed([texts[k] for k in searched], progress=step)
        return vectors, total  # only what is searched is embedded (not the parents)

    def _late_vectors(self) -> tuple[np.ndarray, int]:
        """Late-pooled chunk vectors, with each chunk's context embedding added."""
        from .late import add_context, late_vectors

        assert self.embedder is not None
        parts = []
        count = len(self.chunks)
        for number, (i, cs) in enumerate(self.chunks.items()):

            def step(done: int, total: int, what: str, number: int = number, i: str = i) -> None:
                share = (number + done / max(total, 1)) / count
                self.report(0.05 + 0.85 * share, f"Late embedding of {i}: {done}/{total} windows")

            spans = as_spans([(c.start, c.end) for c in cs])
            parts.append(late_vectors(self.embedder, self.documents[i], spans, step))
        pooled = np.concatenate(parts) if parts else np.zeros((0, self.embedder.dimension))
        if self.technique.context == "none":
            return pooled, 0
        contexts = [c.metadata.get("context") or "" for i in self.chunks for c in self.chunks[i]]
        return add_context(pooled, self.embedder.embed(contexts), contexts), len(contexts)

    def _bm25(
        self, key: str, pool: np.ndarray, texts: list[str], candidates: np.ndarray, query: str
    ) -> np.ndarray | None:
        """BM25 scores of the candidates (an index per pool, built once)."""
        if self.technique.retriever == "dense":
            return None
        if key not in self._lexical:
            self._lexical[key] = (BM25Index([texts[k] for k in candidates]), candidates)
        index, indexed = self._lexical[key]
        assert np.array_equal(indexed, candidates)
        return index.scores(query)

    def _hits(self, candidates: np.ndarray, scores: np.ndarray, top_k: int, own: str) -> Retrieved:
        """The best ``top_k`` distinct units of the ranked candidates, and the rank of
        every unit of the document ``own``."""
        owners, units, spans, kept = [], [], [], []
        seen: set[tuple[str, int]] = set()
        order = np.argsort(-scores, kind="stable")
        for k in order:
            flat = candidates[k]
            cid, unit = str(self.owners[flat]), int(self.units[flat])
            if (cid, unit) in seen:
                continue
            seen.add((cid, unit))
            owners.append(cid)
            units.append(unit)
            spans.append(self.unit_spans[cid][unit])
            kept.append(scores[k])
            if len(units) == top_k:
                break
        return Retrieved(
            corpus_ids=tuple(owners),
            chunk_indices=np.array(units, dtype=np.int64),
            scores=np.array(kept, dtype=np.float64),
            spans=as_spans(np.array(spans, dtype=np.int64).reshape(-1, 2)),
            own_ranks=self._own_ranks(candidates[order], own),
        )

    def _own_ranks(self, ranked: np.ndarray, own: str) -> np.ndarray:
        """Rank of each unit of document ``own`` among the distinct units of ``ranked``
        (flat chunk indices, best first); 0 for a chunk that is no ranked unit."""
        keys, first = np.unique(self.unit_keys[ranked], return_index=True)
        ranks = np.empty(len(keys), dtype=np.int64)
        ranks[np.argsort(first, kind="stable")] = np.arange(1, len(keys) + 1)
        start, count = self.offsets[own], len(self.chunks[own])
        mine = (keys >= start) & (keys < start + count)
        out = np.zeros(count, dtype=np.int64)
        out[keys[mine] - start] = ranks[mine]
        return out


# ------------------------------------------------------- what a technique embeds and finds


def technique_chunks(
    document: str, chunks: Sequence[Chunk], corpus_id: str, technique: Technique, llm: Any = None
) -> tuple[Chunk, ...]:
    """The chunks as :func:`evaluate` searches them: with the technique's context (the
    document's title is ``corpus_id``) in their metadata, offsets and text unchanged."""
    provider = context_provider(technique.context, llm)
    if provider is None:
        return tuple(chunks)
    return with_context(chunks, provider(document, chunks, corpus_id))


def searched_texts(chunks: Sequence[Chunk], technique: Technique) -> list[str]:
    """The texts the model embeds for one document's chunks (as returned by
    :func:`technique_chunks`): each searched chunk's context and text, in order."""
    mask = searched_mask(chunks, technique)
    return [embedded_text(c) for c, kept in zip(chunks, mask, strict=True) if kept]


def embedded_chunk_texts(
    documents: Mapping[str, str],
    config: Config,
    technique: Technique = DENSE,
    ids: Sequence[str] | None = None,
    llm: Any = None,
) -> list[str]:
    """Every chunk text :func:`evaluate` hands the embedder for ``config`` and
    ``technique`` over the documents ``ids`` (default all): none when it embeds no chunk
    on its own (``bm25``, ``late``). Embedding them first (with a progress bar, into a
    disk cache) leaves the evaluation nothing to embed but the questions."""
    if not (technique.uses_vectors and technique.embedding == "naive"):
        return []
    ids = list(documents) if ids is None else ids
    texts = []
    for i, chunks in chunk_documents(documents, config, ids).items():
        texts += searched_texts(
            technique_chunks(documents[i], chunks, i, technique, llm), technique
        )
    return texts


def retrieve(
    document: str,
    chunks: Sequence[Chunk],
    query: str,
    embedder: Embedder | None,
    top_k: int = 5,
    technique: Technique = DENSE,
    corpus_id: str = "document",
) -> Retrieved:
    """The ``top_k`` units ``technique`` returns for a free ``query`` among one
    document's chunks, retrieved exactly as :func:`evaluate` retrieves for a question
    (no gold spans needed); ``corpus_id`` is the document's title for a ``headers``
    context. ``embedder`` may be None for ``bm25``."""
    if technique.uses_vectors and embedder is None:
        raise ValueError(f"the {technique.retriever} retriever needs an embedding model")
    searched = technique_chunks(document, chunks, corpus_id, technique)
    spans = chunk_spans(document, searched)
    engine = _Search(
        {corpus_id: document},
        {corpus_id: searched},
        {corpus_id: spans},
        technique,
        embedder,
        lambda fraction, what: None,
    )
    (hit,), _ = engine.run([Question(0, query, corpus_id, ())], Settings(top_k=top_k))
    return hit


def searched_mask(chunks: Sequence[Chunk], technique: Technique) -> np.ndarray:
    """Which chunks retrieval searches: every chunk, or for ``parent`` only the leaves
    (the small chunks that are embedded; their parents are returned)."""
    if technique.returned != "parent":
        return np.ones(len(chunks), dtype=bool)
    return np.array([c.metadata.get("children", 0) == 0 for c in chunks], dtype=bool)


def chunk_units(chunks: Sequence[Chunk], technique: Technique) -> np.ndarray:
    """The unit returned for each chunk: its parent's index for ``parent`` (a chunk
    without a parent is its own), else the chunk itself."""
    if technique.returned != "parent":
        return np.arange(len(chunks), dtype=np.int64)
    parents = [c.metadata.get("parent") for c in chunks]
    return np.array(
        [c.index if p is None else p for c, p in zip(chunks, parents, strict=True)],
        dtype=np.int64,
    )


def unit_spans(spans: SpanArray, technique: Technique) -> SpanArray:
    """The span returned for each unit: the chunk's, or for ``window:N`` from the start
    of the chunk ``N`` before to the end of the chunk ``N`` after (clipped at the edges)."""
    n = window_size(technique.returned)
    if not n or len(spans) == 0:
        return spans
    return window_spans(spans, n)


def window_spans(spans: SpanArray, n: int) -> SpanArray:
    """Each chunk with ``n`` neighbours on each side: ``[min start, max end)`` over the
    chunks ``i - n .. i + n`` that exist."""
    if n < 0:
        raise ValueError(f"a window takes 0 or more neighbours on each side; got {n}")
    count = len(spans)
    out = np.empty_like(spans)
    for i in range(count):
        lo, hi = max(0, i - n), min(count, i + n + 1)
        out[i] = spans[lo:hi, 0].min(), spans[lo:hi, 1].max()
    return out


def _score_retrievals(
    questions: Sequence[Question],
    retrieved: Sequence[Retrieved],
    scores: dict[str, np.ndarray],
) -> None:
    """Fill recall, precision and IoU from the returned spans."""
    for row, (q, hit) in enumerate(zip(questions, retrieved, strict=True)):
        result = hit_scores(q, hit)
        scores["recall"][row], scores["precision"][row], scores["iou"][row] = result


def hit_scores(question: Question, hit: Retrieved) -> Scores:
    """Recall, precision and IoU of what was returned for ``question``: spans of another
    document count in precision's denominator but never find gold text."""
    own = np.array([cid == question.corpus_id for cid in hit.corpus_ids], dtype=bool)
    spans = hit.spans
    foreign = int((spans[~own, 1] - spans[~own, 0]).sum()) if len(spans) else 0
    return retrieval_scores(spans[own] if len(spans) else spans, question.spans, foreign)
