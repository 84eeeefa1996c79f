"""The packing engine: consecutive segments into chunks of at most a size, with overlap.

Every strategy that keeps some unit of text whole (LangChain-style merging of split
pieces, sentences, paragraphs, chat messages, Markdown/HTML/code parts, semantic
sentence ranges) packs the same way, and does it here.

**The model.** The input is a list of *segments*: ``(start, end)`` spans of the source
in order, not overlapping. A *run* ``i..j`` is segments ``i`` to ``j`` (inclusive) and
what lies between them; as a chunk it is ``text[start_i:end_j]``. :class:`RunSizes`
knows the size of a run two ways:

- ``estimate(i, j)``: the segments' sizes plus the *joins* between neighbours, added
  up by prefix sums (constant time). For an additive unit (characters) it comes from
  offsets and is exact; for words it is exact too (see ``Sizer.join``); for tokens a
  token can straddle a join, so it is only close.
- ``measure(i, j)``: the real size of the run's text, measured once and cached (the
  estimate itself when that is exact).

**The loop.** :func:`pack_runs` is the one greedy loop: from the first segment, grow a
chunk while the next segment fits, emit it, and start the next chunk with the longest
tail of it that the overlap allows (bounded by a size and/or a count of segments) and
that still leaves room for the next segment. Each chunk brings at least one new
segment, so chunk starts strictly increase: overlap can neither loop forever nor repeat
a chunk. It runs in one of two modes:

- *trust* (``verify=False``): the estimate is the size. This is LangChain's merge: its
  sizes are the sum of piece sizes plus separator lengths, and the recursive strategy
  re-measures and re-cuts its chunks afterwards (:mod:`chunking.engine.recursive`).
- *verify* (``verify=True``): a chunk grows on the estimate, then its real text is
  measured and it backs off, or grows further, until the real size is the largest that
  fits. The limit holds on every chunk's own text. For a unit whose estimate is exact
  both modes are the same, and the loop never slices text.

:func:`chunking.engine.segments.pack_spans` is the engine as the sentence, paragraph and
conversation strategies use it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import accumulate, chain, pairwise, repeat
from operator import add, itemgetter, sub
from typing import Any

from ..model import Piece
from ..units import Measures, as_sizer

Span = tuple[int, int]
#: ``describe(first, stop)``: extra metadata for a chunk made of segments first..stop-1.
Describe = Callable[[int, int], Mapping[str, Any]]
#: ``split(start, end)``: pieces of at most the size limit covering ``text[start:end]``.
SplitOversized = Callable[[int, int], Iterable[Piece]]
#: ``measure(start, end)``: the real size of ``text[start:end]``.
Measure = Callable[[int, int], int]


class RunSizes:
    """Sizes of runs of consecutive segments (see the module docstring).

    ``first[k]`` and ``last[k]`` are running counts at the start and end of segment
    ``k``, so that ``estimate(i, j) == last[j] - first[i]``. ``measure_text(start, end)``
    measures real text; ``None`` means the estimate is exact.
    """

    __slots__ = (
        "_measure_text",
        "_measured",
        "ends",
        "exact",
        "first",
        "join_error",
        "last",
        "monotone",
        "starts",
    )

    def __init__(
        self,
        starts: Sequence[int],
        ends: Sequence[int],
        first: Sequence[int],
        last: Sequence[int],
        measure_text: Measure | None = None,
        join_error: int | None = None,
        monotone: bool = False,
    ) -> None:
        self.starts, self.ends = starts, ends
        self.first, self.last = first, last
        self._measure_text = measure_text
        self.exact = measure_text is None
        self.join_error = join_error
        #: ``last`` never decreases (no join is negative), so the packing loop may find
        #: how far a chunk grows by bisection instead of segment by segment.
        self.monotone = monotone
        self._measured: dict[tuple[int, int], int] | None = None  # made when first needed

    def __len__(self) -> int:
        return len(self.last)

    @classmethod
    def from_sizes(
        cls,
        spans: Sequence[Span],
        sizes: Sequence[int],
        joins: int | Sequence[int] = 0,
        measure_text: Measure | None = None,
        join_error: int | None = None,
    ) -> RunSizes:
        """Run sizes from each segment's size and each join's (one number for all)."""
        starts = list(map(itemgetter(0), spans))
        ends = list(map(itemgetter(1), spans))
        return cls.from_bounds(starts, ends, sizes, joins, measure_text, join_error)

    @classmethod
    def from_bounds(
        cls,
        starts: list[int],
        ends: list[int],
        sizes: Sequence[int],
        joins: int | Sequence[int] = 0,
        measure_text: Measure | None = None,
        join_error: int | None = None,
    ) -> RunSizes:
        """:meth:`from_sizes` with the segments' starts and ends as two lists."""
        monotone = joins >= 0 if isinstance(joins, int) else min(joins, default=0) >= 0
        if not sizes:
            return cls(starts, ends, [], [], measure_text, join_error, monotone)
        if joins == 0:  # the common case, kept cheap for LangChain's merge
            last = list(accumulate(sizes))
            return cls(starts, ends, [0, *last[:-1]], last, measure_text, join_error, monotone)
        gaps = repeat(joins, len(sizes) - 1) if isinstance(joins, int) else joins
        last = list(accumulate(chain(sizes[:1], map(add, gaps, sizes[1:]))))
        first = list(map(sub, last, sizes))
        return cls(starts, ends, first, last, measure_text, join_error, monotone)

    @classmethod
    def of(
        cls, text: str, spans: Sequence[Span], sizer: Measures, measure_text: Measure | None = None
    ) -> RunSizes:
        """Run sizes of ``spans`` of ``text``, measured with ``sizer``.

        ``measure_text`` may replace the sizer for real sizes (a caller's cache).
        """
        unit = as_sizer(sizer)
        starts = [s[0] for s in spans]
        ends = [s[1] for s in spans]
        bounds = [p for span in spans for p in span]
        counts = unit.running(text, bounds)
        if counts is not None:  # additive: exact from offsets
            return cls(starts, ends, counts[0::2], counts[1::2], monotone=True)
        if measure_text is None:
            size = unit.size

            def measure_text(start: int, end: int) -> int:
                return size(text[start:end])

        sizes = [measure_text(a, b) for a, b in spans]
        joins = [unit.join(text, a[1], b[0]) for a, b in pairwise(spans)]
        if unit.exact_joins:
            return cls.from_sizes(spans, sizes, joins)
        runs = cls.from_sizes(spans, sizes, joins, measure_text, unit.join_error)
        runs._measured = {(k, k): n for k, n in enumerate(sizes)}
        return runs

    def estimate(self, i: int, j: int) -> int:
        """The estimated size of run ``i..j``."""
        return self.last[j] - self.first[i]

    def measure(self, i: int, j: int) -> int:
        """The real size of run ``i..j`` (cached)."""
        if self._measure_text is None:
            return self.last[j] - self.first[i]
        measured = self._measured
        if measured is None:
            measured = self._measured = {}
        key = (i, j)
        n = measured.get(key)
        if n is None:
            n = measured[key] = self._measure_text(self.starts[i], self.ends[j])
        return n

    def over(self, i: int, j: int, limit: int) -> bool:
        """Whether run ``i..j`` is larger than ``limit``, measuring only when in doubt."""
        estimate = self.last[j] - self.first[i]
        if self._measure_text is None:
            return estimate > limit
        if self.join_error is not None and estimate > limit + self.join_error * (j - i + 1):
            return True
        return self.measure(i, j) > limit


