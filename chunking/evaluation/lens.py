"""The retrieval lens: which chunks the questions find, which they miss, and why.

For one :class:`~chunking.evaluation.core.Evaluation` (any question set, retriever and
returned unit) the lens counts, for every chunk:

- ``retrieved``: how many questions returned it in their top ``k`` (under ``parent``
  the parent is what is returned, under ``window:N`` the chunk at the window's centre);
- ``gold``: how many questions have a gold span sharing at least one character with it;
- ``hits``: how many questions did both.

The ``retrieved`` counts sum to the number of units returned: ``questions × k`` whenever
every question's pool holds ``k`` units.

A gold span is *missed* when the spans returned for its question (its own document's)
do not cover all of it; its leading and trailing whitespace is ignored, as for the split
share. A unit *holds* a gold span when the span it returns contains it whole. Each miss
gets one reason, the first that applies:

1. ``cut by a boundary``: no unit holds it; the miss says how much of it the best
   single unit holds (``best_share``). A gold span no chunk touches at all (text a
   strategy left out) has ``best_share`` 0.
2. ``truncated``: units hold it, but in every one some of its text lies past the
   embedding model's window inside the chunk that is embedded (the model reads the
   chunk's first :attr:`~chunking.embedding.base.Embedder.token_limit` word pieces,
   found with the model's own word-piece offsets, after the chunk's context if it has
   one). ``read_share`` is the most of the gold text one holder's window reads. Only
   chunks embedded alone are truncated (``dense`` and the dense half of ``hybrid``):
   BM25 reads every word and late chunking pools every token.
3. ``out-ranked``: a unit holds it and its model reads all of it, yet it ranked below
   ``k``; ``rank`` is the best such unit's rank (1 = best) among the distinct units
   searched for the question.

Everything here is plain data for the pages: :func:`chunk_colours` (what the map and
the text colour each chunk by), :func:`question_marks` (a question's gold and retrieved
chunks), :func:`reasons_table` and :func:`reason_lines` (Compare's sums side by side).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..engine.spans import strip_span
from .context import embedded_text
from .core import Evaluation, chunk_units, searched_mask, unit_spans
from .spans import SpanArray, intersecting, overlap

if TYPE_CHECKING:
    import pandas as pd

    from ..embedding.base import Embedder
    from ..embedding.projection import Projection
    from ..model import Chunk

CUT = "cut by a boundary"
TRUNCATED = "truncated"
OUT_RANKED = "out-ranked"
#: The miss reasons, in the order they are tried (and shown).
REASONS = (CUT, TRUNCATED, OUT_RANKED)
#: The results-table column counting each reason's missed gold spans.
REASON_COLUMNS = {CUT: "missed_cut", TRUNCATED: "missed_truncated", OUT_RANKED: "missed_out_ranked"}
#: The columns :meth:`Lens.summary` adds to a configuration's results row.
SUMMARY_COLUMNS = ("never_retrieved_share", "missed_answers", *REASON_COLUMNS.values())
#: The columns of :meth:`Lens.per_chunk`.
PER_CHUNK_COLUMNS = (
    "config",
    "model",
    "technique",
    "corpus_id",
    "index",
    "start",
    "end",
    "retrieved",
    "gold",
    "hits",
)
#: What :func:`chunk_colours` gives a chunk besides a reason.
FOUND = "found"
NO_GOLD = "no gold"
COLOURINGS = ("retrieved", "reason")


@dataclass(frozen=True)
class Miss:
    """One gold span its question did not get back, and why.

    ``question`` is the question's position in the evaluation, ``reference`` the span's
    among its references; ``start``/``end`` the span without its outer whitespace.
    ``chunk`` is the unit the numbers are about: the one holding the most of the span
    (cut), the holder whose window reads the most of it (truncated) or the best ranked
    holder (out-ranked).
    """

    question: int
    reference: int
    corpus_id: str
    start: int
    end: int
    reason: str
    chunk: int | None
    best_share: float
    read_share: float | None = None
    rank: int | None = None

    def describe(self) -> str:
        """One sentence: the reason with its number."""
        if self.reason == CUT:
            if self.chunk is None or self.best_share == 0:
                return f"{CUT}: no chunk holds any of it"
            return f"{CUT}: the best chunk ({self.chunk}) holds {self.best_share:.0%} of it"
        if self.reason == TRUNCATED:
            read = self.read_share or 0.0
            return (
                f"{TRUNCATED}: chunk {self.chunk} holds it, but the model's window reads "
                f"only {read:.0%} of it"
            )
        where = f", ranked {self.rank}" if self.rank else ""
        return f"{OUT_RANKED}: chunk {self.chunk} holds it{where}"


@dataclass(frozen=True)
class QuestionMarks:
    """What to mark for one question: the chunks its gold spans touch, the units it
    retrieved (document, chunk index, rank 1 first) and its misses
    (filled by :func:`question_marks`)."""

    question: int
    corpus_id: str
    gold_chunks: tuple[int, ...]
    retrieved: tuple[tuple[str, int, int], ...]
    misses: tuple[Miss, ...] = ()


@dataclass(frozen=True, eq=False)
class Lens:
    """Per-chunk traffic and the misses of one evaluation at one ``top_k``.

    ``retrieved``, ``gold`` and ``hits`` map each document to one count per chunk (in
    chunk order); ``returnable`` marks the chunks retrieval can return (all of them,
    but under ``parent`` the parents and the leaves without one). ``retrieval`` is false
    for an evaluation without retrieval (no model): nothing is retrieved or missed then.
    """

    label: str
    model: str | None
    technique: str
    top_k: int
    questions: int
    spans: Mapping[str, SpanArray]
    retrieved: Mapping[str, np.ndarray]
    gold: Mapping[str, np.ndarray]
    hits: Mapping[str, np.ndarray]
    returnable: Mapping[str, np.ndarray]
    misses: tuple[Miss, ...]
    retrieval: bool
    #: Per question, its misses' positions in :attr:`misses`.
    by_question: tuple[tuple[int, ...], ...] = field(default=())
    #: Per question, its gold chunks and what it retrieved (see :func:`question_marks`).
    marks: tuple[QuestionMarks, ...] = field(default=())

    @property
    def counts(self) -> dict[str, int]:
        """Missed gold spans per reason, every reason present (0 when none)."""
        out = dict.fromkeys(REASONS, 0)
        for miss in self.misses:
            out[miss.reason] += 1
        return out

    @property
    def never_retrieved_share(self) -> float:
        """Share of the returnable chunks no question retrieved (NaN without retrieval)."""
        if not self.retrieval:
            return float("nan")
        total = sum(int(m.sum()) for m in self.returnable.values())
        never = sum(
            int(((self.retrieved[i] == 0) & self.returnable[i]).sum()) for i in self.retrieved
        )
        return never / total if total else 0.0

    def question_misses(self, question: int) -> list[Miss]:
        """The misses of one question (its position in the evaluation)."""
        return [self.misses[m] for m in self.by_question[question]] if self.by_question else []

    def question_reason(self, question: int) -> str | None:
        """The question's first reason in :data:`REASONS` order; None if nothing was
        missed."""
        found = {m.reason for m in self.question_misses(question)}
        return next((r for r in REASONS if r in found), None)

    def summary(self) -> dict[str, Any]:
        """The columns :data:`SUMMARY_COLUMNS` of this configuration's results row
        (NaN without retrieval)."""
        if not self.retrieval:
            return dict.fromkeys(SUMMARY_COLUMNS, float("nan"))
        counts = self.counts
        row: dict[str, Any] = {
            "never_retrieved_share": self.never_retrieved_share,
            "missed_answers": len(self.misses),
        }
        row.update({REASON_COLUMNS[r]: counts[r] for r in REASONS})
        return row

    def per_chunk(self) -> pd.DataFrame:
        """One row per chunk, columns :data:`PER_CHUNK_COLUMNS` (``retrieved`` and
        ``hits`` empty without retrieval)."""
        import pandas as pd

        frames = []
        for cid, spans in self.spans.items():
            n = len(spans)
            frame = pd.DataFrame(
                {
                    "config": [self.label] * n,
                    "model": [self.model] * n,
                    "technique": [self.technique] * n,
                    "corpus_id": [cid] * n,
                    "index": np.arange(n),
                    "start": spans[:, 0] if n else [],
                    "end": spans[:, 1] if n else [],
                    "retrieved": self.retrieved[cid],
                    "gold": self.gold[cid],
                    "hits": self.hits[cid],
                }
            )
            if not self.retrieval:
                frame["retrieved"] = frame["hits"] = pd.NA
            frames.append(frame)
        if not frames:
            return pd.DataFrame(columns=list(PER_CHUNK_COLUMNS))
        return pd.concat(frames, ignore_index=True)[list(PER_CHUNK_COLUMNS)]

    def per_question(self) -> pd.DataFrame:
        """One row per question: its reason (empty when nothing was missed), how many
        gold spans it missed and what each miss says."""
        import pandas as pd

        rows = []
        for q in range(self.questions):
            misses = self.question_misses(q)
            rows.append(
                {
                    "question_index": q,
                    "miss_reason": self.question_reason(q) or "",
                    "missed": len(misses),
                    "miss_detail": "; ".join(m.describe() for m in misses),
                }
            )
        return pd.DataFrame.from_records(
            rows, columns=["question_index", "miss_reason", "missed", "miss_detail"]
        )


# ------------------------------------------------------------------------ computing


class _Document:
    """The lens's view of one document's chunks under the evaluation's technique."""

    def __init__(self, evaluation: Evaluation, corpus_id: str) -> None:
        technique = evaluation.technique
        self.chunks = evaluation.chunks[corpus_id]
        self.spans = np.asarray(evaluation.chunk_spans[corpus_id], dtype=np.int64).reshape(-1, 2)
        self.units = chunk_units(self.chunks, technique)
        self.searched = searched_mask(self.chunks, technique)
        self.unit_spans = unit_spans(self.spans, technique)
        self.returnable = np.zeros(len(self.chunks), dtype=bool)
        self.returnable[self.units[self.searched]] = True
        #: the units retrieval can return, and the searched chunks behind each
        self.candidates = np.flatnonzero(self.returnable)
        self.members = {
            int(u): np.flatnonzero(self.searched & (self.units == u)) for u in self.candidates
        }


