"""Recursive splitting over a separator hierarchy, with exact offsets.

The algorithm is LangChain's ``RecursiveCharacterTextSplitter``, reproduced on spans
instead of strings: with the same ``separators``, ``keep_separator`` and
``strip_whitespace`` it yields the same chunk texts, and each chunk also knows where it
sits in the source. Two differences, both so that the size limit holds exactly:

- LangChain estimates a merged chunk's size as the sum of its pieces' sizes. For
  characters that is exact, but a token or word count of joined text can differ; every
  chunk is measured again on its own text and one that is over the limit is cut again
  (metadata ``boundary == "size"``).
- With ``keep_separator="none"`` LangChain joins pieces with one separator even where
  the source had several in a row; here a chunk is always a slice of the source.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from itertools import pairwise
from types import MappingProxyType
from typing import Any

from ..model import UNSPLITTABLE, Piece
from ..units import Sizer
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
        sizer: Sizer,
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
        self.sizer = sizer
        self.size = size
        self.overlap = overlap
        self.separators = list(separators) or [""]
        self.keep = keep_separator
        self.strip = strip_whitespace
        self._patterns = {
            s: re.compile(s if is_separator_regex else re.escape(s)) for s in self.separators if s
        }
        # Characters with kept separators: pieces are contiguous and a run of pieces
        # measures end - start, so merging needs only the cut positions.
        self._contiguous_chars = sizer.name == "chars" and keep_separator != "none"
        self.count = len if sizer.name == "chars" else sizer.size
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

        if self._contiguous_chars:
            return self._split_contiguous_chars(segment, lo, separator, rest)
        if self._literal and separator:
            spans, lengths = self._literal_pieces(segment, lo, separator)
        else:
            spans = self._pieces(segment, lo, separator)
            count, text = self.count, self.text
            lengths = [count(text[a:b]) for a, b in spans]
        merge_sep = "" if self.keep != "none" else separator
        sep_len = self.count(merge_sep) if merge_sep else 0
        out: list[Span] = []
        first = 0  # first piece of the current run of pieces shorter than size
        for k, n in enumerate(lengths):
            if n < self.size:
                continue
            if k > first:
                self._merge(spans, lengths, first, k, sep_len, separator, out)
            if rest:
                out.extend(self._split(spans[k][0], spans[k][1], rest))
            else:
                out.append((spans[k][0], spans[k][1], separator, True))
            first = k + 1
        if len(spans) > first:
            self._merge(spans, lengths, first, len(spans), sep_len, separator, out)
        return out

    def _split_contiguous_chars(
        self, segment: str, lo: int, separator: str, rest: list[str]
    ) -> list[Span]:
        """``_split`` and ``_merge`` for the common case, working on cut positions."""
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
        size = self.size
        out: list[Span] = []
        first = 0  # first piece of the current run of pieces shorter than size
        for k in range(len(cuts) - 1):
            if cuts[k + 1] - cuts[k] < size:
                continue
            if k > first:
                self._merge_cuts(cuts, first, k, separator, out)
            if rest:
                out.extend(self._split(cuts[k], cuts[k + 1], rest))
            else:
                out.append((cuts[k], cuts[k + 1], separator, True))
            first = k + 1
        if len(cuts) - 1 > first:
            self._merge_cuts(cuts, first, len(cuts) - 1, separator, out)
        return out

    def _merge_cuts(
        self, cuts: list[int], first: int, stop: int, separator: str, out: list[Span]
    ) -> None:
        """``_merge`` of pieces ``first..stop-1``: a chunk is cuts[s]..cuts[k]."""
        size, overlap = self.size, self.overlap
        s = first
        for k in range(first, stop):
            n = cuts[k + 1] - cuts[k]
            if cuts[k] - cuts[s] + n > size and k > s:
                self._emit_span(cuts[s], cuts[k], separator, out)
                while s < k and (cuts[k] - cuts[s] > overlap or cuts[k] - cuts[s] + n > size):
                    s += 1
        self._emit_span(cuts[s], cuts[stop], separator, out)

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
        self,
        spans: list[tuple[int, int]],
        lengths: list[int],
        first: int,
        stop: int,
        sep_len: int,
        separator: str,
        out: list[Span],
    ) -> None:
        """Pack pieces ``first..stop-1`` into chunks up to ``size``, keeping up to
        ``overlap`` of each chunk's tail; the current chunk is pieces ``s..k-1``."""
        size, overlap = self.size, self.overlap
        s = first
        total = 0
        for k in range(first, stop):
            n = lengths[k]
            if total + n + (sep_len if k > s else 0) > size and k > s:
                self._emit_span(spans[s][0], spans[k - 1][1], separator, out)
                while k > s and (total > overlap or (total + n + sep_len > size and total > 0)):
                    total -= lengths[s] + (sep_len if k - s > 1 else 0)
                    s += 1
            total += n + (sep_len if k > s else 0)
        self._emit_span(spans[s][0], spans[stop - 1][1], separator, out)

    def _emit_span(self, start: int, end: int, separator: str, out: list[Span]) -> None:
        if self.strip:
            start, end = strip_span(self.text, start, end)
        if end > start:
            out.append((start, end, separator, False))


def fit_span(text: str, start: int, end: int, sizer: Sizer, limit: int) -> Iterator[Piece]:
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
    text: str, sizer: Sizer, splitter: RecursiveSplitter, lo: int = 0, hi: int | None = None
) -> Iterator[Piece]:
    """Split ``text[lo:hi]`` with ``splitter``; re-measure each chunk so that the limit
    holds exactly. A chunk still over the limit is cut by :func:`fit_span`, or flagged
    :data:`~chunking.model.UNSPLITTABLE` when no separator is left. Metadata:
    ``boundary == "separator"`` and the ``separator`` used."""
    limit = splitter.size
    exact = sizer.name == "chars" and splitter.keep != "none"
    shared: dict[str, Mapping[str, Any]] = {}  # one read-only metadata per separator
    for start, end, separator, whole in splitter.split(lo, hi):
        meta = shared.get(separator)
        if meta is None:
            meta = shared[separator] = MappingProxyType(
                {"boundary": "separator", "separator": separator}
            )
        if exact and end - start <= limit:
            yield Piece(start, end, meta)
            continue
        n = sizer.size(text[start:end])
        if n <= limit:
            yield Piece(start, end, meta, n)
        elif whole:
            yield Piece(start, end, {**meta, "flags": [UNSPLITTABLE]}, n)
        else:
            yield from fit_span(text, start, end, sizer, limit)


def dropping_text_error(separator: str) -> ValueError:
    return ValueError(
        f"keep_separator 'none' would drop the separator {separator!r}, which is not "
        "whitespace, losing text; keep it at the 'start' or 'end' instead"
    )
