"""Packing whole segments (sentences, paragraphs, chat messages) into chunks.

Strategies that respect a natural unit of text all do the same thing: take the units in
source order and put as many consecutive ones as fit into each chunk.
:func:`pack_spans` is that shared step. Its input is a list of *segments*: ``(start,
end)`` spans of the source in order, not overlapping, with only whitespace or
separators between them. Each chunk is the source from its first segment's start to its
last segment's end, so ``text[chunk.start:chunk.end]`` includes whatever lay between
the segments.

The size limit holds on the chunk's own text. For characters the size of a run of
segments is simply ``end - start``. For words and tokens, the sum of the segments'
sizes is only an estimate (a token can straddle two sentences; a newline between them
is a token of its own), so the packer grows a chunk on the estimate, measures the real
text, and backs off or grows further until the real size is the largest that fits.

A segment that is bigger than the limit on its own is never dropped: it becomes chunks
of its own, cut by a ``split_oversized`` function (by default the recursive splitter,
see :func:`recursive_split`), and those chunks say so in ``metadata["split_from"]``.

Overlap repeats the last segments of one chunk at the start of the next. It is capped
by a number of segments, by a size in units, or both; it is also reduced as far as
needed so that every chunk brings at least one new segment. Chunk starts therefore
strictly increase: overlap can neither loop forever nor repeat a chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import pairwise
from typing import Any

from ..model import Piece
from ..units import Sizer
from .recursive import RecursiveSplitter, recursive_pieces

Span = tuple[int, int]
#: ``describe(first, stop)``: extra metadata for a chunk made of segments first..stop-1.
Describe = Callable[[int, int], Mapping[str, Any]]
#: ``split(start, end)``: pieces of at most the size limit covering ``text[start:end]``.
SplitOversized = Callable[[int, int], Iterable[Piece]]


def split_span(
    text: str, sizer: Sizer, splitter: RecursiveSplitter, lo: int, hi: int
) -> Iterator[Piece]:
    """Cut ``text[lo:hi]`` with ``splitter`` so that every piece fits ``splitter.size``."""
    return recursive_pieces(text, sizer, splitter, lo, hi)


def recursive_split(text: str, sizer: Sizer, size: int) -> SplitOversized:
    """A ``split_oversized`` function: the recursive splitter, labelled ``"size"``.

    The pieces carry ``boundary == "size"``: they end where they do because the segment
    they come from was too big, not at a natural boundary.
    """
    splitter = RecursiveSplitter(text, sizer, size)

    def split(lo: int, hi: int) -> Iterator[Piece]:
        for piece in split_span(text, sizer, splitter, lo, hi):
            meta = {**piece.metadata, "boundary": "size"}
            meta.pop("separator", None)
            yield piece._replace(metadata=meta)

    return split


def pack_spans(
    text: str,
    spans: Sequence[Span],
    sizer: Sizer,
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
            :func:`recursive_split`. Its pieces are emitted as they are, with
            ``split_from == kind`` added; no overlap is carried into or out of them.
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
    packer = _Packer(text, list(spans), sizer, size, overlap_segments, overlap_size)
    split = split_oversized or recursive_split(text, sizer, size)
    return packer.pieces(kind, split, describe)


class _Packer:
    """The packing loop of :func:`pack_spans`, over segment indices."""

    def __init__(
        self,
        text: str,
        spans: list[Span],
        sizer: Sizer,
        size: int,
        overlap_segments: int | None,
        overlap_size: int | None,
    ) -> None:
        _check_spans(spans, len(text))
        self.text = text
        self.spans = spans
        self.sizer = sizer
        self.size = size
        self.overlap_segments = overlap_segments
        self.overlap_size = overlap_size
        #: For characters the estimate below is the exact size.
        self.exact = sizer.name == "chars"
        self.sizes = [self.measure(i, i) for i in range(len(spans))]
        self.oversized = [n > size for n in self.sizes]
        self.gaps = [self._gap_estimate(a[1], b[0]) for a, b in pairwise(spans)]

    # -- sizes -------------------------------------------------------------------------

    def measure(self, first: int, last: int) -> int:
        """The real size of segments ``first..last`` (inclusive) with what lies between."""
        start, end = self.spans[first][0], self.spans[last][1]
        if self.exact:
            return end - start
        return self.sizer.size(self.text[start:end])

    def _gap_estimate(self, start: int, end: int) -> int:
        """What the text between two segments adds to a chunk, roughly.

        Plain spaces usually merge into the next word or token, so they count 0;
        anything else (newlines, tabs, separators) is measured on its own.
        """
        if self.exact:
            return end - start
        gap = self.text[start:end]
        return 0 if not gap.strip(" ") else self.sizer.size(gap)

    # -- the loop ----------------------------------------------------------------------

    def pieces(
        self, kind: str, split: SplitOversized, describe: Describe | None
    ) -> Iterator[Piece]:
        count_key = kind + "s"
        n = len(self.spans)
        i = 0
        while i < n:
            if self.oversized[i]:
                yield from self._split(i, kind, split, describe)
                i += 1
                continue
            floor, floor_size, repeated = i, self.sizes[i], 0
            while True:  # one run of packed chunks, chained by overlap
                j, real = self._extend(i, floor, floor_size)
                meta: dict[str, Any] = {
                    "boundary": kind,
                    count_key: j - i + 1,
                    "repeated": repeated,
                }
                if describe is not None:
                    meta.update(describe(i, j + 1))
                start, end = self.spans[i][0], self.spans[j][1]
                yield Piece(start, end, meta, real)
                if j + 1 >= n or self.oversized[j + 1]:
                    i = j + 1
                    break
                k, floor_size = self._overlap_start(i, j)
                i, floor, repeated = k, j + 1, j + 1 - k

    def _split(
        self, i: int, kind: str, split: SplitOversized, describe: Describe | None
    ) -> Iterator[Piece]:
        """The pieces of oversized segment ``i``."""
        extra = dict(describe(i, i + 1)) if describe is not None else {}
        lo, hi = self.spans[i]
        for piece in split(lo, hi):
            yield piece._replace(metadata={**extra, "split_from": kind, **piece.metadata})

    def _extend(self, i: int, floor: int, floor_size: int) -> tuple[int, int]:
        """The last segment and real size of the largest chunk from segment ``i``.

        ``floor`` is a last segment already known to fit, with its real size.
        """
        n = len(self.spans)
        j, estimate = floor, floor_size
        while j + 1 < n and not self.oversized[j + 1]:
            grown = estimate + self.gaps[j] + self.sizes[j + 1]
            if grown > self.size:
                break
            j, estimate = j + 1, grown
        if self.exact:
            return j, estimate
        real = self.measure(i, j) if j > floor else floor_size
        if real > self.size:
            while real > self.size:  # stops at floor at the latest
                j -= 1
                real = self.measure(i, j) if j > floor else floor_size
            return j, real
        while j + 1 < n and not self.oversized[j + 1]:  # the estimate may be high
            grown = self.measure(i, j + 1)
            if grown > self.size:
                break
            j, real = j + 1, grown
        return j, real

    def _overlap_start(self, i: int, j: int) -> tuple[int, int]:
        """Where the chunk after segments ``i..j`` starts, and the real size of that
        start up to and including the new segment ``j + 1``.

        Walks back from ``j + 1`` within both overlap limits, but never to ``i`` (the
        next chunk must start later), then drops repeated segments from the front until
        the new segment fits beside them.
        """
        new = j + 1
        lowest = i + 1
        if self.overlap_segments is not None:
            lowest = max(lowest, new - self.overlap_segments)
        k = new
        while k > lowest and (
            self.overlap_size is None or self.measure(k - 1, j) <= self.overlap_size
        ):
            k -= 1
        real = self.measure(k, new) if k < new else self.sizes[new]
        while real > self.size:  # stops at k == new: that segment fits on its own
            k += 1
            real = self.measure(k, new) if k < new else self.sizes[new]
        return k, real


def _check_spans(spans: list[Span], length: int) -> None:
    previous_end = 0
    for start, end in spans:
        if not previous_end <= start < end <= length:
            raise ValueError(
                f"segments must be non-empty spans of the text, in order and not "
                f"overlapping; got ({start}, {end}) after one ending at {previous_end}"
            )
        previous_end = end