def _trimmed(start: int, end: int, content: str) -> tuple[int, int]:
    """A reference without its leading and trailing whitespace (in document offsets)."""
    lo, hi = strip_span(content, 0, len(content))
    return start + lo, start + hi


def _covered(span: tuple[int, int], returned: SpanArray) -> bool:
    length = span[1] - span[0]
    return overlap(returned, np.array([span], dtype=np.int64)) == length


def _held(span: tuple[int, int], spans: SpanArray) -> np.ndarray:
    """Characters of ``span`` inside each of ``spans``."""
    if len(spans) == 0:
        return np.zeros(0, dtype=np.int64)
    lo = np.maximum(spans[:, 0], span[0])
    hi = np.minimum(spans[:, 1], span[1])
    return np.maximum(hi - lo, 0)


class _Windows:
    """Where the model's window ends in each searched chunk (document offsets), found
    on demand with the embedder's word-piece offsets; a chunk it reads whole ends at
    its end."""

    def __init__(self, evaluation: Evaluation, embedder: Embedder | None) -> None:
        technique = evaluation.technique
        self.truncates = technique.uses_vectors and technique.embedding == "naive"
        if self.truncates and evaluation.retrieved is not None:
            if embedder is None:
                raise ValueError(
                    "the lens needs the embedding model to tell truncated answers from "
                    f"out-ranked ones; pass the embedder of {evaluation.model}"
                )
            if embedder.name != evaluation.model:
                raise ValueError(
                    f"the evaluation used {evaluation.model}, not the embedder given "
                    f"({embedder.name})"
                )
        self.embedder = embedder
        self.evaluation = evaluation
        self.ends: dict[tuple[str, int], int] = {}

    def need(self, wanted: Sequence[tuple[str, int]]) -> None:
        """Find the window ends of these chunks (one batch per call)."""
        todo = sorted({w for w in wanted if w not in self.ends})
        if not todo:
            return
        chunks = [self.evaluation.chunks[cid][i] for cid, i in todo]
        spans = [self.evaluation.chunk_spans[cid][i] for cid, i in todo]
        if not self.truncates or self.embedder is None:
            self.ends.update({key: int(s[1]) for key, s in zip(todo, spans, strict=True)})
            return
        texts = [embedded_text(c) for c in chunks]
        for key, chunk, text, span, end in zip(
            todo, chunks, texts, spans, self.embedder.window_ends(texts), strict=True
        ):
            prefix = len(text) - len(chunk.text)  # the context and its blank line
            read = min(max(end - prefix, 0), len(chunk.text))
            self.ends[key] = int(span[0]) + read


