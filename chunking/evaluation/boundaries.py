"""Boundary metrics: how close a segmentation's cuts are to the cuts a person made.

A segmentation of a text of ``length`` characters is given by its *boundaries*: the
sorted character offsets where a segment starts, excluding 0 (so every boundary ``b``
satisfies ``0 < b < length``). Chunks are compared by their start offsets
(:func:`chunk_starts`), so overlapping chunks and parent-child hierarchies need no
special case.

The metrics, with the conventions of segeval (Fournier 2013), whose definitions the tests
check these against:

- **Pk** (Beeferman et al. 1999): slide a window of ``k + 1`` characters over the text
  (positions ``i`` and ``i + k`` for ``i = 0 .. length - k - 1``); count the windows where
  gold and hypothesis disagree on whether the two ends lie in the same segment; divide
  by ``length - k``. 0 is perfect; a penalty, lower is better.
- **WindowDiff** (Pevzner and Hearst 2002): the same windows; count those where the
  *number* of boundaries inside differs. 0 is perfect.
- ``k`` defaults to half the mean gold segment length, rounded half to even and at least
  2 (segeval's rule: ``round(length / (boundaries + 1) / 2)``). NLTK's ``pk`` divides the
  length by twice the number of boundaries instead, which gives a larger window and a
  different score; pass ``k`` to compare with it.
- **B**, boundary similarity (Fournier 2013): one minus the boundary edit distance
  normalised by the boundaries involved. Boundaries both sides share are matches; a
  gold-only and a hypothesis-only boundary fewer than ``n_t`` characters apart form a
  near miss (a transposition) costing ``distance / n_t``; every other boundary is a full
  miss costing 1. ``B = 1 - cost / (matches + near misses + full misses)``, and 1 when
  neither side has a boundary. Near misses are paired as segeval pairs them: shortest
  distance first, then left to right. ``n_t`` defaults to 2 (near misses 1 character
  apart) as in segeval.
- **precision, recall, F1** within a ``tolerance``: gold and hypothesis boundaries are
  matched one to one when at most ``tolerance`` apart (characters, or sentences after
  mapping each offset to the sentence it falls in); precision is matched / hypothesis
  boundaries, recall matched / gold boundaries (0 / 0 counts as 1: nothing claimed,
  nothing wrong), F1 their harmonic mean (0 when both are 0). This is the usual
  boundary-F1 of segmentation work. segeval's ``precision`` and ``recall`` default to a
  micro-average over the classes "boundary" and "no boundary" of a confusion matrix in
  which a near miss counts as half a hit, so on their own they do not combine into its
  ``fmeasure`` (which averages only over the boundary class); we do not follow it.

Pk and WindowDiff are computed from the boundaries alone, never from a per-character
array: the number of boundaries inside the window that starts at ``i`` changes only at
``b - k`` and ``b``, so both metrics are sums over the pieces between those points
(``O(b log b)`` for ``b`` boundaries, whatever the length). Before scoring a text
(:func:`score_boundaries`), a boundary inside a run of whitespace is moved to the end of
the run: cutting anywhere in the gap between two words is the same cut.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from ..model import Chunk

#: The units a tolerance is measured in.
TOLERANCE_UNITS = ("chars", "sentences")
ToleranceUnit = Literal["chars", "sentences"]
#: segeval's default for B: near misses span fewer than 2 positions (1 character).
DEFAULT_N_T = 2
#: The smallest window segeval uses when it computes one.
MIN_K = 2

_SPACE_RUN = re.compile(r"\s*")
_TOLERANCE = re.compile(r"\s*(\d+)\s*(c|chars?|characters?|s|sents?|sentences?)?\s*", re.IGNORECASE)


def as_boundaries(offsets: Iterable[int], length: int) -> np.ndarray:
    """``offsets`` as sorted, distinct boundaries of a text of ``length`` characters:
    0 and offsets at or past the end (which start no segment) are dropped."""
    found = np.unique(np.fromiter((int(o) for o in offsets), dtype=np.int64))
    return found[(found > 0) & (found < length)]


def chunk_starts(chunks: Iterable[Chunk], length: int) -> list[int]:
    """The boundaries a list of chunks draws: their distinct start offsets but 0.
    Overlapping chunks and nested ones are compared by where they start."""
    return [int(b) for b in as_boundaries((c.start for c in chunks), length)]


def snap_to_words(text: str, boundaries: Iterable[int]) -> list[int]:
    """Each boundary inside a run of whitespace moved to the end of the run (the start of
    the next word); those that reach the end of the text are dropped, duplicates merged."""
    snapped = {_SPACE_RUN.match(text, int(b)).end() for b in boundaries if 0 < b < len(text)}  # type: ignore[union-attr]
    return sorted(b for b in snapped if 0 < b < len(text))


def window_size(gold: Sequence[int], length: int) -> int:
    """``k``: half the mean gold segment length, rounded half to even, at least 2."""
    if length <= 0:
        raise ValueError("the text is empty; there is nothing to segment")
    segments = len(as_boundaries(gold, length)) + 1
    return max(MIN_K, round(Fraction(length, 2 * segments)))


def _check(length: int, k: int) -> None:
    if length <= 0:
        raise ValueError("the text is empty; there is nothing to segment")
    if k < 1:
        raise ValueError(f"the window k must be at least 1 character; got {k}")


def _window_counts(
    gold: np.ndarray, hypothesis: np.ndarray, k: int, windows: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boundaries inside the window starting at ``i`` (those ``b`` with ``i < b <= i + k``)
    for gold and hypothesis, as pieces: lengths and the two counts on each piece of
    ``[0, windows)``."""
    events = np.concatenate(([0, windows], gold - k, gold, hypothesis - k, hypothesis))
    points = np.unique(np.clip(events, 0, windows))
    starts, lengths = points[:-1], np.diff(points)

    def inside(bounds: np.ndarray) -> np.ndarray:
        entered = np.searchsorted(bounds - k, starts, side="right")
        left = np.searchsorted(bounds, starts, side="right")
        return entered - left

    return lengths, inside(gold), inside(hypothesis)


