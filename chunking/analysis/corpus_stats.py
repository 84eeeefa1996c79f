"""One configuration over a whole corpus, and several compared (UI-free).

The app's Corpus page reads a corpus once (:func:`read_corpus`: every member becomes a
document, or the reason it cannot be read), then asks, for each configuration, for one
:class:`DocumentStats` per document and their corpus-wide :class:`CorpusStats`
(:func:`corpus_stats`). Chunks are not kept: a 50 MB corpus cut several ways would not
fit in memory, and sizes and warnings are all the page shows.

The warnings are :mod:`chunking.report`'s, counted the way Compare counts them (chunks
affected, summed over the kinds). Two of them cost more than chunking itself, so they
are computed only where they can fire:

- cuts inside a sentence: the sentences of the paragraphs that hold a chunk end
  (:func:`sentences_near`), not the whole document's;
- chunks over the embedding model's window: only when asked for, from the word-piece
  starts of the whole document (:func:`~chunking.report.wordpiece_starts`), which depend
  on the text alone, so a caller can compute them once per document and reuse them for
  every configuration.

Nothing is cached here: callers decide that.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..config import Config
from ..core import run
from ..documents.corpus import Member, doc_id
from ..documents.io import MAX_BYTES_DEFAULT, Document, DocumentError, read_bytes
from ..engine.spans import paragraph_spans, sentence_spans
from ..model import Progress
from .report import (
    SizeSummary,
    describe,
    find_warnings,
    model_max_tokens,
    truncated_chunks,
    warning_count,
)

#: Called after each document: (documents done, documents in all, the document's name).

#: The word-piece starts of a document's text (a cache, typically), or None without the
#: bundled tokenizer.
PieceStarts = Callable[["CorpusDocument"], "np.ndarray | None"]


# ------------------------------------------------------------------------ reading


@dataclass(frozen=True)
class CorpusDocument:
    """One member of a corpus as read: its document, or why it could not be read."""

    #: The member's path in the corpus ("docs/a.md"), which names it in every table.
    name: str
    #: Content hash of the raw bytes (:func:`chunking.corpus.doc_id`).
    doc_id: str
    bytes: int
    document: Document | None
    error: str | None = None


@dataclass(frozen=True)
class Corpus:
    """The documents of one corpus, in the order given, and the hash that keys every
    cache of results computed from them."""

    documents: tuple[CorpusDocument, ...]
    key: str = field(init=False)

    def __post_init__(self) -> None:
        # Names count too: the same bytes under another name are another row.
        parts = (f"{d.name}\0{d.doc_id}" for d in self.documents)
        object.__setattr__(self, "key", doc_id("\n".join(parts).encode("utf-8")))

    @property
    def bytes(self) -> int:
        return sum(d.bytes for d in self.documents)

    @property
    def characters(self) -> int:
        return sum(len(d.document.text) for d in self.documents if d.document is not None)

    @property
    def unreadable(self) -> int:
        return sum(1 for d in self.documents if d.document is None)


def read_member(member: Member, max_bytes: int = MAX_BYTES_DEFAULT) -> CorpusDocument:
    """Read one member; a binary, undecodable or unsupported file becomes a document
    with its reason in :attr:`CorpusDocument.error` (never an exception)."""
    data = member.data
    try:
        document: Document | None = read_bytes(data, member.name, max_bytes=max_bytes)
        error = None
    except DocumentError as exc:
        document, error = None, str(exc)
    return CorpusDocument(member.name, doc_id(data), len(data), document, error)


def read_corpus(
    members: Iterable[Member],
    max_bytes: int = MAX_BYTES_DEFAULT,
    progress: Progress | None = None,
    total: int | None = None,
) -> Corpus:
    """Read every member (:func:`read_member`); ``progress`` is told after each one
    (``total`` is what it is told the count is, when known beforehand)."""
    documents: list[CorpusDocument] = []
    for member in members:
        documents.append(read_member(member, max_bytes))
        if progress is not None:
            progress(len(documents), max(total or 0, len(documents)), member.name)
    return Corpus(tuple(documents))


# ---------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class DocumentStats:
    """What one configuration does to one document: a row of the corpus table."""

    name: str
    kind: str | None
    encoding: str | None
    characters: int
    #: Every chunk's size in the configuration's unit, in chunk order.
    sizes: tuple[int, ...]
    #: Chunks affected by a warning, summed over the kinds (as Compare counts them).
    warnings: int
    #: The warnings' titles ("3 tiny chunks (under 100 chars)").
    warning_titles: tuple[str, ...]
    #: Chunks over the embedding model's window; None when not checked.
    over_window: int | None
    #: Why the document could not be read or cut; None when it was.
    error: str | None

    @property
    def chunks(self) -> int:
        return len(self.sizes)

    def to_row(self) -> dict[str, Any]:
        """The table row: sizes summarised (None where there are no chunks)."""
        sizes = self.sizes
        return {
            "document": self.name,
            "type": self.kind,
            "encoding": self.encoding,
            "characters": self.characters,
            "chunks": self.chunks,
            "mean": round(sum(sizes) / len(sizes), 1) if sizes else None,
            "min": min(sizes) if sizes else None,
            "max": max(sizes) if sizes else None,
            "warnings": self.warnings,
            "over window": self.over_window,
            "error": self.error or "",
            "warning kinds": "; ".join(self.warning_titles),
        }


#: Characters of context on each side of a chunk end that the sentence segmenter reads.
SENTENCE_CONTEXT = 64


def sentences_near(
    text: str, offsets: Iterable[int], context: int = SENTENCE_CONTEXT
) -> list[tuple[int, int]]:
    """Sentence spans around ``offsets``: enough for
    :func:`~chunking.report.mid_sentence_cuts` to judge a chunk end at one of them.

    Segmenting a whole corpus costs more than chunking it, so only ``context``
    characters on each side of an offset are segmented (windows that overlap are
    merged; a window never crosses a paragraph, which no sentence crosses either).
    Whether an offset is inside a sentence depends on the sentence boundaries next to
    it, which the segmenter finds from the words around them: the verdict is the same
    as with :func:`~chunking.engine.spans.sentence_spans` of the whole text (the tests
    check it on the samples), and a sentence longer than the window still holds it.
    """
    paragraphs = paragraph_spans(text)
    starts = [start for start, _ in paragraphs]
    windows: list[list[int]] = []
    for offset in sorted(set(offsets)):
        i = bisect.bisect_right(starts, offset) - 1
        if i < 0 or not paragraphs[i][0] < offset < paragraphs[i][1]:
            continue  # between paragraphs: never inside a sentence
        a, b = max(paragraphs[i][0], offset - context), min(paragraphs[i][1], offset + context)
        if windows and windows[-1][1] > a:
            windows[-1][1] = b
        else:
            windows.append([a, b])
    return [(a + x, a + y) for a, b in windows for x, y in sentence_spans(text[a:b])]


def _failed(doc: CorpusDocument, error: str) -> DocumentStats:
    document = doc.document
    return DocumentStats(
        name=doc.name,
        kind=document.kind if document else None,
        encoding=document.encoding if document else None,
        characters=len(document.text) if document else 0,
        sizes=(),
        warnings=0,
        warning_titles=(),
        over_window=None,
        error=error,
    )


def document_stats(
    doc: CorpusDocument, config: Config, piece_starts: PieceStarts | None = None
) -> DocumentStats:
    """Chunk one document with ``config`` and measure it; a document that cannot be
    read or cut gives a row with the reason. With ``piece_starts``, chunks over the
    embedding model's window are counted (and warned about) too."""
    document = doc.document
    if document is None:
        return _failed(doc, doc.error or "not read")
    text = document.text
    try:
        chunks = run(text, config)
    except Exception as exc:  # one document's failure must not stop the corpus
        return _failed(doc, f"{config.spec.label} cannot cut it: {exc}")
    max_tokens = model_max_tokens()
    truncated = (
        None
        if piece_starts is None
        else truncated_chunks(text, chunks, max_tokens, piece_starts(doc))
    )
    warnings = find_warnings(
        text,
        chunks,
        limit=config.limit,
        unit=config.unit,
        sentences=sentences_near(text, (c.end for c in chunks)),
        truncated=truncated,
        max_tokens=max_tokens,
    )
    return DocumentStats(
        name=doc.name,
        kind=document.kind,
        encoding=document.encoding,
        characters=len(text),
        sizes=tuple(c.size for c in chunks),
        warnings=warning_count(warnings),
        warning_titles=tuple(w.title for w in warnings),
        over_window=None if truncated is None else len(truncated),
        error=None,
    )


