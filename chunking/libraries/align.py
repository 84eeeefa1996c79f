"""Place another library's chunks on the source text, honestly.

A library hands back chunk texts and, most of the time, an offset for each
(``start_index``, ``start_char_idx``, semchunk's offsets, ...). A :class:`~chunking.Chunk`
must be the exact slice ``source[start:end]``, so every library chunk is checked here:

- the text is the exact slice at the reported offset: kept as reported, no flag;
- the text is in the source, elsewhere: placed on the occurrence that best continues the
  sequence (right after the previous chunk, or nearest the reported offset) and flagged
  ``"library offset wrong: reported 1,204, text found at 1,377"`` (or ``"library offset
  missing: ..."`` when the library reported none or ``-1``);
- the library changed the text (collapsed or trimmed whitespace, dropped header lines,
  token pieces decoded to U+FFFD): placed by a whitespace-free comparison, or by its
  first and last characters, and flagged ``"text altered: whitespace collapsed"`` and
  similar; the library's own text is kept in the metadata as ``library_text``;
- nothing matches at all: kept at the reported (or next) position with the length of
  its text, flagged ``"text not found: ..."``. No library chunk is ever dropped, except
  empty ones, which cannot be a chunk: the next chunk says how many it replaces.

Non-whitespace source text that no chunk covers (a library that leaves header lines in
metadata, or skips text) is reported on the chunk after it: ``"text left out: 12
characters before this chunk (1,204-1,230)"``, with the ranges in ``left_out``.

Metadata set here: ``flags``, ``library_text`` (when the library's text differs from the
slice), ``library_start`` (when the library reported an offset that is not the start),
``library_index`` (when the chunk moved in the order), ``left_out``.
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model import Piece
from ..units import Sizer

_NON_SPACE = re.compile(r"\S")
_SPACE_RUNS = re.compile(r"\s+")
_WORDS = re.compile(r"\S+")
#: The replacement character a tokenizer's decoder writes for a character cut in two.
BROKEN = "\ufffd"
#: Lengths of the first/last characters tried to place a chunk whose text was changed.
_ANCHORS = (64, 32, 16, 8)


@dataclass(frozen=True)
class LibraryChunk:
    """One chunk as a library returned it."""

    text: str
    #: The offset the library reported; ``None`` (or ``-1``) when it reported none.
    start: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Placed:
    """A library chunk placed on the source: ``[start, end)`` and what was found."""

    start: int
    end: int
    metadata: dict[str, Any]
    flags: list[str]
    order: int


class Aligner:
    """Places library chunks on one source text (see the module docstring)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._norm: _Normalised | None = None

    @property
    def norm(self) -> _Normalised:
        if self._norm is None:
            self._norm = _Normalised(self.source)
        return self._norm

    def next_non_space(self, pos: int) -> int:
        m = _NON_SPACE.search(self.source, pos)
        return m.start() if m else len(self.source)

    def place(
        self,
        found: Sequence[LibraryChunk],
        *,
        reports_offsets: bool = True,
        first_order: int = 0,
    ) -> list[Placed]:
        """Place one sequence of chunks (in the library's order) on the source."""
        placed: list[Placed] = []
        prev: tuple[int, int] | None = None
        empty = 0
        for order, item in enumerate(found, first_order):
            if not item.text:
                empty += 1
                continue
            p = self.place_one(item, prev, reports_offsets=reports_offsets, order=order)
            if empty:
                p.flags.append(_empty_flag(empty, "before"))
                empty = 0
            placed.append(p)
            prev = (p.start, p.end)
        if empty and placed:
            placed[-1].flags.append(_empty_flag(empty, "after"))
        return placed

    def place_one(
        self,
        item: LibraryChunk,
        prev: tuple[int, int] | None,
        *,
        reports_offsets: bool = True,
        order: int = 0,
    ) -> Placed:
        text = item.text
        reported = item.start if item.start is not None and item.start >= 0 else None
        lo = prev[0] if prev else 0
        joined = self.next_non_space(prev[1] if prev else 0)
        metadata = dict(item.metadata)
        flags = list(metadata.pop("flags", ()))
        start = self._exact(text, reported, lo, joined, prev)
        if start is not None:
            end = start + len(text)
        else:
            start, end, altered = self._altered(text, reported, lo, joined)
            metadata["library_text"] = text
            flags.append(altered)
        if reports_offsets and not flags_say(flags, "text not found"):
            if reported is None:
                said = f"reported {item.start}, " if item.start is not None else ""
                flags.append(f"library offset missing: {said}text found at {start:,}")
            elif reported != start:
                flags.append(
                    f"library offset wrong: reported {reported:,}, text found at {start:,}"
                )
        if item.start is not None and item.start != start:
            metadata["library_start"] = item.start
        return Placed(start, end, metadata, flags, order)

    # --- exact text ---------------------------------------------------------------------

    def _exact(
        self,
        text: str,
        reported: int | None,
        lo: int,
        joined: int,
        prev: tuple[int, int] | None = None,
    ) -> int | None:
        """Where ``text`` occurs exactly, or ``None``.

        Preference: the reported offset if it continues the sequence (starts at or
        after the previous chunk's start, no later than the first character the
        previous chunk left uncovered); else an occurrence that continues the sequence
        (nearest the reported offset); else the reported offset after a gap; else the
        occurrence at or after the previous start nearest the reported offset (first
        one if none was reported); else the one before it nearest the sequence. The
        previous chunk's own span is never taken twice.
        """
        src = self.source
        n = len(text)
        exact_reported = (
            reported is not None
            and src.startswith(text, reported)
            and (reported, reported + n) != prev
        )
        if reported is not None and exact_reported and lo <= reported <= joined:
            return reported
        window = [i for i in self._occurrences(text, lo, joined) if (i, i + n) != prev]
        if window:
            if reported is None:
                return window[0]
            return min(window, key=lambda i: abs(i - reported))
        if reported is not None and exact_reported and reported >= lo:
            return reported
        after = src.find(text, lo if reported is None else max(lo, reported))
        if after != -1 and (after, after + n) == prev:
            after = src.find(text, after + 1)
        if reported is not None and reported > lo:
            before = src.rfind(text, lo, reported + n - 1)
            if before != -1 and (before, before + n) == prev:
                before = -1
            candidates = [i for i in (after, before) if i != -1]
            if candidates:
                return min(candidates, key=lambda i: abs(i - reported))
        elif after != -1:
            return after
        if exact_reported:
            return reported
        before = src.rfind(text, 0, lo + n - 1)
        if before != -1 and (before, before + n) == prev:
            before = src.rfind(text, 0, before + n - 1)
        if before != -1:
            return before
        # The library returned the previous chunk again: the same span it is.
        return prev[0] if prev is not None and src.startswith(text, prev[0]) else None

    def _occurrences(self, text: str, lo: int, hi: int, limit: int = 64) -> list[int]:
        """Starts of ``text`` in ``[lo, hi]`` (at most ``limit``)."""
        out: list[int] = []
        i = self.source.find(text, lo, hi + len(text))
        while i != -1 and len(out) < limit:
            out.append(i)
            i = self.source.find(text, i + 1, hi + len(text))
        return out

    # --- altered text -------------------------------------------------------------------

    def _altered(
        self, text: str, reported: int | None, lo: int, joined: int
    ) -> tuple[int, int, str]:
        """Place a text that is not in the source; returns the span and its flag."""
        norm = self.norm
        squeezed = _SPACE_RUNS.sub("", text)
        broken = BROKEN in squeezed
        if broken:
            squeezed = squeezed.replace(BROKEN, "")
        if squeezed:
            expect = norm.from_source(reported if reported is not None else lo)
            i = _nearest(norm.text, squeezed, norm.from_source(lo), expect)
            if i is not None:
                start = norm.to_source(i)
                end = norm.to_source(i + len(squeezed) - 1) + 1
                if broken:
                    start, end = self._widen_for_broken(text, start, end)
                return start, end, self._describe(text, start, end, broken)
            span = self._anchored(squeezed, norm.from_source(lo), expect)
            if span is not None:
                start, end = norm.to_source(span[0]), norm.to_source(span[1] - 1) + 1
                return start, end, self._describe(text, start, end, broken)
        # Nothing of it is in the source: keep it where it was said to be (or next).
        where = reported if reported is not None else min(joined, len(self.source) - 1)
        where = max(0, min(where, len(self.source) - 1))
        end = min(len(self.source), where + max(1, len(text)))
        said = "reported offset" if reported is not None else "next position"
        return where, end, f"text not found: kept at the {said}, {where:,}"

    def _widen_for_broken(self, text: str, start: int, end: int) -> tuple[int, int]:
        """Include the source character a U+FFFD at either edge of ``text`` stands for."""
        stripped = text.strip()
        if stripped.startswith(BROKEN) and start > 0:
            start -= 1
            while start > 0 and self.source[start].isspace():
                start -= 1
        if stripped.endswith(BROKEN) and end < len(self.source):
            while end < len(self.source) - 1 and self.source[end].isspace():
                end += 1
            end += 1
        return start, end

    def _anchored(self, squeezed: str, lo: int, expect: int) -> tuple[int, int] | None:
        """A span (whitespace-free coordinates) from the chunk's first characters to
        its last, when the middle differs."""
        text = self.norm.text
        head = tail = None
        for n in _ANCHORS:
            if n * 2 > len(squeezed) and n != _ANCHORS[-1]:
                continue
            prefix = squeezed[:n]
            head = _nearest(text, prefix, lo, expect)
            if head is not None:
                break
        for n in _ANCHORS:
            if n * 2 > len(squeezed) and n != _ANCHORS[-1]:
                continue
            suffix = squeezed[-n:]
            from_ = head if head is not None else lo
            hit = text.find(suffix, from_)
            if hit != -1:
                tail = hit + len(suffix)
                break
        if head is not None and tail is not None and tail > head:
            return head, tail
        if head is not None:
            return head, min(len(text), head + len(squeezed))
        if tail is not None:
            return max(0, tail - len(squeezed)), tail
        return None

    def _describe(self, text: str, start: int, end: int, broken: bool) -> str:
        """What the library changed, comparing its text with the slice it stands for."""
        piece = self.source[start:end]
        if _SPACE_RUNS.sub("", text) == _SPACE_RUNS.sub("", piece):
            if " ".join(text.split()) == text.strip() and len(text) < len(piece):
                return "text altered: whitespace collapsed"
            return "text altered: whitespace changed"
        if broken and text.replace(BROKEN, "").split() and _squeeze_equal(text, piece):
            return f"text altered: a character cut between tokens (shown as {BROKEN})"
        a, b = _SPACE_RUNS.sub("", piece), _SPACE_RUNS.sub("", text)
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=len(a) > 4000)
        same = sum(block.size for block in matcher.get_matching_blocks())
        parts = []
        if len(a) > same:
            parts.append(f"{len(a) - same:,} source characters left out")
        if len(b) > same:
            parts.append(f"{len(b) - same:,} characters not in the source")
        return "text altered: " + (", ".join(parts) or "characters changed")