def pk(gold: Sequence[int], hypothesis: Sequence[int], length: int, k: int | None = None) -> float:
    """Pk of ``hypothesis`` against ``gold`` over a text of ``length`` characters (0 is
    perfect); ``k`` defaults to :func:`window_size` of the gold. 0 when no window fits."""
    k = window_size(gold, length) if k is None else k
    _check(length, k)
    windows = length - k
    if windows <= 0:
        return 0.0
    lengths, ref, hyp = _window_counts(
        as_boundaries(gold, length), as_boundaries(hypothesis, length), k, windows
    )
    return float(lengths[(ref > 0) != (hyp > 0)].sum() / windows)


def windowdiff(
    gold: Sequence[int], hypothesis: Sequence[int], length: int, k: int | None = None
) -> float:
    """WindowDiff of ``hypothesis`` against ``gold`` (0 is perfect); ``k`` as for :func:`pk`."""
    k = window_size(gold, length) if k is None else k
    _check(length, k)
    windows = length - k
    if windows <= 0:
        return 0.0
    lengths, ref, hyp = _window_counts(
        as_boundaries(gold, length), as_boundaries(hypothesis, length), k, windows
    )
    return float(lengths[ref != hyp].sum() / windows)


@dataclass(frozen=True)
class EditCounts:
    """The boundary edit distance between two segmentations (one boundary type)."""

    matches: int
    #: Near misses (transpositions) and how far each spans, in characters.
    near_misses: tuple[int, ...]
    full_misses: int

    def cost(self, n_t: int) -> float:
        return self.full_misses + sum(self.near_misses) / n_t

    def similarity(self, n_t: int) -> float:
        """B: 1 - cost / boundaries involved; 1 when there are none."""
        involved = self.matches + len(self.near_misses) + self.full_misses
        return 1.0 if involved == 0 else (involved - self.cost(n_t)) / involved