def lens(
    evaluation: Evaluation, embedder: Embedder | None = None, top_k: int | None = None
) -> Lens:
    """The lens of ``evaluation`` at ``top_k`` (default: the evaluation's own).

    ``embedder`` is the model the evaluation embedded chunks with; it is needed (and
    only used, to find where its window ends) when chunks were embedded alone.
    ``top_k`` may be smaller than the evaluation's, never larger.
    """
    settings_k = evaluation.settings.top_k
    k = settings_k if top_k is None else int(top_k)
    if not 1 <= k <= settings_k:
        raise ValueError(f"the lens takes top_k from 1 to the evaluation's {settings_k}; got {k}")
    docs = {cid: _Document(evaluation, cid) for cid in evaluation.chunks}
    retrieved = {cid: np.zeros(len(d.chunks), dtype=np.int64) for cid, d in docs.items()}
    gold = {cid: np.zeros(len(d.chunks), dtype=np.int64) for cid, d in docs.items()}
    hits = {cid: np.zeros(len(d.chunks), dtype=np.int64) for cid, d in docs.items()}
    results = evaluation.retrieved
    windows = _Windows(evaluation, embedder)
    pending: list[tuple[int, int, tuple[int, int], np.ndarray]] = []
    marks = []
    for row, question in enumerate(evaluation.questions):
        doc = docs[question.corpus_id]
        touched = intersecting(doc.spans, question.spans)
        gold[question.corpus_id] += touched
        golden = tuple(int(i) for i in np.flatnonzero(touched))
        if results is None:
            marks.append(QuestionMarks(row, question.corpus_id, golden, ()))
            continue
        hit = results[row]
        returned_units = tuple(
            (str(cid), int(unit), rank)
            for rank, (cid, unit) in enumerate(
                zip(hit.corpus_ids[:k], hit.chunk_indices[:k], strict=True), start=1
            )
        )
        marks.append(QuestionMarks(row, question.corpus_id, golden, returned_units))
        mine = np.zeros(len(doc.chunks), dtype=bool)
        for cid, unit in zip(hit.corpus_ids[:k], hit.chunk_indices[:k], strict=True):
            retrieved[cid][unit] += 1
            if cid == question.corpus_id:
                mine[unit] = True
        hits[question.corpus_id] += touched & mine
        own = np.array([c == question.corpus_id for c in hit.corpus_ids[:k]], dtype=bool)
        returned = hit.spans[:k][own] if len(hit.spans) else hit.spans
        for j, ref in enumerate(question.references):
            span = _trimmed(ref.start, ref.end, ref.content)
            if span[1] > span[0] and not _covered(span, returned):
                pending.append((row, j, span, _held(span, doc.unit_spans[doc.candidates])))
    misses = _diagnose(evaluation, docs, windows, pending, k) if results is not None else []
    by_question: list[list[int]] = [[] for _ in evaluation.questions]
    for position, miss in enumerate(misses):
        by_question[miss.question].append(position)
    return Lens(
        label=evaluation.label,
        model=evaluation.model,
        technique=evaluation.technique.name,
        top_k=k,
        questions=len(evaluation.questions),
        spans={cid: d.spans for cid, d in docs.items()},
        retrieved=retrieved,
        gold=gold,
        hits=hits,
        returnable={cid: d.returnable for cid, d in docs.items()},
        misses=tuple(misses),
        retrieval=results is not None,
        by_question=tuple(tuple(m) for m in by_question),
        marks=tuple(marks),
    )


