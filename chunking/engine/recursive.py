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
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from itertools import pairwise
from types import MappingProxyType
from typing import Any

from ..model import UNSPLITTABLE, Piece
from ..units import Measures, as_sizer
from .packing import RunSizes, SplitOversized, pack_runs
from .spans import strip_span

#: Paragraphs, lines, sentence ends, words, characters.
DEFAULT_SEPARATORS = ("\n\n", "\n", ". ", "? ", "! ", "; ", ", ", " ", "")
#: LangChain's defaults, for reproducing its output.
LANGCHAIN_SEPARATORS = ("\n\n", "\n", " ", "")
KEEP_CHOICES = ("start", "end", "none")

Span = tuple[int, int, str, bool]


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
        self._patterns = {
            s: re.compile(s if is_separator_regex else re.escape(s)) for s in self.separators if s
        }
        # An additive unit with kept separators: pieces are contiguous and a run of
        # pieces measures from running counts at the cuts (for characters, the cut
        # offsets themselves), so merging needs only the cut positions.
        self._contiguous = sizer.additive and keep_separator != "none"
        self.count = sizer.size
        self._literal = not is_separator_regex

    # -- splitting --------------------------------------------------------------------

    def split(self, lo: int = 0, hi: int | None = None) -> list[Span]:
        hi = len(self.text) if hi is None else hi
        return self._split(lo, hi, self.separators)

    def _split(self, lo: int, hi: int, separators: list[str]) -> list[Span]:
        segment = self.text[lo:hi]
        separator = separators[-1]
        rest: list[str] = []
        for i, sep in enumerate(separators):
            if not sep:
                separator = sep
                break
            if self._patterns[sep].search(segment):
                separator = sep
                rest = separators[i + 1 :]
                break

        if self._contiguous:
            return self._split_contiguous(segment, lo, separator, rest)
        if self._literal and separator:
            spans, lengths = self._literal_pieces(segment, lo, separator)
        else:
            spans = self._pieces(segment, lo, separator)
            count, text = self.count, self.text
            lengths = [count(text[a:b]) for a, b in spans]
        merge_sep = "" if self.keep != "none" else separator
        sep_len = self.count(merge_sep) if merge_sep else 0
        big = [k for k, n in enumerate(lengths) if n >= self.size]
        return self._merge(RunSizes.from_sizes(spans, lengths, sep_len), big, separator, rest)

    def _split_contiguous(
        self, segment: str, lo: int, separator: str, rest: list[str]
    ) -> list[Span]:
        """``_split`` for contiguous pieces of an additive unit, on cut positions."""
        hi = lo + len(segment)
        if not separator:
            cuts = list(range(lo, hi + 1))
        else:
            matches = self._patterns[separator].finditer(segment)
            at = [m.end() for m in matches] if self.keep == "end" else [m.start() for m in matches]
            cuts = [lo]
            for a in at:
                if a and a + lo != cuts[-1]:
                    cuts.append(a + lo)
            if cuts[-1] != hi:
                cuts.append(hi)
        counts = self.sizer.running(self.text, cuts) or cuts
        ends = cuts[1:]
        if counts is cuts:  # characters: no piece is empty, nothing fits beside a big one
            return self._merge(RunSizes(cuts, ends, cuts, ends), (), separator, rest)
        size, last = self.size, counts[1:]
        big = [k for k in range(len(ends)) if last[k] - counts[k] >= size]
        return self._merge(RunSizes(cuts, ends, counts, last), big, separator, rest)

    def _literal_pieces(
        self, segment: str, lo: int, separator: str
    ) -> tuple[list[tuple[int, int]], list[int]]:
        """``_pieces`` for a literal separator, with ``str.split``; also their sizes."""
        parts = segment.split(separator)
        if self.keep == "start":
            texts = [parts[0], *(separator + part for part in parts[1:])]
        elif self.keep == "end":
            texts = [*(part + separator for part in parts[:-1]), parts[-1]]
        else:
            if not separator.isspace():
                raise dropping_text_error(separator)
            texts = parts
        gap = len(separator) if self.keep == "none" else 0
        spans = []
        start = lo
        for piece in texts:
            end = start + len(piece)
            if end > start:
                spans.append((start, end))
            start = end + gap
        texts = [piece for piece in texts if piece]
        return spans, list(map(self.count, texts))

    def _pieces(self, segment: str, lo: int, separator: str) -> list[tuple[int, int]]:
        """The non-empty pieces of ``segment`` split at ``separator`` (absolute offsets)."""
        if not separator:
            return [(lo + i, lo + i + 1) for i in range(len(segment))]
        matches = self._patterns[separator].finditer(segment)
        if self.keep == "none":
            bounds = [0]
            for m in matches:
                if m.group() and not m.group().isspace():
                    raise dropping_text_error(m.group())
                bounds += (m.start(), m.end())
            bounds.append(len(segment))
            spans = list(zip(bounds[::2], bounds[1::2], strict=True))
        else:
            cuts = [m.end() if self.keep == "end" else m.start() for m in matches]
            spans = list(pairwise([0, *cuts, len(segment)]))
        return [(lo + a, lo + b) for a, b in spans if b > a]

    def _merge(
        self, runs: RunSizes, big: Sequence[int], separator: str, rest: list[str]
    ) -> list[Span]:
        """LangChain's merge of the pieces of one split: pack the pieces up to ``size`` on
        the summed estimate, keeping up to ``overlap`` of each chunk's tail. A piece of
        ``size`` or more (listed in ``big``, unless no piece has size 0, when the loop
        leaves it on its own anyway since nothing fits beside it) is split with the
        ``rest`` of the separators, or kept whole when none is left."""
        out: list[Span] = []
        starts, ends, size, text, strip = runs.starts, runs.ends, self.size, self.text, self.strip
        for i, j, n in pack_runs(runs, size, verify=False, overlap_size=self.overlap, alone=big):
            if n >= size and i == j:  # a big piece
                if rest:
                    out.extend(self._split(starts[i], ends[i], rest))
                else:
                    out.append((starts[i], ends[i], separator, True))
                continue
            start, end = starts[i], ends[j]
            if strip:
                start, end = strip_span(text, start, end)
            if end > start:
                out.append((start, end, separator, False))
        return out


