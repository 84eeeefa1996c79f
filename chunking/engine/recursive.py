"""Recursive splitting over a separator hierarchy, with exact offsets.

The algorithm is LangChain's ``RecursiveCharacterTextSplitter``, reproduced on spans
instead of strings: with the same ``separators``, ``keep_separator`` and
``strip_whitespace`` it yields the same chunk texts, and each chunk also knows where it
sits in the source. Two differences, both so that the size limit holds exactly:

- LangChain estimates a merged chunk's size as the sum of its pieces' sizes (plus the
  separator's for ``keep_separator="none"``). Merging is the packing engine in *trust*
  mode (:func:`chunking.engine.packing.pack_runs`), which reproduces that estimate
  exactly. For an additive unit (characters) with kept separators the pieces are
  contiguous and the estimate is exact, so merging works on cut positions alone; a
  token or word count of joined text can differ, so every chunk is then measured again
  on its own text and one that is over the limit is cut again (``boundary == "size"``).
- With ``keep_separator="none"`` LangChain joins pieces with one separator even where
  the source had several in a row; here a chunk is always a slice of the source.
- With ``strip_whitespace=False`` LangChain can return a chunk of whitespace alone;
  :func:`~chunking.model.build_chunks` drops such pieces for every strategy.

Speed: for characters with kept literal separators (the default) a chunk's size is the
distance between its offsets, so no piece is listed or measured: each chunk ends at the
last separator within reach, found with ``str.rfind`` (:func:`char_bounds`), and big
pieces are split as they are met, depth first. Otherwise literal separators are found
once per region with numpy (:class:`Occurrences`); pieces are measured a level at a time
through the unit's :meth:`~chunking.units.Sizer.span_sizes` (for cl100k tokens, read
from one encoding of the region); a chunk grows by bisection over its pieces' running
sizes.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from itertools import compress
from operator import itemgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model import UNSPLITTABLE, Piece
from ..units import Measures, as_sizer, utf8_region
from .packing import RunSizes, SplitOversized, pack_runs
from .spans import strip_span

if TYPE_CHECKING:
    from ..units import Positions, SpanSizes

#: Paragraphs, lines, sentence ends, words, characters.
DEFAULT_SEPARATORS = ("\n\n", "\n", ". ", "? ", "! ", "; ", ", ", " ", "")
#: LangChain's defaults, for reproducing its output.
LANGCHAIN_SEPARATORS = ("\n\n", "\n", " ", "")
KEEP_CHOICES = ("start", "end", "none")

Span = tuple[int, int, str, bool]
#: A part of the text still to split, and the separators left to split it with.
Segment = tuple[int, int, list[str]]
#: Offsets into the text, as a numpy array of integers.
Offsets = np.ndarray


class RecursiveSplitter:
    """Splits ``text[lo:hi]`` recursively into ``(start, end, separator, whole)`` spans.

    ``whole`` marks a piece that no remaining separator could split; it is kept as it
    is, as LangChain does, even when it is over the size limit.
    """

    def __init__(
        self,
        text: str,
        sizer: Measures,
        size: int,
        overlap: int = 0,
        separators: tuple[str, ...] | list[str] = DEFAULT_SEPARATORS,
        keep_separator: str = "end",
        strip_whitespace: bool = True,
        is_separator_regex: bool = False,
    ) -> None:
        if keep_separator not in KEEP_CHOICES:
            raise ValueError(f"keep_separator must be one of {', '.join(KEEP_CHOICES)}")
        self.text = text
        self.sizer = sizer = as_sizer(sizer)
        self.size = size
        self.overlap = overlap
        self.separators = list(separators) or [""]
        self.keep = keep_separator
        self.strip = strip_whitespace
        self._patterns = (
            {s: re.compile(s) for s in self.separators if s} if is_separator_regex else None
        )
        # Characters with kept separators: pieces are contiguous and a run's size is
        # the distance between its offsets (``running`` gives the offsets back), so
        # merging needs only the cut positions.
        probe = [0, 1]
        self._offsets = keep_separator != "none" and sizer.running(" ", probe) is probe
        # What ``split`` sets up for its region: span sizes, separator positions.
        self._measure: SpanSizes | None = None
        self._found: Occurrences | None = None

    # -- splitting --------------------------------------------------------------------

    def split(self, lo: int = 0, hi: int | None = None) -> tuple[list[Span], list[int]]:
        """The spans of ``text[lo:hi]`` and each one's size, measured on its own text.

        LangChain recurses into each piece too big for the limit as it meets it; the
        same splits are made here level by level (every big piece of one level is split
        before the next level), so that the pieces of a whole level are measured in
        one call: the spans, put back in order of their starts, are the same.
        """
        hi = len(self.text) if hi is None else hi
        self._measure = self.sizer.span_sizes(self.text, lo, hi)
        if self._offsets and self._patterns is None:
            chars: list[Span] = []
            self._split_chars(lo, hi, self.separators, chars)
            return chars, [end - start for start, end, _, _ in chars]
        if self._patterns is None:
            self._found = Occurrences(self.text, lo, hi)
        spans: list[Span] = []
        level: list[Segment] = [(lo, hi, self.separators)]
        while level:
            cut = [self._cut(*segment) for segment in level]
            sizes = None  # characters: the sizes are the offsets
            if not self._offsets:
                starts, ends = (np.concatenate([c[k] for c in cut]) for k in (2, 3))
                sizes = self._sizes(starts, ends)
            level, first = [], 0
            for separator, rest, at, until in cut:
                last = first + len(at)
                some = None if sizes is None else sizes[first:last]
                level += self._merge(
                    *self._runs(separator, at, until, some), separator, rest, spans
                )
                first = last
        spans.sort(key=itemgetter(0))  # stable: a segment's own spans keep their order
        return spans, self._sizes([s[0] for s in spans], [s[1] for s in spans])

    def _split_chars(self, lo: int, hi: int, separators: list[str], out: list[Span]) -> None:
        """:meth:`split` for characters with kept literal separators, appending the
        spans of ``text[lo:hi]`` to ``out`` in order (a big piece's before what follows
        it, as sorting the levels' spans by their starts puts them).

        A chunk's size is the distance between its offsets, so the packing loop's
        arithmetic is done on positions: a chunk from piece start ``s`` ends at the last
        piece end at most ``s + size`` away, found with ``str.rfind``; only the pieces
        where chunks end are looked at, not every word (:func:`char_bounds`)."""
        separator, rest, after, upto, earliest = char_bounds(
            self.text, lo, hi, separators, self.keep == "start"
        )
        text, size, overlap, strip = self.text, self.size, self.overlap, self.strip
        start, fresh = lo, True  # fresh: the chunk holds no tail of the one before
        while True:
            if fresh:
                stop = after(start)
                if stop - start >= size:  # a big piece, alone (as pack_runs leaves it)
                    if rest:
                        self._split_chars(start, stop, rest, out)
                    else:
                        out.append((start, stop, separator, True))
                    if stop >= hi:
                        return
                    start = stop
                    continue
            end = hi if start + size >= hi else upto(start, start + size)
            a, b = strip_span(text, start, end) if strip else (start, end)
            if b > a:
                out.append((a, b, separator, False))
            if end >= hi:
                return
            if overlap:  # pack_runs' tail: within overlap, leaving room for the next piece
                floor = max(end - overlap, after(end) - size, start + 1)
                tail = earliest(floor, end) if floor <= end else end
                start, fresh = tail, tail == end
            else:
                start = end

    @property
    def region_sizes(self) -> SpanSizes:
        """Sizes of spans of the region last split."""
        assert self._measure is not None, "split() sets the region up"
        return self._measure

    def _sizes(self, starts: Positions, ends: Positions) -> list[int]:
        return self.region_sizes(starts, ends)

    def _cut(
        self, lo: int, hi: int, separators: list[str]
    ) -> tuple[str, list[str], Offsets, Offsets]:
        """The separator ``text[lo:hi]`` is split at, those left after it, and the
        starts and ends of its pieces."""
        separator, rest, found = self._separator(lo, hi, separators)
        return separator, rest, *self._pieces(lo, hi, separator, found)

    def _runs(
        self, separator: str, at: Offsets, until: Offsets, sizes: list[int] | None
    ) -> tuple[RunSizes, Sequence[int]]:
        """The run sizes of the pieces of one split, and which pieces are big."""
        starts, ends = at.tolist(), until.tolist()
        if sizes is None:
            # Characters: no piece is empty, so nothing fits beside a piece of ``size``
            # or more: the packing loop leaves it alone unasked.
            return RunSizes(starts, ends, starts, ends, monotone=True), ()
        merge_sep = "" if self.keep != "none" else separator
        runs = RunSizes.from_bounds(starts, ends, sizes, self.sizer.size(merge_sep))
        # the pieces with ``size <= n``, filtered in C: there can be a piece per word
        return runs, list(compress(range(len(sizes)), map(self.size.__le__, sizes)))

    def _separator(
        self, lo: int, hi: int, separators: list[str]
    ) -> tuple[str, list[str], Offsets | list[re.Match[str]]]:
        """The first separator found in ``text[lo:hi]``, those after it, and where it
        occurs (offsets of a literal separator, else the regular expression's matches)."""
        for i, sep in enumerate(separators):
            if not sep:  # between characters
                return "", [], []
            found: Offsets | list[re.Match[str]]
            if self._found is not None:
                found = self._found.within(sep, lo, hi)
            else:
                assert self._patterns is not None
                found = list(self._patterns[sep].finditer(self.text[lo:hi]))
            if len(found):
                return sep, separators[i + 1 :], found
        # none found: the last one, which leaves the text whole, as in LangChain
        return separators[-1], [], np.empty(0, np.int64)

    def _pieces(
        self, lo: int, hi: int, separator: str, found: Offsets | list[re.Match[str]]
    ) -> tuple[Offsets, Offsets]:
        """The starts and ends of the non-empty pieces of ``text[lo:hi]`` at
        ``separator``, as ``str.split`` (or ``re.split``) would cut it."""
        if not separator:  # between characters
            return np.arange(lo, hi), np.arange(lo + 1, hi + 1)
        if isinstance(found, np.ndarray):
            at, after = found, found + len(separator)
            dropped = [separator]
        else:
            at = np.array([m.start() for m in found], np.int64) + lo
            after = np.array([m.end() for m in found], np.int64) + lo
            dropped = [m.group() for m in found if m.group()]
        if self.keep != "none":
            cuts = after if self.keep == "end" else at
            # matches of a regular expression may be empty and touch: no empty piece
            return _cut(lo, hi, cuts if dropped == [separator] else np.unique(cuts))
        for text in dropped:
            if not text.isspace():
                raise dropping_text_error(text)
        return _between(lo, hi, at, after)

    def _merge(
        self, runs: RunSizes, big: Sequence[int], separator: str, rest: list[str], out: list[Span]
    ) -> list[Segment]:
        """LangChain's merge of the pieces of one split into ``out``: pack the pieces up
        to ``size`` on the summed estimate, keeping up to ``overlap`` of each chunk's tail.
        A piece of ``size`` or more (listed in ``big``) is returned, to be split with the
        ``rest`` of the separators, or kept whole when none is left."""
        deeper: list[Segment] = []
        starts, ends, size, text, strip = runs.starts, runs.ends, self.size, self.text, self.strip
        for i, j, n in pack_runs(runs, size, verify=False, overlap_size=self.overlap, alone=big):
            if n >= size and i == j:  # a big piece
                if rest:
                    deeper.append((starts[i], ends[i], rest))
                else:
                    out.append((starts[i], ends[i], separator, True))
                continue
            start, end = starts[i], ends[j]
            if strip:
                start, end = strip_span(text, start, end)
            if end > start:
                out.append((start, end, separator, False))
        return deeper


#: ``after(s)``: the end of the piece that starts at ``s``.
After = Callable[[int], int]
#: ``upto(s, x)``: the last piece end in ``(s, x]`` (one exists where it is asked).
Upto = Callable[[int, int], int]
#: ``earliest(t, end)``: the first piece end at ``t`` or after, ``end`` at the latest.
Earliest = Callable[[int, int], int]


def char_bounds(
    text: str, lo: int, hi: int, separators: list[str], at_start: bool
) -> tuple[str, list[str], After, Upto, Earliest]:
    """The separator that ``text[lo:hi]`` is split at, those left after it, and where
    its pieces end, asked of ``str.find`` / ``str.rfind`` (the same pieces as
    :meth:`RecursiveSplitter._pieces`, the separator kept at the start of the next
    piece if ``at_start``, else at the end of the previous one).

    ``str.split`` cuts at the leftmost occurrences that do not overlap: for a separator
    that cannot overlap itself those are all occurrences, so any of them can be found
    from anywhere; one that can (``"\\n\\n"`` in ``"\\n\\n\\n"``) has its
    occurrences listed once, by a regular expression scanning from ``lo``."""
    find, rfind = text.find, text.rfind
    for k, sep in enumerate(separators):
        if not sep:  # between characters
            return "", [], lambda s: s + 1, lambda s, x: x, lambda t, end: t
        if find(sep, lo, hi) >= 0:
            separator, rest = sep, separators[k + 1 :]
            break
    else:  # none found: the last one, which leaves the text whole, as in LangChain
        return separators[-1], [], lambda s: hi, lambda s, x: hi, lambda t, end: end
    w = len(separator)
    if overlaps_itself(separator):
        at = [m.start() for m in literal(separator).finditer(text, lo, hi)]
        bounds = [p for p in at if p > lo] if at_start else [p + w for p in at if p + w < hi]
        bounds.append(hi)
        return (
            separator,
            rest,
            lambda s: bounds[bisect_right(bounds, s)],
            lambda s, x: bounds[bisect_right(bounds, x) - 1],
            lambda t, end: min(bounds[bisect_left(bounds, t)], end),
        )
    if at_start:  # a piece ends where the next occurrence starts

        def after(s: int) -> int:
            p = find(separator, s + 1, hi)
            return hi if p < 0 else p

        def upto(s: int, x: int) -> int:
            return rfind(separator, s + 1, min(x + w, hi))

        def earliest(t: int, end: int) -> int:
            p = find(separator, t, min(end + w, hi))
            return end if p < 0 else p

    else:  # a piece ends where an occurrence ends

        def after(s: int) -> int:
            p = find(separator, s, hi)
            return hi if p < 0 else p + w

        def upto(s: int, x: int) -> int:
            return rfind(separator, s, x) + w

        def earliest(t: int, end: int) -> int:
            p = find(separator, max(t - w, lo), end)
            return end if p < 0 else p + w

    return separator, rest, after, upto, earliest


@cache
def overlaps_itself(separator: str) -> bool:
    """Whether two occurrences of ``separator`` can overlap (it starts as it ends)."""
    return any(separator[:k] == separator[-k:] for k in range(1, len(separator)))


@cache
def literal(separator: str) -> re.Pattern[str]:
    return re.compile(re.escape(separator))


def _cut(lo: int, hi: int, cuts: Offsets) -> tuple[Offsets, Offsets]:
    """The non-empty pieces of ``[lo, hi)`` cut at the sorted ``cuts`` (``lo`` to
    ``hi`` included, as found inside it)."""
    if len(cuts) and cuts[0] == lo:
        cuts = cuts[1:]
    if len(cuts) and cuts[-1] == hi:
        cuts = cuts[:-1]
    bounds = np.concatenate(([lo], cuts, [hi]))
    return bounds[:-1], bounds[1:]


def _between(lo: int, hi: int, at: Offsets, after: Offsets) -> tuple[Offsets, Offsets]:
    """The non-empty pieces of ``[lo, hi)`` between separators found at ``at`` (each
    ending at ``after``): ``keep_separator="none"``."""
    starts = np.concatenate(([lo], after))
    ends = np.concatenate((at, [hi]))
    keep = ends > starts
    return starts[keep], ends[keep]


class Occurrences:
    """Where literal separators occur in ``text[lo:hi]``, found once per separator for
    the whole region with numpy: scanning each piece again with a regular expression
    was the splitter's hot spot (a word separator matches every few characters).

    The region's UTF-8 bytes are searched (:func:`~chunking.units.utf8_region`, the
    bytes a token region reads too): a separator's bytes can only match where a
    character starts, UTF-8 being self-synchronising."""

    def __init__(self, text: str, lo: int, hi: int) -> None:
        self.lo = lo
        self.utf8 = utf8_region(text, lo, hi)
        self._starts: dict[str, np.ndarray] = {}

    def starts(self, separator: str) -> np.ndarray:
        """The start of every occurrence, overlapping ones included."""
        found = self._starts.get(separator)
        if found is None:
            code = separator.encode("utf-8", "surrogatepass")
            data = self.utf8.array
            n = max(len(data) - len(code) + 1, 0)
            match = data[:n] == code[0] if code else np.ones(n, bool)
            for k in range(1, len(code)):
                match &= data[k : k + n] == code[k]
            found = self.utf8.chars(np.flatnonzero(match)) + self.lo
            self._starts[separator] = found
        return found

    def within(self, separator: str, lo: int, hi: int) -> np.ndarray:
        """Starts of the occurrences inside ``text[lo:hi]`` that ``str.split`` and
        ``re.finditer`` find: the leftmost ones that do not overlap."""
        at = self.starts(separator)
        width = len(separator)
        first, stop = np.searchsorted(at, (lo, hi - width + 1)).tolist()
        at = at[first:stop]
        if width > 1 and len(at) > 1 and (np.diff(at) < width).any():
            kept, end = [], lo
            for a in at.tolist():
                if a >= end:
                    kept.append(a)
                    end = a + width
            at = np.array(kept, np.int64)
        return at


def fit_span(
    text: str,
    start: int,
    end: int,
    sizer: Measures,
    limit: int,
    measure: Callable[[int, int], int] | None = None,
) -> Iterator[Piece]:
    """Cut ``text[start:end]`` into spans of at most ``limit``, preferring whitespace.

    The slow, exact path for the rare span whose re-measured size is over the limit.
    ``measure(a, b)``, when given, is the size of ``text[a:b]`` (a caller's faster way).
    """
    if measure is None:

        def measure(a: int, b: int) -> int:
            return sizer.size(text[a:b])

    while start < end:
        if measure(start, end) <= limit:
            yield Piece(start, end, {"boundary": "size"})
            return
        lo, hi = start + 1, end  # largest cut with size <= limit, by bisection
        if measure(start, lo) > limit:
            yield Piece(start, lo, {"boundary": "size", "flags": [UNSPLITTABLE]})
            start, _ = strip_span(text, lo, end)
            continue
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if measure(start, mid) <= limit:
                lo = mid
            else:
                hi = mid - 1
        cut = lo
        space = max(text.rfind(" ", start + 1, cut), text.rfind("\n", start + 1, cut))
        if space > start:
            cut = space
        piece_end = strip_span(text, start, cut)[1]
        yield Piece(start, piece_end, {"boundary": "size"})
        start, _ = strip_span(text, cut, end)


def recursive_pieces(
    text: str, sizer: Measures, splitter: RecursiveSplitter, lo: int = 0, hi: int | None = None
) -> Iterator[Piece]:
    """Split ``text[lo:hi]`` with ``splitter``; re-measure each chunk so that the limit
    holds exactly. A chunk still over the limit is cut by :func:`fit_span`, or flagged
    :data:`~chunking.model.UNSPLITTABLE` when no separator is left. Metadata:
    ``boundary == "separator"`` and the ``separator`` used.

    Starts never go back: a cut of an over-limit chunk that would start at or after the
    next chunk's start lies wholly inside that next chunk (the next chunk starts in this
    one's overlap and ends after it), so it is dropped rather than repeated out of order.
    """
    limit = splitter.size
    shared: dict[str, Mapping[str, Any]] = {}  # one read-only metadata per separator
    spans, sizes = splitter.split(lo, hi)
    of_region = splitter.region_sizes

    def measure(a: int, b: int) -> int:
        return of_region([a], [b])[0]

    nexts = [s[0] for s in spans[1:]]
    nexts.append(len(text))
    for (start, end, separator, whole), n, following in zip(spans, sizes, nexts, strict=True):
        meta = shared.get(separator)
        if meta is None:
            meta = shared[separator] = MappingProxyType(
                {"boundary": "separator", "separator": separator}
            )
        if n <= limit:
            yield Piece(start, end, meta, n)
        elif whole:
            yield Piece(start, end, {**meta, "flags": [UNSPLITTABLE]}, n)
        else:  # a cut from where the next chunk starts lies inside it: dropped
            for piece in fit_span(text, start, end, sizer, limit, measure):
                if piece.start < following or start >= following:
                    yield piece


def recursive_split(text: str, sizer: Measures, size: int) -> SplitOversized:
    """A ``split_oversized`` function for :func:`~chunking.engine.segments.pack_spans`:
    the recursive splitter, labelled ``"size"``.

    The pieces carry ``boundary == "size"``: they end where they do because the segment
    they come from was too big, not at a natural boundary.
    """
    splitter = RecursiveSplitter(text, sizer, size)

    def split(lo: int, hi: int) -> Iterator[Piece]:
        for piece in recursive_pieces(text, sizer, splitter, lo, hi):
            meta = {**piece.metadata, "boundary": "size"}
            meta.pop("separator", None)
            yield piece._replace(metadata=meta)

    return split


def dropping_text_error(separator: str) -> ValueError:
    return ValueError(
        f"keep_separator 'none' would drop the separator {separator!r}, which is not "
        "whitespace, losing text; keep it at the 'start' or 'end' instead"
    )
