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
from collections import deque
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from ..model import UNSPLITTABLE
from ..registry import Param, Piece, overlap_below_size, overlap_param, register, size_param
from ..units import Sizer

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
        self._lengths: dict[tuple[int, int], int] = {}
        # Characters with kept separators: pieces are contiguous and a run of pieces
        # measures end - start, so merging needs only the cut positions.
        self._contiguous_chars = sizer.name == "chars" and keep_separator != "none"
        if sizer.name == "chars":
            self.length = self._char_length
        else:
            self.length = self._measured_length

    # -- sizes ------------------------------------------------------------------------

    @staticmethod
    def _char_length(start: int, end: int) -> int:
        return end - start

    def _measured_length(self, start: int, end: int) -> int:
        key = (start, end)
        n = self._lengths.get(key)
        if n is None:
            n = self._lengths[key] = self.sizer.size(self.text[start:end])
        return n

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
        out: list[Span] = []
        good: list[tuple[int, int]] = []
        merge_sep = "" if self.keep != "none" else separator
        size = self.size
        for start, end in self._pieces(segment, lo, separator):
            if self.length(start, end) < size:
                good.append((start, end))
                continue
            if good:
                out.extend(self._merge(good, merge_sep, separator))
                good = []
            if rest:
                out.extend(self._split(start, end, rest))
            else:
                out.append((start, end, separator, True))
        if good:
            out.extend(self._merge(good, merge_sep, separator))
        return out

    def _split_contiguous_chars(
        self, segment: str, lo: int, separator: str, rest: list[str]
    ) -> list[Span]:
        """``_split`` and ``_merge`` for the common case, working on cut positions."""
        hi = lo + len(segment)
        if not separator:
            cuts = list(range(lo, hi + 1))
        else:
            pattern = self._patterns[separator]
            at = [m.start() for m in pattern.finditer(segment)]
            if self.keep == "end":
                at = [m.end() for m in pattern.finditer(segment)]
            cuts = [lo]
            for a in at:
                if a and a + lo != cuts[-1]:
                    cuts.append(a + lo)
            if cuts[-1] != hi:
                cuts.append(hi)
        size, overlap = self.size, self.overlap
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
            if cuts[k] - cuts[s] + n > size:
                if k > s:
                    self._emit_span(cuts[s], cuts[k], separator, out)
                    while s < k and (cuts[k] - cuts[s] > overlap or cuts[k] - cuts[s] + n > size):
                        s += 1
        self._emit_span(cuts[s], cuts[stop], separator, out)

    def _pieces(self, segment: str, lo: int, separator: str) -> Iterator[tuple[int, int]]:
        """The non-empty pieces of ``segment`` split at ``separator`` (absolute offsets)."""
        if not separator:
            return ((lo + i, lo + i + 1) for i in range(len(segment)))
        matches = self._patterns[separator].finditer(segment)
        if self.keep == "start":
            cuts = [0, *(m.start() for m in matches), len(segment)]
            spans = zip(cuts, cuts[1:])
        elif self.keep == "end":
            cuts = [0, *(m.end() for m in matches), len(segment)]
            spans = zip(cuts, cuts[1:])
        else:
            bounds = [0]
            for m in matches:
                bounds += (m.start(), m.end())
            bounds.append(len(segment))
            spans = zip(bounds[::2], bounds[1::2])
        return ((lo + a, lo + b) for a, b in spans if b > a)

    def _merge(
        self, pieces: list[tuple[int, int]], merge_sep: str, separator: str
    ) -> list[Span]:
        """Pack pieces into chunks up to ``size``, keeping up to ``overlap`` of the tail."""
        size, overlap, length = self.size, self.overlap, self.length
        sep_len = self.sizer.size(merge_sep) if merge_sep else 0
        out: list[Span] = []
        current: deque[tuple[int, int, int]] = deque()
        total = 0
        for start, end in pieces:
            n = length(start, end)
            if total + n + (sep_len if current else 0) > size:
                if current:
                    self._emit(current, separator, out)
                    while current and (
                        total > overlap or (total + n + sep_len > size and total > 0)
                    ):
                        total -= current[0][2] + (sep_len if len(current) > 1 else 0)
                        current.popleft()
            current.append((start, end, n))
            total += n + (sep_len if len(current) > 1 else 0)
        if current:
            self._emit(current, separator, out)
        return out

    def _emit(self, current: deque, separator: str, out: list[Span]) -> None:
        self._emit_span(current[0][0], current[-1][1], separator, out)

    def _emit_span(self, start: int, end: int, separator: str, out: list[Span]) -> None:
        if self.strip:
            start, end = strip_span(self.text, start, end)
        if end > start:
            out.append((start, end, separator, False))


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Narrow ``[start, end)`` to exclude leading and trailing whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


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


def recursive_pieces(text: str, sizer: Sizer, splitter: RecursiveSplitter) -> Iterator[Piece]:
    """Run ``splitter`` and re-measure each chunk so that the limit holds exactly."""
    limit = splitter.size
    exact = sizer.name == "chars" and splitter.keep != "none"
    shared: dict[str, Mapping[str, Any]] = {}  # one read-only metadata per separator
    for start, end, separator, whole in splitter.split():
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


def _separators_param(default: tuple[str, ...]) -> Param:
    return Param(
        "separators",
        list,
        list(default),
        "Separators to try, from the most to the least meaningful; the empty string "
        "splits between characters. As in LangChain's RecursiveCharacterTextSplitter.",
    )


KEEP_SEPARATOR = Param(
    "keep_separator",
    str,
    "end",
    "Where a separator goes: at the start of the next piece (LangChain's "
    "keep_separator=True), at the end of the previous one, or dropped ('none').",
    choices=KEEP_CHOICES,
)
STRIP_WHITESPACE = Param(
    "strip_whitespace", bool, True, "Trim whitespace at both ends of every chunk."
)
SEPARATOR_REGEX = Param(
    "is_separator_regex", bool, False, "Read the separators as regular expressions."
)


@register(
    "recursive",
    label="Recursive",
    description="Split at the most meaningful separator that makes pieces fit "
    "(paragraphs, then lines, sentence ends, words, characters), then merge "
    "neighbouring pieces up to the size limit. The general-purpose default.",
    params=(
        size_param(1000),
        overlap_param(0),
        Param(
            "unit",
            str,
            "chars",
            "What size and overlap count: characters, words or cl100k_base tokens.",
            choices=("chars", "words", "tokens"),
        ),
        _separators_param(DEFAULT_SEPARATORS),
        KEEP_SEPARATOR,
        STRIP_WHITESPACE,
        SEPARATOR_REGEX,
    ),
    checks=(overlap_below_size,),
)
def _recursive(text: str, p: Mapping[str, Any], sizer: Sizer) -> Iterator[Piece]:
    splitter = RecursiveSplitter(
        text,
        sizer,
        p["size"],
        p["overlap"],
        p["separators"],
        p["keep_separator"],
        p["strip_whitespace"],
        p["is_separator_regex"],
    )
    return recursive_pieces(text, sizer, splitter)