def boundary_edits(
    a: Sequence[int], b: Sequence[int], length: int, n_t: int = DEFAULT_N_T
) -> EditCounts:
    """Matches, near misses and full misses between boundaries ``a`` and ``b``.

    A near miss pairs an ``a``-only and a ``b``-only boundary ``d < n_t`` characters apart.
    As segeval does, distances are tried from 1 up, and for each distance left to right,
    each boundary taking part in at most one pair. For one distance ``d`` the candidate
    pairs form chains ``p, p + d, p + 2d, ...`` and taking them left to right keeps the
    1st, 3rd, 5th... pair of each chain, which is what is computed here, without a loop
    over the boundaries.
    """
    if n_t < 1:
        raise ValueError(f"n_t must be at least 1; got {n_t}")
    a_set, b_set = as_boundaries(a, length), as_boundaries(b, length)
    shared = np.intersect1d(a_set, b_set, assume_unique=True)
    only_a = np.setdiff1d(a_set, b_set, assume_unique=True)
    only_b = np.setdiff1d(b_set, a_set, assume_unique=True)
    points = np.concatenate((only_a, only_b))
    order = np.argsort(points, kind="stable")
    points = points[order]
    sides = np.concatenate((np.zeros(len(only_a), bool), np.ones(len(only_b), bool)))[order]
    free = np.ones(len(points), bool)
    spans: list[int] = []
    for distance in range(1, n_t):
        idx = np.flatnonzero(free)
        at, side = points[idx], sides[idx]
        partner = np.searchsorted(at, at + distance)
        inside = partner < len(at)
        partner = np.where(inside, partner, 0)
        linked = inside & (at[partner] == at + distance) & (side[partner] != side)
        starts = np.flatnonzero(linked)
        if not len(starts):
            continue
        chain = np.lexsort((at[starts], at[starts] % distance))
        starts = starts[chain]
        first = np.ones(len(starts), bool)
        first[1:] = np.diff(at[starts]) != distance
        run_start = np.maximum.accumulate(np.where(first, np.arange(len(starts)), 0))
        taken = starts[(np.arange(len(starts)) - run_start) % 2 == 0]
        free[idx[taken]] = False
        free[idx[partner[taken]]] = False
        spans.extend([distance] * len(taken))
    return EditCounts(matches=len(shared), near_misses=tuple(spans), full_misses=int(free.sum()))


def boundary_similarity(
    gold: Sequence[int], hypothesis: Sequence[int], length: int, n_t: int = DEFAULT_N_T
) -> float:
    """B of the two segmentations, in [0, 1], 1 when identical; symmetric."""
    return boundary_edits(gold, hypothesis, length, n_t).similarity(n_t)


@dataclass(frozen=True)
class Matching:
    """Gold and hypothesis boundaries paired one to one within a tolerance."""

    #: (gold, hypothesis) offsets of each pair, in order.
    matched: tuple[tuple[int, int], ...]
    #: Gold boundaries no hypothesis boundary is close to.
    missed: tuple[int, ...]
    #: Hypothesis boundaries close to no gold boundary.
    extra: tuple[int, ...]

    @property
    def precision(self) -> float:
        found = len(self.matched) + len(self.extra)
        return 1.0 if found == 0 else len(self.matched) / found

    @property
    def recall(self) -> float:
        wanted = len(self.matched) + len(self.missed)
        return 1.0 if wanted == 0 else len(self.matched) / wanted

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def match_boundaries(
    gold: Sequence[int],
    hypothesis: Sequence[int],
    tolerance: int = 0,
    *,
    positions: Mapping[int, int] | None = None,
) -> Matching:
    """Pair gold and hypothesis boundaries at most ``tolerance`` apart, as many as can be.

    Distances are measured between ``positions[b]`` when given (a sentence index, say),
    else between the offsets. Each gold boundary, left to right, takes the leftmost free
    hypothesis boundary within reach; with windows of equal width on a line this greedy
    choice pairs as many as any matching can. One pass over both lists.
    """
    if tolerance < 0:
        raise ValueError(f"the tolerance must be 0 or more; got {tolerance}")
    g_sorted = sorted({int(b) for b in gold})
    h_sorted = sorted({int(b) for b in hypothesis})

    def at(b: int) -> int:
        return positions[b] if positions is not None else b

    matched: list[tuple[int, int]] = []
    missed: list[int] = []
    extra: list[int] = []
    j = 0
    for g in g_sorted:
        while j < len(h_sorted) and at(h_sorted[j]) < at(g) - tolerance:
            extra.append(h_sorted[j])
            j += 1
        if j < len(h_sorted) and at(h_sorted[j]) <= at(g) + tolerance:
            matched.append((g, h_sorted[j]))
            j += 1
        else:
            missed.append(g)
    extra.extend(h_sorted[j:])
    return Matching(tuple(matched), tuple(missed), tuple(extra))