def pack_runs(
    sizes: RunSizes,
    limit: int,
    lo: int = 0,
    hi: int | None = None,
    *,
    verify: bool = True,
    overlap_size: int | None = 0,
    overlap_count: int | None = None,
    joinable: Callable[[int, int], bool] | None = None,
    alone: Sequence[int] = (),
) -> Iterator[tuple[int, int, int]]:
    """Pack segments ``lo..hi-1`` greedily into runs of at most ``limit``.

    Yields ``(i, j, size)`` for each chunk, runs ``i..j`` with strictly increasing
    ``i``, ``size`` the real size in verify mode and the estimate in trust mode (see the
    module docstring). The next chunk repeats the longest tail of the previous one
    holding at most ``overlap_count`` segments and at most ``overlap_size`` units
    (``None``: no bound of that kind; by default no overlap) that leaves room for the
    next segment. ``joinable(i, k)`` may forbid segment ``k`` from joining a chunk that
    starts at segment ``i``.

    Every segment must fit on its own, except those listed in ``alone`` (in order, all
    in ``lo..hi-1``):
    each of those is yielded on its own, as ``(k, k, size)``, and no overlap is carried
    across it (callers split such a segment further).
    """
    first, last, measure = sizes.first, sizes.last, sizes.measure
    verify = verify and not sizes.exact
    leap = sizes.monotone and joinable is None
    stops = [*alone, len(last) if hi is None else hi]
    # Estimates are inlined as last[b] - first[a]: this loop is the hot path of the
    # recursive strategy.
    i = lo
    for stop in stops:  # pack i..stop-1, then segment ``stop`` alone
        floor = i
        floor_size = (measure(i, i) if verify else last[i] - first[i]) if i < stop else 0
        while i < stop:
            # grow on the estimate, anchored on the known size of run i..floor
            base = floor_size - last[floor]
            j = floor
            room = limit - base
            if leap:  # thousands of words to a chunk: bisect rather than step
                j = max(j, bisect_right(last, room, j + 1, stop) - 1)
            while j + 1 < stop and last[j + 1] <= room and (joinable is None or joinable(i, j + 1)):
                j += 1
            n = base + last[j]
            if verify:
                n = measure(i, j) if j > floor else floor_size
                while n > limit:  # stops at floor at the latest
                    j -= 1
                    n = measure(i, j) if j > floor else floor_size
                while j + 1 < stop and (joinable is None or joinable(i, j + 1)):
                    grown = measure(i, j + 1)  # the estimate was high
                    if grown > limit:
                        break
                    j, n = j + 1, grown
            yield i, j, n
            if j + 1 >= stop:
                break
            # the next chunk: the longest allowed tail of i..j, and segment j + 1
            new = j + 1
            lowest = i + 1 if overlap_count is None else max(i + 1, new - overlap_count)
            k = new
            while k > lowest:
                if overlap_size is not None and (
                    (measure(k - 1, j) if verify else last[j] - first[k - 1]) > overlap_size
                ):
                    break
                if (measure(k - 1, new) if verify else last[new] - first[k - 1]) > limit:
                    break
                if joinable is not None and not joinable(k - 1, new):
                    break
                k -= 1
            i, floor = k, new
            floor_size = measure(k, new) if verify else last[new] - first[k]
        if stop < stops[-1]:
            yield stop, stop, (measure(stop, stop) if verify else last[stop] - first[stop])
        i = stop + 1


def check_spans(spans: Sequence[Span], length: int) -> None:
    """Raise ``ValueError`` unless ``spans`` are non-empty, in order and not overlapping."""
    previous_end = 0
    for start, end in spans:
        if not previous_end <= start < end <= length:
            raise ValueError(
                f"segments must be non-empty spans of the text, in order and not "
                f"overlapping; got ({start}, {end}) after one ending at {previous_end}"
            )
        previous_end = end