def _diagnose(
    evaluation: Evaluation,
    docs: Mapping[str, _Document],
    windows: _Windows,
    pending: Sequence[tuple[int, int, tuple[int, int], np.ndarray]],
    k: int,
) -> list[Miss]:
    """The reason of every missed gold span (``pending``: question row, reference,
    trimmed span, characters of it in each candidate unit)."""
    assert evaluation.retrieved is not None
    wanted = []
    for row, _, span, held in pending:
        cid = evaluation.questions[row].corpus_id
        doc = docs[cid]
        for unit in doc.candidates[held == span[1] - span[0]]:
            wanted += [(cid, int(m)) for m in doc.members[int(unit)]]
    windows.need(wanted)
    misses = []
    for row, j, span, held in pending:
        question = evaluation.questions[row]
        cid = question.corpus_id
        doc = docs[cid]
        length = span[1] - span[0]
        ranks = evaluation.retrieved[row].own_ranks
        holders = doc.candidates[held == length]
        best = int(np.argmax(held)) if len(held) else -1
        best_share = float(held[best] / length) if best >= 0 else 0.0
        best_chunk = int(doc.candidates[best]) if best >= 0 and held[best] > 0 else None
        if not len(holders):
            misses.append(Miss(row, j, cid, *span, CUT, best_chunk, best_share))
            continue
        reads = [_unit_read(doc, windows, cid, int(u), span) for u in holders]
        rank_of = [int(ranks[u]) if ranks is not None else None for u in holders]
        seeing = [i for i, r in enumerate(reads) if r == length]
        if seeing:
            pick = min(seeing, key=lambda i: (rank_of[i] or np.inf, i))
            reason, read_share = OUT_RANKED, None
        else:
            pick = max(range(len(holders)), key=lambda i: (reads[i], -(rank_of[i] or 0)))
            reason, read_share = TRUNCATED, reads[pick] / length
        rank = rank_of[pick]
        assert rank is None or rank == 0 or rank > k, "a holder in the top k covers the span"
        misses.append(
            Miss(row, j, cid, *span, reason, int(holders[pick]), 1.0, read_share, rank or None)
        )
    return misses