def parse_tolerance(value: str | int) -> tuple[int, ToleranceUnit]:
    """``"20"`` or ``"20chars"`` -> ``(20, "chars")``; ``"1s"``, ``"1 sentence"`` ->
    ``(1, "sentences")``."""
    found = _TOLERANCE.fullmatch(str(value))
    if found is None:
        raise ValueError(
            f"--tolerance expects a whole number of characters or sentences, such as 20, "
            f"20chars or 1sentence; got {value!r}"
        )
    unit = (found.group(2) or "c").lower()
    return int(found.group(1)), "sentences" if unit.startswith("s") else "chars"


def sentence_positions(text: str, offsets: Iterable[int]) -> dict[int, int]:
    """The index of the sentence each offset falls in (the core's sentence segmentation;
    an offset between two sentences belongs to the next one)."""
    from ..engine.spans import document_sentences

    ends = np.array([end for _, end in document_sentences(text)], dtype=np.int64)
    wanted = np.array(sorted({int(o) for o in offsets}), dtype=np.int64)
    index = np.searchsorted(ends, wanted, side="right")
    return {int(o): int(i) for o, i in zip(wanted, index, strict=True)}


@dataclass(frozen=True)
class BoundaryScores:
    """A hypothesis segmentation scored against a gold one (:func:`score_boundaries`)."""

    pk: float
    windowdiff: float
    b: float
    precision: float
    recall: float
    f1: float
    #: The window of Pk and WindowDiff, in characters.
    k: int
    tolerance: int
    tolerance_unit: ToleranceUnit
    #: Near misses for B span fewer than this many characters.
    n_t: int
    gold_boundaries: int
    boundaries: int
    matching: Matching

    def to_dict(self) -> dict[str, Any]:
        """The scores as JSON-ready values (the ``boundaries`` command's keys); the
        matched, missed and extra boundaries as lists of offsets."""
        data = asdict(self)
        del data["matching"]
        data["matched"] = [list(pair) for pair in self.matching.matched]
        data["missed"] = list(self.matching.missed)
        data["extra"] = list(self.matching.extra)
        return data


def score_boundaries(
    text: str,
    gold: Sequence[int],
    hypothesis: Sequence[int],
    *,
    k: int | None = None,
    tolerance: int = 0,
    tolerance_unit: ToleranceUnit = "chars",
    n_t: int = DEFAULT_N_T,
) -> BoundaryScores:
    """Every boundary metric of ``hypothesis`` against ``gold`` on ``text``.

    Both are first snapped out of whitespace (:func:`snap_to_words`); ``k`` defaults to
    :func:`window_size` of the gold.
    """
    if tolerance_unit not in TOLERANCE_UNITS:
        raise ValueError(f"the tolerance unit must be chars or sentences; got {tolerance_unit!r}")
    length = len(text)
    g = snap_to_words(text, gold)
    h = snap_to_words(text, hypothesis)
    window = window_size(g, length) if k is None else k
    positions = sentence_positions(text, [*g, *h]) if tolerance_unit == "sentences" else None
    matching = match_boundaries(g, h, tolerance, positions=positions)
    return BoundaryScores(
        pk=pk(g, h, length, window),
        windowdiff=windowdiff(g, h, length, window),
        b=boundary_similarity(g, h, length, n_t),
        precision=matching.precision,
        recall=matching.recall,
        f1=matching.f1,
        k=window,
        tolerance=tolerance,
        tolerance_unit=tolerance_unit,
        n_t=n_t,
        gold_boundaries=len(g),
        boundaries=len(h),
        matching=matching,
    )


def boundary_scores(
    text: str,
    gold: Sequence[int],
    hypothesis: Sequence[int] | Sequence[Chunk],
    **options: Any,
) -> dict[str, Any]:
    """:func:`score_boundaries` as a dictionary, for callers that rank by a key (tuning:
    ``"f1"`` or ``"b"``, higher is better; ``"pk"``, ``"windowdiff"``, lower is better).
    ``hypothesis`` is boundaries or chunks (compared by their starts)."""
    starts = [item if isinstance(item, int | np.integer) else item.start for item in hypothesis]
    return score_boundaries(text, gold, [int(s) for s in starts], **options).to_dict()