@dataclass(frozen=True)
class CorpusStats:
    """One configuration over a corpus: a row per document and the totals."""

    #: The configuration, as :meth:`Config.to_dict` gives it.
    config: dict[str, Any]
    unit: str
    limit: int | None
    documents: tuple[DocumentStats, ...]
    #: The model's window in word pieces when it was checked, else None.
    window: int | None

    @cached_property
    def sizes(self) -> np.ndarray:
        """Every chunk's size in the configuration's unit, all documents together."""
        return np.fromiter(
            (s for d in self.documents for s in d.sizes), dtype=np.int64, count=self.chunks
        )

    @property
    def chunks(self) -> int:
        return sum(d.chunks for d in self.documents)

    @property
    def failed(self) -> int:
        return sum(1 for d in self.documents if d.error is not None)

    @property
    def warnings(self) -> int:
        return sum(d.warnings for d in self.documents)

    @property
    def summary(self) -> SizeSummary:
        sizes = self.sizes
        if not len(sizes):
            return describe([], self.unit)
        return SizeSummary(
            self.unit,
            len(sizes),
            float(sizes.mean()),
            float(sizes.std()),
            int(sizes.min()),
            int(sizes.max()),
        )

    @property
    def over_window(self) -> int | None:
        if self.window is None:
            return None
        return sum(d.over_window or 0 for d in self.documents)

    @property
    def share_over_window(self) -> float | None:
        """Share of all chunks over the model's window (None when not checked)."""
        over = self.over_window
        return None if over is None else over / max(self.chunks, 1)

    def percentile(self, q: float) -> float | None:
        """The ``q``-th percentile of all chunk sizes; None without chunks."""
        return float(np.percentile(self.sizes, q)) if self.chunks else None