def _unit_read(
    doc: _Document, windows: _Windows, corpus_id: str, unit: int, span: tuple[int, int]
) -> int:
    """Characters of ``span`` the unit's embedded chunks let the model see: the span's
    length minus what lies inside a searched chunk of the unit past that chunk's window
    (and inside no other of its chunks' windows)."""
    members = doc.members[unit]
    inside = np.zeros(span[1] - span[0], dtype=bool)
    seen = np.zeros(span[1] - span[0], dtype=bool)
    for m in members:
        lo, hi = max(span[0], int(doc.spans[m, 0])), min(span[1], int(doc.spans[m, 1]))
        if hi <= lo:
            continue
        inside[lo - span[0] : hi - span[0]] = True
        read_hi = min(hi, windows.ends[(corpus_id, int(m))])
        if read_hi > lo:
            seen[lo - span[0] : read_hi - span[0]] = True
    return int((~inside | seen).sum())


def lenses(
    evaluations: Sequence[Evaluation],
    embedders: Mapping[str, Embedder] | None = None,
    top_k: int | None = None,
) -> list[Lens]:
    """The lens of each evaluation, each with the embedder of its model (``embedders``
    maps model names to embedders)."""
    found = embedders or {}
    return [lens(e, found.get(e.model or ""), top_k) for e in evaluations]


# ------------------------------------------------------------- what the pages draw


