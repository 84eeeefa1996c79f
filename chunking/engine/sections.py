"""Splitting spans at preferred positions, never inside an atomic block: the section
engine of the Markdown, HTML and code strategies.

A strategy describes where a span may be cut, as an ordered list of *cut levels*
(positions known from a parser, :class:`FixedCuts`, or found by a pattern,
:class:`PatternCuts`), and which spans are *atomic* (a code block, a table, a tag).
:class:`SpanSplitter` cuts a span over the size limit at the first level that has a
position inside it, packs the parts that fit with the packing engine
(:func:`chunking.engine.packing.pack_runs`, verifying real sizes, with overlap by size),
and splits the others with the following levels. :meth:`SpanSplitter.group` packs whole
sections or definitions the same way, without overlap (``merge_small``).

A *table* (:class:`Table`: a Markdown, HTML or CSV table with its rows and header) that
fits stays whole, as an atomic span; one over the limit is cut only between rows, into
groups of whole rows packed by the same engine, and every group after the first
carries the header in ``metadata["context"]``: the limit holds for what a model reads,
the header followed by the rows (:func:`chunking.model.in_context`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise
from typing import Any

from ..model import Piece, in_context
from ..units import Measures, Sizer, as_sizer
from .packing import RunSizes, pack_runs
from .recursive import fit_span
from .spans import strip_span

# --- positions where a span may be cut ---------------------------------------------


@dataclass(frozen=True)
class FixedCuts:
    """A named, sorted set of cut positions known in advance (from a parser)."""

    name: str
    points: tuple[int, ...]

    def positions(self, text: str, lo: int, hi: int) -> list[int]:
        """The points strictly between ``lo`` and ``hi``."""
        return list(self.points[bisect_right(self.points, lo) : bisect_left(self.points, hi)])


@dataclass(frozen=True)
class PatternCuts:
    """A named regular expression; a cut falls at the end of each match.

    Zero-width patterns (lookaheads) cut right before what they look at.
    """

    name: str
    pattern: re.Pattern[str]

    def positions(self, text: str, lo: int, hi: int) -> list[int]:
        """Match ends strictly between ``lo`` and ``hi``."""
        ends = (m.end() for m in self.pattern.finditer(text, lo, hi))
        return sorted({p for p in ends if lo < p < hi})


CutLevel = FixedCuts | PatternCuts

LINE_BREAK = re.compile(r"\r\n|\r|\n")
LINES = PatternCuts("line", LINE_BREAK)
BLANK_LINES = PatternCuts("blank line", re.compile(r"(?:\r\n|\r|\n)[ \t\f\v]*(?:\r\n|\r|\n)\s*"))
SENTENCES = PatternCuts(
    "sentence",
    re.compile(
        r"[.!?]+[\"'\u201d\u2019)\]]*\s+"
        # 。．｡！？ and the closers after them: 」』）”’
        r"|[\u3002\uff0e\uff61\uff01\uff1f]+[\u300d\u300f\uff09\u201d\u2019]*"
    ),
)
WORDS = PatternCuts("word", re.compile(r"\s+"))


@dataclass(frozen=True)
class Atomic:
    """A span that must not be cut while it fits the limit (a code block, a table...)."""

    start: int
    end: int
    label: str


@dataclass(frozen=True)
class Table:
    """A table that may be cut between rows, each group of rows after the first carrying
    its header.

    The table spans ``start`` to ``end``, a caption before it included (``bare`` is
    where it starts without one; ``None``: no caption). ``rows`` are the offsets where
    its body rows start, in order: everything before the first is the header (caption,
    ``<table>`` markup, header rows), which goes with the first group only. ``context``
    is the header as the later groups carry it (``""``: the table has none). Every
    offset is that of a non-whitespace character, and ``end`` ends one.
    """

    start: int
    end: int
    rows: tuple[int, ...]
    context: str = ""
    bare: int | None = None


#: The ``boundary`` of a group of table rows that another group of the same table follows.
TABLE_ROW = "table row"
#: Flag of a group of table rows over the limit: one row is larger than the size with the
#: header it carries (a row is never cut).
TABLE_ROW_OVER = "over limit: a table row, with its header, is larger than the size"


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts; lines end at ``\\r\\n``, ``\\r`` or ``\\n``.

    That is how markdown-it-py and Python's tokenizer count lines.
    """
    return [0, *(m.end() for m in LINE_BREAK.finditer(text))]