def corpus_stats(
    corpus: Corpus,
    config: Config,
    piece_starts: PieceStarts | None = None,
    progress: Progress | None = None,
) -> CorpusStats:
    """:func:`document_stats` for every document, in order; ``progress`` is told after
    each one."""
    rows: list[DocumentStats] = []
    total = len(corpus.documents)
    for doc in corpus.documents:
        rows.append(document_stats(doc, config, piece_starts))
        if progress is not None:
            progress(len(rows), total, doc.name)
    return CorpusStats(
        config=config.to_dict(),
        unit=config.unit,
        limit=config.limit,
        documents=tuple(rows),
        window=None if piece_starts is None else model_max_tokens(),
    )


def most_warnings(stats: CorpusStats, count: int = 5) -> list[DocumentStats]:
    """The documents with the most warnings, most first (ties by name); none without."""
    warned = [d for d in stats.documents if d.warnings]
    return sorted(warned, key=lambda d: (-d.warnings, d.name))[:count]


def comparison_rows(compared: Mapping[str, CorpusStats]) -> list[dict[str, Any]]:
    """One row per configuration (keyed by its label): documents, chunk counts, sizes in
    its own unit, share over the model's window, warnings."""
    rows = []
    for label, stats in compared.items():
        summary = stats.summary
        share = stats.share_over_window
        rows.append(
            {
                "configuration": label,
                "unit": stats.unit,
                "limit": stats.limit,
                "documents": len(stats.documents) - stats.failed,
                "failed": stats.failed,
                "chunks": stats.chunks,
                "mean": round(summary.mean, 1),
                "std": round(summary.std, 1),
                "min": summary.min,
                "median": stats.percentile(50),
                "p90": stats.percentile(90),
                "max": summary.max,
                "over window": None if share is None else round(100 * share, 2),
                "warnings": stats.warnings,
            }
        )
    return rows


def chunks_per_document(compared: Mapping[str, CorpusStats]) -> dict[str, list[Any]]:
    """Columns of a documents x configurations table of chunk counts (None where the
    document failed), documents in corpus order."""
    columns: dict[str, list[Any]] = {}
    for label, stats in compared.items():
        columns.setdefault("document", [d.name for d in stats.documents])
        columns[label] = [None if d.error else d.chunks for d in stats.documents]
    return columns