def chunk_colours(lens_: Lens, corpus_id: str, by: str = "retrieved") -> list[Any]:
    """What each chunk of a document is coloured by, in chunk order.

    ``by="retrieved"``: the number of questions that retrieved it (a heat scale).
    ``by="reason"``: the reason of the misses it stands in (a cut span's chunks, a
    truncated or out-ranked span's holder), the most frequent one, ties in
    :data:`REASONS` order; :data:`FOUND` for a chunk that returned gold text and stands
    in no miss; :data:`NO_GOLD` for the rest.
    """
    if by not in COLOURINGS:
        raise ValueError(f"colour chunks by one of: {', '.join(COLOURINGS)}; got {by!r}")
    if corpus_id not in lens_.retrieved:
        raise ValueError(f"the lens has no document {corpus_id!r}")
    if by == "retrieved":
        return [int(n) for n in lens_.retrieved[corpus_id]]
    spans = lens_.spans[corpus_id]
    tally = np.zeros((len(spans), len(REASONS)), dtype=np.int64)
    for miss in lens_.misses:
        if miss.corpus_id != corpus_id:
            continue
        column = REASONS.index(miss.reason)
        if miss.reason == CUT:
            gold = np.array([[miss.start, miss.end]], dtype=np.int64)
            tally[intersecting(spans, gold), column] += 1
        elif miss.chunk is not None:
            tally[miss.chunk, column] += 1
    out: list[Any] = []
    for row, found in zip(tally, lens_.hits[corpus_id], strict=True):
        if row.any():
            out.append(REASONS[int(np.argmax(row))])
        else:
            out.append(FOUND if found else NO_GOLD)
    return out


def question_marks(lens_: Lens, question: int) -> QuestionMarks:
    """The marks of the question at position ``question`` in the evaluation: its gold
    chunks, what it retrieved and its misses."""
    if not 0 <= question < len(lens_.marks):
        raise ValueError(f"no question {question}; the lens has {len(lens_.marks)}")
    return dataclasses.replace(lens_.marks[question], misses=tuple(lens_.question_misses(question)))


