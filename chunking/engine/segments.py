"""Packing whole segments (sentences, paragraphs, chat messages) with the packing engine.

:func:`pack_spans` measures the segments, gives every segment bigger than the limit on
its own to a ``split_oversized`` function (by default the recursive splitter), packs the
runs of segments between them with :func:`~chunking.engine.packing.pack_runs` (verifying
real sizes) and labels the pieces.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ..model import Piece
from ..units import Measures
from .packing import Describe, RunSizes, Span, SplitOversized, check_spans, pack_runs
from .recursive import recursive_split


def pack_spans(
    text: str,
    spans: Sequence[Span],
    sizer: Measures,
    size: int,
    *,
    kind: str,
    overlap_segments: int | None = 0,
    overlap_size: int | None = None,
    split_oversized: SplitOversized | None = None,
    describe: Describe | None = None,
) -> Iterator[Piece]:
    """Pack consecutive ``spans`` of ``text`` into pieces of at most ``size`` units.

    Args:
        text: the whole document; spans are offsets into it.
        spans: the segments, in source order and not overlapping.
        sizer: measures the chunk text in the configured unit.
        size: the size limit; it holds exactly on every piece's text, except for a
            piece flagged ``"over limit: ..."`` by the splitter of an oversized segment.
        kind: what a segment is, singular (``"sentence"``). A packed piece gets
            ``boundary == kind`` and a count under ``kind + "s"`` (``"sentences": 3``).
        overlap_segments: repeat at most this many trailing segments of a chunk at the
            start of the next one; ``None`` for no limit by count.
        overlap_size: repeat at most this many units (measured on the repeated text);
            ``None`` for no limit by size. With both limits, both hold.
        split_oversized: cuts a segment bigger than ``size``; default
            :func:`~chunking.engine.recursive.recursive_split`. Its pieces are emitted
            as they are, with ``split_from == kind`` added; no overlap is carried into
            or out of them.
        describe: extra metadata for the segments ``first..stop-1`` of a piece (for
            the pieces of an oversized segment, that one segment). On a packed piece its
            keys override the packer's; on a piece of an oversized segment, the metadata
            of ``split_oversized`` and ``split_from`` override its keys.

    Yields pieces with strictly increasing starts. A packed piece's metadata also has
    ``repeated``: how many of its leading segments the previous piece already held.

    >>> from chunking.units import get_sizer
    >>> text = "One. Two. Three."
    >>> spans = [(0, 4), (5, 9), (10, 16)]
    >>> [text[p.start:p.end] for p in pack_spans(text, spans, get_sizer("chars"), 9,
    ...                                          kind="sentence")]
    ['One. Two.', 'Three.']
    """
    if overlap_segments is not None and overlap_segments < 0:
        raise ValueError(f"overlap_segments must be 0 or more; got {overlap_segments}")
    if overlap_size is not None and overlap_size < 0:
        raise ValueError(f"overlap_size must be 0 or more; got {overlap_size}")
    spans = list(spans)
    check_spans(spans, len(text))
    if split_oversized is None:
        split_oversized = recursive_split(text, sizer, size)
    return _packed_pieces(
        text,
        spans,
        RunSizes.of(text, spans, sizer),
        size,
        kind,
        split_oversized,
        describe,
        overlap_segments,
        overlap_size,
    )


def _packed_pieces(
    text: str,
    spans: list[Span],
    sizes: RunSizes,
    limit: int,
    kind: str,
    split: SplitOversized,
    describe: Describe | None,
    overlap_segments: int | None,
    overlap_size: int | None,
) -> Iterator[Piece]:
    """The pieces of :func:`pack_spans`: runs of fitting segments packed, the others
    split."""
    count_key = kind + "s"
    alone = [k for k in range(len(spans)) if sizes.measure(k, k) > limit]
    previous = -1
    for i, j, real in pack_runs(
        sizes, limit, overlap_size=overlap_size, overlap_count=overlap_segments, alone=alone
    ):
        if real > limit:  # an oversized segment
            extra = dict(describe(i, i + 1)) if describe is not None else {}
            for piece in split(*spans[i]):
                yield piece._replace(metadata={**extra, "split_from": kind, **piece.metadata})
            continue
        meta: dict[str, Any] = {
            "boundary": kind,
            count_key: j - i + 1,
            "repeated": max(previous - i + 1, 0),
        }
        if describe is not None:
            meta.update(describe(i, j + 1))
        previous = j
        yield Piece(spans[i][0], spans[j][1], meta, real)