def fit_span(text: str, start: int, end: int, sizer: Measures, limit: int) -> Iterator[Piece]:
    """Cut ``text[start:end]`` into spans of at most ``limit``, preferring whitespace.

    The slow, exact path for the rare span whose re-measured size is over the limit.
    """
    while start < end:
        if sizer.size(text[start:end]) <= limit:
            yield Piece(start, end, {"boundary": "size"})
            return
        lo, hi = start + 1, end  # largest cut with size <= limit, by bisection
        if sizer.size(text[start:lo]) > limit:
            yield Piece(start, lo, {"boundary": "size", "flags": [UNSPLITTABLE]})
            start, _ = strip_span(text, lo, end)
            continue
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if sizer.size(text[start:mid]) <= limit:
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
    ``boundary == "separator"`` and the ``separator`` used."""
    limit = splitter.size
    # Contiguous pieces of an additive unit: the merge's sizes are exact, so every
    # merged span fits; only a piece no separator could split needs measuring.
    exact = splitter._contiguous
    shared: dict[str, Mapping[str, Any]] = {}  # one read-only metadata per separator
    for start, end, separator, whole in splitter.split(lo, hi):
        meta = shared.get(separator)
        if meta is None:
            meta = shared[separator] = MappingProxyType(
                {"boundary": "separator", "separator": separator}
            )
        if exact and not whole:
            yield Piece(start, end, meta)
            continue
        n = sizer.size(text[start:end])
        if n <= limit:
            yield Piece(start, end, meta, n)
        elif whole:
            yield Piece(start, end, {**meta, "flags": [UNSPLITTABLE]}, n)
        else:
            yield from fit_span(text, start, end, sizer, limit)


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
