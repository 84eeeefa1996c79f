"""Sentence packing and paragraph packing.

Both keep their units whole: a chunk is as many consecutive sentences (or paragraphs)
as fit in the size limit. Only a unit that is bigger than the limit on its own is cut:
a long sentence by the recursive splitter, a long paragraph first between its sentences
and then, for a sentence still too long, recursively. Such chunks carry
``metadata["split_from"]`` and a ``boundary`` that says where they were cut.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from .. import params
from ..engine.packing import Describe, SplitOversized
from ..engine.recursive import recursive_split
from ..engine.segments import pack_spans
from ..engine.spans import document_sentences, paragraph_spans, sentence_spans
from ..model import Piece
from ..params import Strategy
from ..units import Sizer


def split_by_sentences(text: str, sizer: Sizer, size: int) -> SplitOversized:
    """A ``split_oversized`` function for paragraphs: pack the paragraph's sentences.

    A sentence too long on its own is cut recursively (``split_from == "sentence"``).
    """
    recursive = recursive_split(text, sizer, size)

    def split(lo: int, hi: int) -> Iterator[Piece]:
        spans = [(lo + a, lo + b) for a, b in sentence_spans(text[lo:hi])]
        return pack_spans(text, spans, sizer, size, kind="sentence", split_oversized=recursive)

    return split


def paragraph_pieces(
    text: str, sizer: Sizer, size: int, overlap: int = 0, describe: Describe | None = None
) -> Iterator[Piece]:
    """Whole paragraphs packed up to ``size``; ``overlap`` counts paragraphs."""
    return pack_spans(
        text,
        paragraph_spans(text),
        sizer,
        size,
        kind="paragraph",
        overlap_segments=overlap,
        split_oversized=split_by_sentences(text, sizer, size),
        describe=describe,
    )


def sentence_pieces(text: str, sizer: Sizer, size: int, overlap: int = 0) -> Iterator[Piece]:
    """Whole sentences packed up to ``size``; ``overlap`` counts sentences. The
    sentences are the document's shared ones (:func:`document_sentences`): a document
    already reported on, or cut at another size, is not segmented again."""
    spans = document_sentences(text)
    return pack_spans(text, spans, sizer, size, kind="sentence", overlap_segments=overlap)


#: ``pieces(text, sizer, size, overlap)`` of a packing strategy.
Pieces = Callable[[str, Sizer, int, int], Iterable[Piece]]


def packing_strategy(
    name: str,
    label: str,
    description: str,
    pieces: Pieces,
    *,
    size: int,
    unit: str,
    what: str,
    **overlap_help: str,
) -> Strategy:
    """A strategy that packs whole segments (``what``, plural) with ``pieces``: a size
    limit, an overlap counted in segments (``overlap_help``: the ``purpose`` and ``note``
    of its help) and a unit."""

    def split(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterable[Piece]:
        return pieces(text, sizer, p["size"], p["overlap"])

    return Strategy(
        name,
        label=label,
        description=description,
        params=(
            params.size_param(size),
            params.segment_overlap_param(what, **overlap_help),
            params.unit_param(unit),
        ),
        checks=(params.overlap_count_below_size(what),),
        split=split,
    )


SENTENCE = packing_strategy(
    "sentence",
    "Sentence packing",
    "Whole sentences (found by Bling Fire) packed into each chunk up to the size limit; a "
    "chunk never ends inside a sentence unless that sentence alone is over the limit. "
    "Overlap repeats the last sentences of a chunk at the start of the next.",
    sentence_pieces,
    size=500,
    unit="chars",
    what="sentences",
    note=", so that every chunk brings at least one new sentence",
)


PARAGRAPH = packing_strategy(
    "paragraph",
    "Paragraph packing",
    "Whole paragraphs (text between blank lines) packed into each chunk up to the size "
    "limit. A paragraph over the limit is cut between its sentences, and a sentence still "
    "over the limit recursively (boundary 'sentence' or 'size').",
    paragraph_pieces,
    size=600,
    unit="chars",
    what="paragraphs",
)