def _squeeze_equal(text: str, piece: str) -> bool:
    """Whether ``text`` is ``piece`` once whitespace and U+FFFD are ignored, allowing
    the cut characters at either edge."""
    a = _SPACE_RUNS.sub("", text).replace(BROKEN, "")
    b = _SPACE_RUNS.sub("", piece)
    return a in b and len(b) - len(a) <= 2


def _nearest(text: str, needle: str, lo: int, expect: int) -> int | None:
    """The occurrence of ``needle`` in ``text`` at or after ``lo`` nearest ``expect``;
    else the last one before ``lo``."""
    after = text.find(needle, max(lo, expect))
    before = text.rfind(needle, lo, max(lo, expect) + len(needle) - 1) if expect > lo else -1
    candidates = [i for i in (after, before) if i != -1]
    if candidates:
        return min(candidates, key=lambda i: abs(i - expect))
    first = text.find(needle, lo)
    if first != -1:
        return first
    last = text.rfind(needle, 0, lo + len(needle))
    return last if last != -1 else None


class _Normalised:
    """The source without whitespace, with maps between both coordinates."""

    def __init__(self, source: str) -> None:
        runs = [(m.start(), m.end()) for m in _WORDS.finditer(source)]
        self.source_starts = [s for s, _ in runs]
        self.norm_starts: list[int] = []
        total = 0
        for s, e in runs:
            self.norm_starts.append(total)
            total += e - s
        self.lengths = [e - s for s, e in runs]
        self.text = "".join(source[s:e] for s, e in runs)

    def to_source(self, i: int) -> int:
        """The source offset of whitespace-free character ``i``."""
        k = bisect_right(self.norm_starts, i) - 1
        return self.source_starts[k] + (i - self.norm_starts[k])

    def from_source(self, pos: int) -> int:
        """The whitespace-free index of the first non-space character at or after ``pos``."""
        k = bisect_right(self.source_starts, pos) - 1
        if k >= 0 and pos < self.source_starts[k] + self.lengths[k]:
            return self.norm_starts[k] + pos - self.source_starts[k]
        return self.norm_starts[k + 1] if k + 1 < len(self.norm_starts) else len(self.text)