def nearest_chunk_similarity(questions: np.ndarray, chunks: np.ndarray) -> np.ndarray:
    """Each question vector's highest cosine similarity to any chunk vector: a low value
    marks a question with no chunk near it (on the map, a cluster far from the text)."""
    q = np.asarray(questions, dtype=np.float32)
    c = np.asarray(chunks, dtype=np.float32)
    if q.ndim != 2 or c.ndim != 2 or (len(q) and len(c) and q.shape[1] != c.shape[1]):
        raise ValueError(f"question vectors {q.shape} and chunk vectors {c.shape} do not match")
    if not len(q) or not len(c):
        return np.full(len(q), np.nan)

    def unit(x: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        return x / np.where(norms > 0, norms, 1)

    return (unit(q) @ unit(c).T).max(axis=1)


@dataclass(frozen=True, eq=False)
class LensMap:
    """Chunks and questions on one map.

    ``chunk_coords[i]`` is chunk ``i``'s point; ``question_coords[j]`` question ``j``'s,
    placed on the fitted map (never refitted); ``nearest[j]`` its highest cosine
    similarity to any chunk. ``projection`` can be saved
    (:func:`chunking.embedding.projection.save_projection`) and given back.
    """

    projection: Projection
    chunk_coords: np.ndarray
    question_coords: np.ndarray
    nearest: np.ndarray


def lens_map(
    chunks: Sequence[Chunk],
    questions: Sequence[str],
    embedder: Embedder,
    dims: int = 2,
    projection: Projection | None = None,
) -> LensMap:
    """The map of one document's ``chunks`` (the texts the model embeds for them,
    context included: pass an evaluation's ``chunks[corpus_id]`` to get its context)
    projected with the fixed seed, or on ``projection`` when one is given (a reloaded
    map: it must have been fitted on these very vectors), and the ``questions`` (their
    texts) embedded by the same model and placed on that map."""
    from ..embedding.projection import place, project

    if not chunks:
        raise ValueError("there is no chunk to map")
    vectors = embedder.embed([embedded_text(c) for c in chunks])
    asked = embedder.embed_queries(list(questions))
    fitted = projection if projection is not None else project(vectors, dims)
    placed = place(fitted, vectors, asked)
    return LensMap(fitted, fitted.coords, placed, nearest_chunk_similarity(asked, vectors))


def reasons_table(lenses_: Sequence[Lens]) -> pd.DataFrame:
    """One row per lens (configuration, model, technique): its missed gold spans per
    reason, the questions, and the share of chunks never retrieved."""
    import pandas as pd

    rows = []
    for one in lenses_:
        row: dict[str, Any] = {
            "configuration": one.label,
            "model": one.model,
            "technique": one.technique,
            "questions": one.questions,
        }
        row.update(one.counts if one.retrieval else dict.fromkeys(REASONS, float("nan")))
        row["never_retrieved_share"] = one.never_retrieved_share
        rows.append(row)
    return pd.DataFrame.from_records(
        rows,
        columns=[
            "configuration",
            "model",
            "technique",
            "questions",
            *REASONS,
            "never_retrieved_share",
        ],
    )


def reason_lines(lenses_: Sequence[Lens]) -> list[str]:
    """Compare's sums, one line per reason, configurations side by side:
    ``"cut by a boundary — recursive 400: 9 gold spans missed; semantic: 2"`` (what is
    counted are the questions' gold spans that were not retrieved). Lenses without
    retrieval are left out; two lenses of one configuration are told apart by model and
    technique."""
    shown = [one for one in lenses_ if one.retrieval]
    if not shown:
        return []
    labels = [one.label for one in shown]
    names = [
        label if labels.count(label) == 1 else f"{label} ({one.model}, {one.technique})"
        for label, one in zip(labels, shown, strict=True)
    ]
    lines = []
    for reason in REASONS:
        parts = []
        for number, (name, one) in enumerate(zip(names, shown, strict=True)):
            n = one.counts[reason]
            noun = (" gold span missed" if n == 1 else " gold spans missed") if number == 0 else ""
            parts.append(f"{name}: {n}{noun}")
        lines.append(f"{reason} — " + "; ".join(parts))
    return lines


def with_lens_columns(table: pd.DataFrame, lenses_: Sequence[Lens]) -> pd.DataFrame:
    """The results table (one row per evaluation, in the lenses' order) with the
    :data:`SUMMARY_COLUMNS` added."""
    if len(table) != len(lenses_):
        raise ValueError(f"{len(table)} result rows but {len(lenses_)} lenses")
    out = table.copy()
    summaries = [one.summary() for one in lenses_]
    for column in SUMMARY_COLUMNS:
        out[column] = [s[column] for s in summaries]
    return out


def display_columns(table: pd.DataFrame) -> dict[str, list[str]]:
    """The lens columns of a results table as people read them: one column per reason
    (missed gold spans) and ``never retrieved %``; none when the table has no lens
    columns or no retrieval."""
    columns = [REASON_COLUMNS[r] for r in REASONS]
    if any(c not in table for c in columns) or table[columns[0]].isna().all():
        return {}

    def count(value: Any) -> str:
        return "—" if value is None or value != value else f"{int(value)}"

    shown = {reason: [count(v) for v in table[REASON_COLUMNS[reason]]] for reason in REASONS}
    shown["never retrieved %"] = [
        "—" if v != v else f"{100 * v:.1f}" for v in table["never_retrieved_share"]
    ]
    return shown


def misses_records(
    evaluations: Sequence[Evaluation], lenses_: Sequence[Lens]
) -> list[dict[str, Any]]:
    """Every missed gold span of every lens as a JSON-ready record: the configuration,
    model and technique, the question, the span, the reason and its numbers."""
    if len(evaluations) != len(lenses_):
        raise ValueError(f"{len(evaluations)} evaluations but {len(lenses_)} lenses")
    records = []
    for evaluation, one in zip(evaluations, lenses_, strict=True):
        for miss in one.misses:
            question = evaluation.questions[miss.question]
            records.append(
                {
                    "config": one.label,
                    "model": one.model,
                    "technique": one.technique,
                    "question_index": question.index,
                    "corpus_id": miss.corpus_id,
                    "question": question.text,
                    "reference": miss.reference,
                    "start": miss.start,
                    "end": miss.end,
                    "reason": miss.reason,
                    "chunk": miss.chunk,
                    "best_share": round(miss.best_share, 4),
                    "read_share": None if miss.read_share is None else round(miss.read_share, 4),
                    "rank": miss.rank,
                    "detail": miss.describe(),
                }
            )
    return records
