"""Place another library's chunks on the source text, honestly.

A library hands back chunk texts and, most of the time, an offset for each
(``start_index``, ``start_char_idx``, semchunk's offsets, ...). A :class:`~chunking.Chunk`
must be the exact slice ``source[start:end]``, so every library chunk is checked here:

- the text is the exact slice at the reported offset: kept as reported, no flag;
- the text is in the source, elsewhere: placed where the sequence puts it (below) and
  flagged ``"library offset wrong: reported 1,204, text found at 1,377"`` (or
  ``"library offset missing: ..."`` when the library reported none or ``-1``);
- the library changed the text (collapsed or trimmed whitespace, dropped header lines,
  token pieces decoded to U+FFFD): placed by a whitespace-free comparison, or by its
  first and last characters, and flagged ``"text altered: whitespace collapsed"`` and
  similar; the library's own text is kept in the metadata as ``library_text``;
- nothing matches at all: kept at the reported (or next) position with the length of
  its text, flagged ``"text not found: ..."``. No library chunk is ever dropped, except
  empty ones, which cannot be a chunk: the next chunk says how many it replaces.

**Placed as a whole, in order.** On repetitive text (contracts, logs, templated
reports) a chunk's text occurs many times, and the first occurrence after the previous
chunk is often not the library's: LlamaIndex's ``start_char_idx`` and LangChain's
``start_index`` come from ``str.find`` and get exactly this wrong. So the chunk list is
placed at once: among the occurrences of each chunk's text (overlapping ones
included), starts that never decrease in the library's order and leave the fewest
non-whitespace characters uncovered. It is a dynamic programme over occurrences,
chunk by chunk; a partial placement is kept unless another one at the same spot is
at least as good whatever follows (a shorter reach can only leave the text between
the two reaches uncovered). Ties go to the placement with the most chunks at their
reported offsets, then the nearest to them: the library's offset only breaks ties.
When the reported offsets are already exact, in order and leave only whitespace
uncovered, that is the answer and nothing is searched. Otherwise a greedy pass (one
partial placement carried along) first gives an upper bound: a partial placement that
has already left out more is dropped, which on periodic text leaves little to search.
Invisible characters (ZWJ, a BOM, bidirectional marks) that a library dropped are
ignored like whitespace when its changed text is looked for.

The search is bounded: at most :data:`MAX_OCCURRENCES` places per chunk (past that,
those that continue the sequence without a gap, from both ends, the first one after
it and the reported one), every place up to :data:`_HORIZON` characters past the
sequence and the first one beyond, :data:`_BEAM` partial placements from one chunk to
the next, and past :data:`_WORK` pairs of (partial placement, place) for one chunk,
only the places that continue each placement without a gap and the first one after.
Within those bounds the uncovered text is the least possible;
when a bound cut a chunk's places and the result leaves text out, the chunk says so:
``"placement capped: ..."``. A chunk none of whose places is at or after the
sequence (a library that returns a chunk out of order) is placed on its own, nearest
its reported offset, and the sequence goes on without it.

Non-whitespace source text that no chunk covers (a library that leaves header lines in
metadata, or skips text) is reported on the chunk after it: ``"text left out: 12
characters before this chunk (1,204-1,230)"``, with the ranges in ``left_out``; placed
in order, that is only text that no consistent placement covers.

Metadata set here: ``flags``, ``library_text`` (when the library's text differs from the
slice), ``library_start`` (when the library reported an offset that is not the start),
``library_index`` (when the chunk moved in the order), ``left_out``.
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_left, bisect_right, insort
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from ..model import Piece
from ..units import Sizer

_NON_SPACE = re.compile(r"\S")
_SPACE_RUNS = re.compile(r"\s+")
_WORDS = re.compile(r"\S+")
#: The replacement character a tokenizer's decoder writes for a character cut in two.
BROKEN = "\ufffd"
#: Lengths of the first/last characters tried to place a chunk whose text was changed.
_ANCHORS = (64, 32, 16, 8)
#: The most places tried for one chunk's text (see :func:`_occurrences`).
MAX_OCCURRENCES: Final = 64
#: The most partial placements carried from one chunk to the next.
_BEAM: Final = 32
#: How far past the end of the sequence so far every place of a text is tried.
_HORIZON: Final = 4096
#: Pairs (placement so far, place of the next chunk) tried in full for one chunk.
_WORK: Final = 1024


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


@dataclass(frozen=True)
class _Spot:
    """A place for one library chunk: ``[start, end)`` and how its text matched there
    (``exact``; ``squeezed``: the same text once whitespace and U+FFFD are ignored;
    ``anchored``: by its first and last characters; ``missing``: not found at all)."""

    start: int
    end: int
    match: str = "exact"
    broken: bool = False


@dataclass(frozen=True)
class _State:
    """A placement of the chunks so far, the last one at ``spot`` (``None`` before the
    first), covering the text up to ``reach``; ``cost`` is (non-whitespace characters
    left uncovered, chunks away from their reported offset, total distance from it)."""

    spot: _Spot | None
    start: int
    reach: int
    cost: tuple[int, int, int]
    back: _State | None


class _Found(NamedTuple):
    """A placement of a chunk sequence: a spot per chunk, the chunks whose places were
    not all tried (when that may have mattered), its cost, and whether every chunk is
    in the sequence (none placed on its own)."""

    spots: list[_Spot]
    capped: set[int]
    cost: tuple[int, int, int]
    whole: bool

    @property
    def left_out(self) -> int:
        return self.cost[0]


def _lead(state: _State, solid: Callable[[int], int]) -> tuple[int, int, int]:
    """A placement's cost with the text up to its reach counted as covered: the
    smaller, the more it beats placements that reach further (see
    :meth:`Aligner._dominates`)."""
    return (state.cost[0] - solid(state.reach), state.cost[1], state.cost[2])


def _reported(item: LibraryChunk) -> int | None:
    """The offset a library reported, ``None`` for none (or ``-1``)."""
    return item.start if item.start is not None and item.start >= 0 else None


def _occurrences(
    text: str, needle: str, lo: int, joined: int, end: int, expect: int | None
) -> tuple[list[int], bool]:
    """Starts of ``needle`` in ``text[lo:end]`` (overlapping ones included), and whether
    some were left out.

    All of them up to :data:`_HORIZON` characters past ``joined`` (where a chunk stops
    continuing the sequence without a gap) and the first one further on, if there are
    at most :data:`MAX_OCCURRENCES`; else the first and last of those in
    ``[lo, joined]`` and the first after it. ``expect`` (the reported offset) is always
    kept when the needle is there.
    """
    n = len(needle)
    horizon = joined + max(_HORIZON, 2 * n)
    starts: list[int] = []
    i = text.find(needle, lo, min(end, horizon + n))
    while i != -1 and len(starts) <= MAX_OCCURRENCES:
        starts.append(i)
        i = text.find(needle, i + 1, min(end, horizon + n))
    cut = len(starts) > MAX_OCCURRENCES
    if cut:
        kept = {s for s in starts[: MAX_OCCURRENCES // 2] if s <= joined}
        i = text.rfind(needle, lo, min(end, joined + n))
        while i != -1 and len(kept) < MAX_OCCURRENCES:
            kept.add(i)
            i = text.rfind(needle, lo, i + n - 1)
        after = text.find(needle, joined + 1, end)
        starts = sorted(kept | ({after} if after != -1 else set()))
    elif not starts or starts[-1] <= joined:
        after = text.find(needle, max(lo, horizon + 1), end)
        if after != -1:
            starts.append(after)
    if (
        expect is not None
        and expect >= lo
        and expect + n <= end
        and text.startswith(needle, expect)
        and expect not in starts
    ):
        insort(starts, expect)
    return starts, cut


class Aligner:
    """Places library chunks on one source text (see the module docstring)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._norm: _Normalised | None = None
        self._visible: _Normalised | None = None
        #: Characters of the source that are neither whitespace nor printable (ZWJ, a
        #: BOM, bidirectional marks, control characters): some libraries drop them.
        self._hidden = "".join(
            re.escape(ch) for ch in sorted(set(source)) if not ch.isprintable() and not ch.isspace()
        )
        self._unseen = re.compile(rf"[\s{self._hidden}]+") if self._hidden else _SPACE_RUNS

    @property
    def norm(self) -> _Normalised:
        """The source without whitespace (to count what is uncovered)."""
        if self._norm is None:
            self._norm = _Normalised(self.source, _WORDS)
        return self._norm

    @property
    def visible(self) -> _Normalised:
        """The source without whitespace and invisible characters (to find a text the
        library changed)."""
        if self._visible is None:
            runs = re.compile(rf"[^\s{self._hidden}]+") if self._hidden else _WORDS
            self._visible = _Normalised(self.source, runs)
        return self._visible

    def squeeze(self, text: str) -> str:
        """``text`` without whitespace and the source's invisible characters."""
        return self._unseen.sub("", text)

    def next_non_space(self, pos: int) -> int:
        m = _NON_SPACE.search(self.source, pos)
        return m.start() if m else len(self.source)

    def place(
        self,
        found: Sequence[LibraryChunk],
        *,
        reports_offsets: bool = True,
        first_order: int = 0,
        within: tuple[int, int] | None = None,
    ) -> list[Placed]:
        """Place one sequence of chunks (in the library's order) on the source, as a
        whole (see the module docstring); ``within`` keeps them inside a span (a parent
        chunk's) when their texts are found there."""
        items: list[tuple[int, LibraryChunk, int]] = []  # (order, chunk, empty ones before)
        empty = 0
        for order, item in enumerate(found, first_order):
            if not item.text:
                empty += 1
                continue
            items.append((order, item, empty))
            empty = 0
        bounds = within if within is not None else (0, len(self.source))
        spots = self._as_reported(items, bounds)
        capped: set[int] = set()
        if spots is None:
            # A greedy pass bounds the full search: no placement that has already left
            # out more text than the greedy one did can be the best.
            greedy = self._search(items, bounds, beam=1)
            best = self._search(items, bounds, bound=greedy.left_out if greedy.whole else None)
            if greedy.whole and greedy.cost < best.cost:
                best = greedy._replace(capped=best.capped)
            spots, capped = best.spots, best.capped
        placed = []
        for k, ((order, item, before), spot) in enumerate(zip(items, spots, strict=True)):
            p = self._placed(order, item, spot, reports_offsets=reports_offsets)
            if before:
                p.flags.append(_empty_flag(before, "before"))
            if k in capped:
                p.flags.append(
                    f"placement capped: this text has more than {MAX_OCCURRENCES:,} possible "
                    "places; not all were tried, so a placement in order leaving less text "
                    "out may exist"
                )
            placed.append(p)
        if empty and placed:
            placed[-1].flags.append(_empty_flag(empty, "after"))
        return placed

    def _placed(
        self, order: int, item: LibraryChunk, spot: _Spot, *, reports_offsets: bool
    ) -> Placed:
        """The chunk at ``spot``, with what differs from what the library said."""
        reported = _reported(item)
        metadata = dict(item.metadata)
        flags = list(metadata.pop("flags", ()))
        if spot.match == "missing":
            said = "reported offset" if reported is not None else "next position"
            metadata["library_text"] = item.text
            flags.append(f"text not found: kept at the {said}, {spot.start:,}")
        elif spot.match != "exact":
            metadata["library_text"] = item.text
            flags.append(self._describe(item.text, spot.start, spot.end, spot.broken))
        if reports_offsets and spot.match != "missing":
            if reported is None:
                said = f"reported {item.start}, " if item.start is not None else ""
                flags.append(f"library offset missing: {said}text found at {spot.start:,}")
            elif reported != spot.start:
                flags.append(
                    f"library offset wrong: reported {reported:,}, text found at {spot.start:,}"
                )
        if item.start is not None and item.start != spot.start:
            metadata["library_start"] = item.start
        return Placed(spot.start, spot.end, metadata, flags, order)

    # --- placing the sequence -----------------------------------------------------------

    def _as_reported(
        self, items: Sequence[tuple[int, LibraryChunk, int]], bounds: tuple[int, int]
    ) -> list[_Spot] | None:
        """The chunks at their reported offsets, when that is already the best placement:
        every text exact there, in order, and nothing but whitespace left uncovered."""
        lo, hi = bounds
        spots = []
        reach = start = lo
        for _, item, _ in items:
            at, n = item.start, len(item.text)
            if at is None or at < start or at + n > hi or not self.source.startswith(item.text, at):
                return None
            if at > reach and self._uncovered(reach, at):
                return None
            spots.append(_Spot(at, at + n))
            start, reach = at, max(reach, at + n)
        return spots if not self._uncovered(reach, hi) else None

    def _search(
        self,
        items: Sequence[tuple[int, LibraryChunk, int]],
        bounds: tuple[int, int],
        *,
        beam: int = _BEAM,
        bound: int | None = None,
    ) -> _Found:
        """The best placement of ``items`` (a dynamic programme over their possible
        places, see the module docstring), carrying at most ``beam`` placements from
        one chunk to the next and none that leaves out more than ``bound``
        non-whitespace characters."""
        lo, hi = bounds
        layer = [_State(None, lo, lo, (0, 0, 0), None)]
        chain: list[int] = []
        chosen: dict[int, _Spot] = {}
        capped: set[int] = set()
        for k, (_, item, _) in enumerate(items):
            reported = _reported(item)
            spots, cut = self._spots(item.text, reported, layer, bounds)
            following, local = self._advance(layer, spots, reported)
            if not following:  # every place is before the sequence: placed on its own
                chosen[k] = min(
                    spots, key=lambda s: -s.start if reported is None else abs(s.start - reported)
                )
                continue
            following, pruned = self._prune(following, beam, bound)
            cut = cut or pruned or local
            if cut:
                capped.add(k)
            layer = following
            chain.append(k)
        finals = [(self._total(s, hi), s) for s in layer]
        cost, best = min(finals, key=lambda pair: pair[0])
        state: _State | None = best
        for k in reversed(chain):
            assert state is not None and state.spot is not None
            chosen[k] = state.spot
            state = state.back
        whole = len(chain) == len(items)
        spots = [chosen[k] for k in range(len(items))]
        return _Found(spots, capped if cost[0] or not whole else set(), cost, whole)

    def _total(self, state: _State, hi: int) -> tuple[int, int, int]:
        """A complete placement's cost, with the text after its reach up to ``hi``."""
        c = state.cost
        return (c[0] + self._uncovered(state.reach, hi), c[1], c[2])

    def _prune(
        self, states: list[_State], beam: int = _BEAM, bound: int | None = None
    ) -> tuple[list[_State], bool]:
        """The placements worth carrying on, by start, and whether some were cut.

        Dropped first: those that have left out more than ``bound`` (a placement
        found before did better; text left out only grows), unless that is all of
        them; then those that one starting no later beats whatever follows
        (:meth:`_dominates`), checked against the two best candidates met so far (the
        least uncovered text, and the least once the text up to each reach is
        counted), so in linear time. On periodic text that leaves the placement in
        step with the library and few others. If more than ``beam`` are left, the
        most promising are kept: least text uncovered up to the furthest reach of
        the least-cost ones, then the tie-breakers.
        """
        if bound is not None:
            states = [s for s in states if s.cost[0] <= bound] or states
        solid = self.norm.from_source
        kept: list[_State] = []
        least: _State | None = None
        ahead: _State | None = None
        for state in sorted(states, key=lambda s: (s.start, s.cost)):
            if any(b is not None and self._dominates(b, state) for b in (least, ahead)):
                continue
            kept.append(state)
            if least is None or (state.cost, -state.reach) < (least.cost, -least.reach):
                least = state
            if ahead is None or _lead(state, solid) < _lead(ahead, solid):
                ahead = state
        if len(kept) <= beam:
            return kept, False
        fewest = min(s.cost[0] for s in kept)
        frontier = max(s.reach for s in kept if s.cost[0] == fewest)

        def promise(s: _State) -> tuple[int, int, int]:
            return (s.cost[0] + self._uncovered(s.reach, frontier), s.cost[1], s.cost[2])

        return sorted(sorted(kept, key=promise)[:beam], key=lambda s: s.start), True

    def _uncovered(self, lo: int, hi: int) -> int:
        """Non-whitespace characters in ``source[lo:hi]``."""
        if hi <= lo:
            return 0
        if hi - lo <= 64:
            return sum(1 for _ in _NON_SPACE.finditer(self.source, lo, hi))
        return self.norm.from_source(hi) - self.norm.from_source(lo)

    # --- where one chunk may go ---------------------------------------------------------

    def _spots(
        self,
        text: str,
        reported: int | None,
        layer: Sequence[_State],
        bounds: tuple[int, int],
    ) -> tuple[list[_Spot], bool]:
        """Where ``text`` may go after the placements in ``layer``, and whether not all
        of its places were kept: exact occurrences at or after the earliest start; else
        the nearest before it; else the same text with its whitespace (or U+FFFD)
        changed, likewise; else a span from its first and last characters; else a
        place for a text not found. A chunk expected inside ``bounds`` that is not
        found there is looked for everywhere."""
        whole = (0, len(self.source))
        lo = min(s.start for s in layer)
        joined = min(bounds[1], max(self.next_non_space(s.reach) for s in layer))
        starts, cut = _occurrences(self.source, text, lo, joined, bounds[1], reported)
        if starts:
            return [_Spot(i, i + len(text)) for i in starts], cut
        if bounds != whole:
            return self._spots(text, reported, layer, whole)
        earlier = {self.source.rfind(text, 0, lo + len(text) - 1), reported}
        exact = sorted(
            i for i in earlier if i is not None and i >= 0 and self.source.startswith(text, i)
        )
        if exact:
            return [_Spot(i, i + len(text)) for i in exact], False
        altered = self._altered_spots(text, reported, lo, joined, len(self.source))
        if altered is not None:
            return altered
        best = min(layer, key=lambda s: s.cost)
        where = reported if reported is not None else self.next_non_space(best.reach)
        where = max(0, min(where, len(self.source) - 1))
        return [_Spot(where, min(len(self.source), where + len(text)), "missing")], False

    def _advance(
        self, layer: Sequence[_State], spots: Sequence[_Spot], reported: int | None
    ) -> tuple[list[_State], bool]:
        """Every placement one chunk further, and whether some were not tried.

        Each spot after each placement in ``layer`` that starts no later, the
        dominated ones dropped; past :data:`_WORK` pairs, each placement goes on only
        to the spots that continue it without a gap and the first one after them.
        """
        spots = sorted(spots, key=lambda s: (s.start, s.end))
        local = len(layer) * len(spots) > _WORK
        before: list[list[_State]] = [[] for _ in spots]
        starts = [s.start for s in spots]
        for state in layer:
            first = bisect_left(starts, state.start)
            last = len(spots)
            if local:
                last = min(last, bisect_right(starts, self.next_non_space(state.reach)) + 1)
            for k in range(first, last):
                before[k].append(state)
        out: list[_State] = []
        for spot, states in zip(spots, before, strict=True):
            missed = int(reported is not None and spot.start != reported)
            away = abs(spot.start - reported) if reported is not None else 0
            front: list[_State] = []
            for state in states:
                gap = self._uncovered(state.reach, spot.start)
                cost = (state.cost[0] + gap, state.cost[1] + missed, state.cost[2] + away)
                reach = max(state.reach, spot.end)
                self._keep(front, _State(spot, spot.start, reach, cost, state))
            out.extend(front)
        return out, local

    def _keep(self, front: list[_State], new: _State) -> None:
        """Add ``new`` to the placements of one spot unless one of them is at least as
        good whatever follows (:meth:`_dominates`); drop those it is better than."""
        if any(self._dominates(old, new) for old in front):
            return
        front[:] = [old for old in front if not self._dominates(new, old)]
        front.append(new)

    def _dominates(self, a: _State, b: _State) -> bool:
        """Whether ``a`` ends up no worse than ``b`` whatever chunks follow, ``a``
        starting no later than ``b`` (so that every chunk that can follow ``b`` can
        follow ``a``): a shorter reach can leave at most the text between the two
        reaches uncovered."""
        behind = self._uncovered(a.reach, b.reach)
        return (a.cost[0] + behind, a.cost[1], a.cost[2]) <= b.cost

    def _altered_spots(
        self, text: str, reported: int | None, lo: int, joined: int, end: int
    ) -> tuple[list[_Spot], bool] | None:
        """Places for a text that is not in the source as it is, or ``None``: the same
        text once whitespace is ignored; else once the source's invisible characters
        are ignored too (LangChain's Markdown splitter drops them); else from its first
        and last characters."""
        ways = [(self.norm, _SPACE_RUNS.sub("", text))]
        if self._hidden:
            ways.append((self.visible, self.squeeze(text)))
        for norm, squeezed in ways:
            broken = BROKEN in squeezed
            squeezed = squeezed.replace(BROKEN, "")
            if not squeezed:
                return None
            n = len(squeezed)
            nlo = norm.from_source(lo)
            expect = norm.from_source(reported) if reported is not None else None
            starts, cut = _occurrences(
                norm.text, squeezed, nlo, norm.from_source(joined), norm.from_source(end), expect
            )
            if not starts:
                before = norm.text.rfind(squeezed, 0, nlo + n - 1)
                starts = [before] if before != -1 else []
            spots = []
            for i in starts:
                start, stop = norm.to_source(i), norm.to_source(i + n - 1) + 1
                if broken:
                    start, stop = self._widen_for_broken(text, start, stop)
                spots.append(_Spot(start, stop, "squeezed", broken))
            if spots:
                return spots, cut
        span = self._anchored(norm, squeezed, nlo, expect if expect is not None else nlo)
        if span is None:
            return None
        start, stop = norm.to_source(span[0]), norm.to_source(span[1] - 1) + 1
        return [_Spot(start, stop, "anchored", broken)], False

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

    def _anchored(
        self, norm: _Normalised, squeezed: str, lo: int, expect: int
    ) -> tuple[int, int] | None:
        """A span (in ``norm``'s coordinates) from the chunk's first characters to its
        last, when the middle differs."""
        text = norm.text
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
        if self.squeeze(text) == self.squeeze(piece):
            dropped = Counter(_invisible(piece)) - Counter(_invisible(text))
            if dropped:
                codes = ", ".join(f"U+{ord(ch):04X}" for ch in sorted(dropped))
                return f"text altered: invisible characters dropped ({codes})"
        if broken and text.replace(BROKEN, "").split() and _squeeze_equal(text, piece):
            return f"text altered: a character cut between tokens (shown as {BROKEN})"
        a, b = self.squeeze(piece), self.squeeze(text)
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=len(a) > 4000)
        same = sum(block.size for block in matcher.get_matching_blocks())
        parts = []
        if len(a) > same:
            parts.append(f"{len(a) - same:,} source characters left out")
        if len(b) > same:
            parts.append(f"{len(b) - same:,} characters not in the source")
        return "text altered: " + (", ".join(parts) or "characters changed")


def _invisible(text: str) -> list[str]:
    """The characters of ``text`` that are neither whitespace nor printable."""
    return [ch for ch in text if not ch.isprintable() and not ch.isspace()]


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
    """The source with only its ``kept`` runs of characters (without whitespace), with
    maps between both coordinates."""

    def __init__(self, source: str, kept: re.Pattern[str]) -> None:
        runs = [(m.start(), m.end()) for m in kept.finditer(source)]
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
    chunk (or only whitespace) for a document that is not blank has left all of it
    out, which no chunk could say.
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
    kept = _without_blank(source, pieces)
    if not kept:
        raise ValueError(
            "the library returned no chunks for this document but whitespace: it left all "
            "of its text out"
        )
    return kept


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