def _empty_flag(count: int, where: str) -> str:
    return (
        f"library returned empty chunks: {count} {where} this one, not shown "
        "(a chunk cannot be empty)"
    )


def flags_say(flags: Sequence[str], kind: str) -> bool:
    return any(f.startswith(kind) for f in flags)


def flag_kind(flag: str) -> str:
    """A flag's kind: the words before its first colon (``"library offset wrong"``)."""
    return flag.split(":", 1)[0]


# --- from placed chunks to pieces -------------------------------------------------------


def mark_left_out(source: str, placed: Sequence[Placed]) -> None:
    """Flag, on the chunk after it, non-whitespace text that no chunk covers."""
    if not placed:
        return
    ordered = sorted(placed, key=lambda p: (p.start, p.end))
    reach = 0
    for p in ordered:
        if p.start > reach:
            _flag_gap(source, reach, p.start, p, "before")
        reach = max(reach, p.end)
    if reach < len(source):
        _flag_gap(source, reach, len(source), max(ordered, key=lambda p: p.end), "after")


def _flag_gap(source: str, lo: int, hi: int, p: Placed, where: str) -> None:
    words = [(m.start(), m.end()) for m in _WORDS.finditer(source, lo, hi)]
    if not words:
        return
    first, last = words[0][0], words[-1][1]
    p.flags.append(
        f"text left out: {last - first:,} characters {where} this chunk ({first:,}-{last:,})"
    )
    p.metadata.setdefault("left_out", []).append([first, last])


