"""Sentence packing and paragraph packing.

Both keep their units whole: a chunk is as many consecutive sentences (or paragraphs)
as fit in the size limit. Only a unit that is bigger than the limit on its own is cut:
a long sentence by the recursive splitter, a long paragraph first between its sentences
and then, for a sentence still too long, recursively. Such chunks carry
``metadata["split_from"]`` and a ``boundary`` that says where they were cut.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..engine.packing import Describe, SplitOversized, pack_spans, recursive_split
from ..engine.spans import paragraph_spans, sentence_spans
from ..model import Piece
from ..params import (
    Strategy,
    overlap_count_below_size,
    segment_overlap_param,
    size_param,
    unit_param,
)
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


def _sentence(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    return pack_spans(
        text, sentence_spans(text), sizer, p["size"], kind="sentence", overlap_segments=p["overlap"]
    )


SENTENCE = Strategy(
    "sentence",
    label="Sentence packing",
    description="Whole sentences (found by Bling Fire) packed into each chunk up to the "
    "size limit; a chunk never ends inside a sentence unless that sentence alone is over "
    "the limit. Overlap repeats the last sentences of a chunk at the start of the next.",
    params=(
        size_param(500),
        segment_overlap_param(
            "sentences", note=", so that every chunk brings at least one new sentence"
        ),
        unit_param("chars"),
    ),
    checks=(overlap_count_below_size("sentences"),),
    split=_sentence,
)


def _paragraph(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    return paragraph_pieces(text, sizer, p["size"], p["overlap"])


PARAGRAPH = Strategy(
    "paragraph",
    label="Paragraph packing",
    description="Whole paragraphs (text between blank lines) packed into each chunk up to "
    "the size limit. A paragraph over the limit is cut between its sentences, and a "
    "sentence still over the limit recursively (boundary 'sentence' or 'size').",
    params=(
        size_param(1000),
        segment_overlap_param("paragraphs"),
        unit_param("chars"),
    ),
    checks=(overlap_count_below_size("paragraphs"),),
    split=_paragraph,
)