# --- the shared span splitter --------------------------------------------------------


class SpanSplitter:
    """Splits spans of ``text`` into pieces within ``size``, at preferred positions.

    ``levels`` are tried in order, as a recursive splitter tries its separators: a span
    over the limit is cut at every position of the first level that has one inside it;
    the parts that fit are packed greedily (sharing up to ``overlap`` between packs)
    and the others are split again with the following levels. When no level has a
    position inside a span, it is cut at whitespace or between characters
    (``fit_span``), which flags a single character over the limit as unsplittable.

    No cut falls strictly inside an ``atomic`` span that fits the limit. An atomic span
    over the limit may be cut only at positions of levels ``inner_from`` and later,
    and every piece overlapping it gets a ``note`` saying so. The positions of every
    atomic span's bounds form one last level (named ``edge_name``), so that an atomic
    span can always be separated from the text around it. Atomic spans may nest (a tag
    inside a ``<script>`` element): a fitting span inside an oversized one stays whole.
    """

    def __init__(
        self,
        text: str,
        sizer: Measures,
        size: int,
        overlap: int,
        levels: Sequence[CutLevel] = (BLANK_LINES, LINES, WORDS),
        atomic: Sequence[Atomic] = (),
        inner_from: int = 0,
        edge_name: str = "block edge",
        tables: Sequence[Table] = (),
    ) -> None:
        self.text = text
        self.sizer = as_sizer(sizer)
        self.size = size
        self.overlap = overlap
        self._sizes: dict[tuple[int, int], int] = {}
        fitting: list[Atomic] = []
        oversized: list[Atomic] = []
        for a in atomic:
            (fitting if self.fits_quickly(a.start, a.end) else oversized).append(a)
        #: Tables over the limit, by span: cut between rows only (:meth:`_table_groups`).
        self._tables: dict[tuple[int, int], Table] = {}
        for t in tables:
            if self.fits_quickly(t.start, t.end):  # whole, with its caption
                fitting.append(Atomic(t.start, t.end, "table"))
            elif t.bare is not None and self.fits_quickly(t.bare, t.end):  # whole, without
                fitting.append(Atomic(t.bare, t.end, "table"))
            else:
                self._tables[t.start, t.end] = t
        cut = [Atomic(a, b, "table") for a, b in self._tables]
        self._fitting = _SpanSet(union_spans(fitting))
        self._oversized = _SpanSet(union_spans(oversized))
        self._cut_tables = _SpanSet(union_spans(cut))
        bounds = sorted({p for a in [*atomic, *fitting, *cut] for p in (a.start, a.end)})
        self.levels: tuple[CutLevel, ...] = (*levels, FixedCuts(edge_name, tuple(bounds)))
        self.inner_from = inner_from

    # -- sizes ------------------------------------------------------------------------

    def measure(self, start: int, end: int) -> int:
        """The size of ``text[start:end]`` in the configured unit (cached, except for an
        additive unit, which measures spans cheaply)."""
        if self.sizer.additive:
            return self.sizer.span_size(self.text, start, end)
        key = (start, end)
        n = self._sizes.get(key)
        if n is None:
            n = self._sizes[key] = self.sizer.size(self.text[start:end])
        return n

    def fits_quickly(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` fits the limit, measuring only when in doubt
        (a short span is known to fit from the unit's ``max_per_char``)."""
        return self.sizer.fits_quickly(end - start, self.size) or (
            self.measure(start, end) <= self.size
        )

    # -- atomic spans -----------------------------------------------------------------

    def _cuts(self, lo: int, hi: int, level: int) -> list[int]:
        inner_ok = level >= self.inner_from
        return [
            p
            for p in self.levels[level].positions(self.text, lo, hi)
            if self._fitting.holding(p) is None
            and self._cut_tables.holding(p) is None
            and (inner_ok or self._oversized.holding(p) is None)
        ]

    # -- splitting --------------------------------------------------------------------

    def split(self, lo: int, hi: int, metadata: Mapping[str, Any]) -> Iterator[Piece]:
        """Pieces of ``text[lo:hi]`` (trimmed), each within the limit unless flagged.

        A span that fits is one piece. Every piece carries ``metadata`` plus a
        ``boundary`` naming the level it was cut at.
        """
        lo, hi = strip_span(self.text, lo, hi)
        if hi <= lo:
            return
        n = self.measure(lo, hi)
        if n <= self.size:
            yield Piece(lo, hi, metadata, n)
            return
        for start, end, size, extra in self._split(lo, hi, 0):
            meta = {**metadata, **extra}
            labels = self._oversized.labels(start, end)
            if labels:
                meta["note"] = "; ".join(f"{label} split: larger than size" for label in labels)
            yield Piece(start, end, meta, size)

    def _split(self, lo: int, hi: int, first: int) -> Iterator[tuple[int, int, int | None, dict]]:
        table = self._tables.get((lo, hi))
        if table is not None:
            yield from self._table_groups(table)
            return
        for level in range(first, len(self.levels)):
            cuts = self._cuts(lo, hi, level)
            if cuts:
                break
        else:
            for piece in fit_span(self.text, lo, hi, self.sizer, self.size):
                yield piece.start, piece.end, None, dict(piece.metadata)
            return
        bounds = [lo, *cuts, hi]
        good: list[tuple[int, int, int]] = []
        name = self.levels[level].name
        for a, b in pairwise(bounds):
            a, b = strip_span(self.text, a, b)
            if b <= a:
                continue
            n = self.measure(a, b)
            if n <= self.size:
                good.append((a, b, n))
                continue
            packs = list(self._pack(good, name))
            good = []
            table = self._tables.get((a, b))
            if table is not None and packs and self._leads(packs[-1][0], table):
                # what comes right before a table (its heading) joins its first group
                yield from packs[:-1]
                yield from self._table_groups(table, lead=packs[-1][0])
                continue
            yield from packs
            yield from self._split(a, b, level + 1)
        yield from self._pack(good, name)

    def _leads(self, lead: int, table: Table) -> bool:
        """Whether the text from ``lead`` to the end of ``table``'s first row (its header
        and caption included) fits the limit."""
        first_end = strip_span(self.text, table.start, (*table.rows[1:], table.end)[0])[1]
        return self.measure(lead, first_end) <= self.size

    def _table_groups(
        self, table: Table, lead: int | None = None
    ) -> Iterator[tuple[int, int, int, dict]]:
        """Groups of whole rows of ``table``, each within the limit with the header that
        the groups after the first carry (``context``), packed by the packing engine; a
        row over the limit with its header is a group of its own, flagged. The first
        group starts at ``lead`` when given (text before the table: its heading)."""
        text, context, limit = self.text, table.context, self.size
        ends = [*table.rows[1:], table.end]
        spans = [
            strip_span(text, a, b)
            for a, b in zip((table.start, *table.rows[1:]), ends, strict=True)
        ]
        if lead is not None:
            spans[0] = (lead, spans[0][1])
        first = spans[0][0]
        sizer = self.sizer
        starts, stops = [a for a, _ in spans], [b for _, b in spans]
        sizes = sizer.span_sizes(text, first, table.end)(starts, stops)
        # what a model reads of each row alone: the first has the header in its text,
        # the others carry it (exact from sizes when the unit's joins are)
        read = dict(zip(spans[:1], sizes[:1], strict=True))
        if not context:
            read.update(zip(spans, sizes, strict=True))
        elif sizer.exact_joins:
            header = sizer.size(in_context(context, ""))
            read.update((span, header + n) for span, n in zip(spans[1:], sizes[1:], strict=True))
        else:
            rows = [text[a:b] for a, b in spans[1:]]
            read.update(zip(spans[1:], sizes_in_context(sizer, context, rows), strict=True))

        def measure(start: int, end: int) -> int:
            n = read.get((start, end))
            if n is not None:
                return n
            if start == first or not context:
                return self.measure(start, end)
            return sizer.size(in_context(context, text[start:end]))

        joins = [sizer.join(text, a[1], b[0]) for a, b in pairwise(spans)]
        runs = RunSizes.from_sizes(spans, sizes, joins, measure, sizer.join_error)
        alone = [k for k, span in enumerate(spans) if read[span] > limit]
        groups = list(pack_runs(runs, limit, alone=alone))
        for number, (i, j, size) in enumerate(groups, 1):
            meta: dict[str, Any] = {
                "boundary": TABLE_ROW if number < len(groups) else "table end",
                "table_group": number,
                "table_groups": len(groups),
                "table_rows": [i + 1, j + 1],
            }
            if i > 0 and context:
                meta["context"] = context
            if size > limit:
                meta["flags"] = [TABLE_ROW_OVER]
            yield spans[i][0], spans[j][1], size, meta

    def group(
        self,
        spans: Sequence[tuple[int, int, int]],
        joinable: Callable[[int, int], bool] | None = None,
    ) -> list[tuple[int, int, int]]:
        """Group consecutive ``(start, end, size)`` spans whose union fits the limit.

        Returns ``(first, last, size)`` index ranges, greedily (the packing engine, no
        overlap). ``joinable(first, k)`` may forbid adding span ``k`` to the group that
        starts at span ``first``. A span over the limit is always a group of its own.
        """
        runs = RunSizes.of(self.text, [(a, b) for a, b, _ in spans], self.sizer, self.measure)
        alone = [k for k, span in enumerate(spans) if span[2] > self.size]
        return list(pack_runs(runs, self.size, joinable=joinable, alone=alone))

    def _pack(
        self, parts: list[tuple[int, int, int]], boundary: str
    ) -> Iterator[tuple[int, int, int | None, dict]]:
        """Pack consecutive parts (each within the limit) up to the limit, sharing up to
        ``overlap`` units between packs (the packing engine, verifying real sizes)."""
        if not parts:
            return
        spans = [(a, b) for a, b, _ in parts]
        runs = RunSizes.of(self.text, spans, self.sizer, self.measure)
        for i, j, size in pack_runs(runs, self.size, overlap_size=self.overlap):
            yield parts[i][0], parts[j][1], size, {"boundary": boundary}


def sizes_in_context(sizer: Sizer, context: str, texts: Sequence[str]) -> list[int]:
    """``sizer.size(in_context(context, t))`` for each of ``texts``, measured as spans of
    one text, so that a unit reading a region at once (cl100k tokens) encodes it about
    once instead of once per text."""
    parts = [in_context(context, t) for t in texts]
    if not parts:
        return []
    starts = list(accumulate((len(p) + 1 for p in parts[:-1]), initial=0))
    ends = [a + len(p) for a, p in zip(starts, parts, strict=True)]
    return sizer.span_sizes("\n".join(parts))(starts, ends)


class _SpanSet:
    """Sorted, disjoint atomic spans, searchable by position."""

    def __init__(self, spans: list[Atomic]) -> None:
        self.spans = spans
        self.starts = [a.start for a in spans]

    def holding(self, p: int) -> Atomic | None:
        """The span strictly containing position ``p``, if any."""
        i = bisect_right(self.starts, p) - 1
        if i >= 0 and self.spans[i].start < p < self.spans[i].end:
            return self.spans[i]
        return None

    def labels(self, start: int, end: int) -> list[str]:
        """Labels of the spans overlapping ``[start, end)``, without repeats."""
        i = max(bisect_right(self.starts, start) - 1, 0)
        labels: list[str] = []
        while i < len(self.spans) and self.spans[i].start < end:
            a = self.spans[i]
            if a.end > start and a.label not in labels:
                labels.append(a.label)
            i += 1
        return labels


def union_spans(atomic: Sequence[Atomic]) -> list[Atomic]:
    """Atomic spans sorted, with overlapping ones merged (the outer label wins)."""
    out: list[Atomic] = []
    for a in sorted(atomic, key=lambda a: (a.start, -a.end)):
        if a.end <= a.start:
            continue
        if out and a.start < out[-1].end:
            last = out[-1]
            out[-1] = Atomic(last.start, max(last.end, a.end), last.label)
        else:
            out.append(a)
    return out