def to_pieces(
    source: str,
    placed: Sequence[Placed],
    sizer: Sizer,
    *,
    limit: int | None = None,
    limit_name: str = "chunk_size",
    sort_key: Any = None,
) -> list[Piece]:
    """Sort placed chunks by position, flag uncovered text and sizes over ``limit``.

    Raises ``ValueError`` when there is nothing to place: a library that returns no
    chunk for a document that is not blank has left all of it out, which no chunk
    could say.
    """
    if not placed:
        raise ValueError(
            "the library returned no chunks for this document: it left all of its text out"
        )
    mark_left_out(source, placed)
    ordered = sorted(placed, key=sort_key or (lambda p: (p.start, p.order)))
    moved = [p.order for p in ordered] != sorted(p.order for p in ordered)
    pieces = []
    for p in ordered:
        size = sizer.size(source[p.start : p.end])
        if limit is not None and size > limit:
            p.flags.append(f"over limit: {size:,} {sizer.name}, {limit_name} is {limit:,}")
        if moved:
            p.metadata["library_index"] = p.order
        if p.flags:
            p.metadata["flags"] = list(p.flags)
        pieces.append(Piece(p.start, p.end, p.metadata, size))
    return _without_blank(source, pieces)


def _without_blank(source: str, pieces: list[Piece]) -> list[Piece]:
    """Drop pieces of whitespace alone (no chunk may be one, see
    :func:`~chunking.model.build_chunks`). The next piece kept (or the last one) says so,
    with the dropped piece's own flags, and takes over its "text left out" findings, so
    that no finding is lost."""
    kept: list[Piece] = []
    carried: dict[str, list[Any]] = {}
    for piece in pieces:
        if source[piece.start : piece.end].isspace():
            own = piece.metadata.get("flags", ())
            left_out = [f for f in own if f.startswith("text left out")]
            said = [f for f in own if f not in left_out]
            carried.setdefault("flags", []).extend(left_out)
            carried.setdefault("left_out", []).extend(piece.metadata.get("left_out", ()))
            carried["flags"].append(
                f"library chunk dropped: whitespace alone at {piece.start:,}-{piece.end:,}"
                + (f" ({'; '.join(said)})" if said else "")
            )
            continue
        if carried:
            piece = _with_carried(piece, carried)
            carried = {}
        kept.append(piece)
    if carried and kept:
        kept[-1] = _with_carried(kept[-1], carried)
    return kept


def _with_carried(piece: Piece, carried: Mapping[str, list[Any]]) -> Piece:
    metadata = dict(piece.metadata)
    for key, values in carried.items():
        if values:
            metadata[key] = [*values, *metadata.get(key, ())]
    return piece._replace(metadata=metadata)


def align(
    source: str,
    found: Sequence[LibraryChunk],
    sizer: Sizer,
    *,
    reports_offsets: bool = True,
    limit: int | None = None,
    limit_name: str = "chunk_size",
) -> list[Piece]:
    """Place ``found`` (one sequence, in the library's order) on ``source`` as pieces."""
    placed = Aligner(source).place(found, reports_offsets=reports_offsets)
    return to_pieces(source, placed, sizer, limit=limit, limit_name=limit_name)
