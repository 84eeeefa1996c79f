"""How far people agree with each other when they segment a text: the human band.

People asked to cut the same text into topics agree only moderately, so a chunker's
boundary score is read against how well one person's cuts match another's. This module
holds three published sets of human segmentations, the ones segeval bundles as samples
(each text cut by several coders, segments measured in paragraphs), and computes their
mean pairwise agreement with this package's metrics (:mod:`.boundaries`):

- ``kazantseva2012_g5``, ``kazantseva2012_g2``: chapters of Wilkie Collins' *The
  Moonstone* segmented by groups of 4 and 6 annotators (Kazantseva and Szpakowicz 2012);
- ``hearst1997``: the magazine article "Stargazers look for life" segmented by 7 readers
  (Hearst 1997).

B is averaged over each unordered pair of coders of an item (it is symmetric); Pk and
WindowDiff over each ordered pair, with the window computed from the one taken as
reference, as segeval's pairwise means are. The numbers are a reference, not a target:
they were measured in paragraphs, a chunker's in characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, permutations
from statistics import fmean

from .boundaries import boundary_similarity, pk, windowdiff

Masses = tuple[int, ...]

#: Segment lengths (in paragraphs) by item and coder, as published.
HUMAN_SEGMENTATIONS: dict[str, dict[str, dict[str, Masses]]] = {
    "kazantseva2012_g5": {
        "ch1": {"an4": (2, 8, 2, 1), "an1": (11, 2), "an2": (2, 1, 7, 2, 1), "an3": (9, 4)},
        "ch11": {
            "an4": (10, 4, 3, 2, 1, 8, 3, 2, 6, 1, 2, 8, 10, 9, 4, 10, 4, 8, 4, 3, 5, 4),
            "an1": (20, 22, 8, 11, 11, 11, 13, 11, 4),
            "an2": (
                1,
                7,
                2,
                4,
                3,
                3,
                10,
                1,
                1,
                5,
                3,
                2,
                8,
                3,
                3,
                3,
                14,
                4,
                1,
                1,
                4,
                4,
                2,
                7,
                3,
                2,
                3,
                3,
                2,
                1,
                1,
            ),
            "an3": (10, 10, 15, 11, 4, 10, 13, 5, 4, 23, 6),
        },
        "ch4": {
            "an4": (2, 9, 2, 5, 2, 19, 1, 6),
            "an1": (17, 25, 4),
            "an2": (1, 10, 2, 4, 1, 2, 3, 10, 6, 6, 1),
            "an3": (12, 5, 29),
        },
        "ch3": {
            "an4": (2, 3, 4, 2, 5, 17, 4, 1),
            "an1": (6, 5, 27),
            "an2": (3, 8, 2, 3, 17, 2, 2, 1),
            "an3": (3, 15, 15, 5),
        },
    },
    "kazantseva2012_g2": {
        "ch8": {
            "an5": (9, 7, 5, 12, 4, 2),
            "an6": (3, 5, 4, 3, 6, 7, 5, 4, 2),
            "an7": (2, 6, 2, 2, 2, 8, 8, 3, 4, 1, 1),
            "an10": (2, 6, 4, 3, 6, 7, 5, 4, 1, 1),
            "an8": (8, 4, 21, 4, 2),
            "an9": (3, 5, 4, 10, 9, 6, 2),
        },
        "ch10": {
            "an5": (24, 6, 45, 6, 2),
            "an6": (3, 3, 2, 3, 8, 1, 4, 6, 11, 22, 10, 6, 4),
            "an7": (3, 3, 2, 16, 6, 45, 4, 1, 1, 1, 1),
            "an10": (3, 5, 16, 5, 8, 2, 23, 13, 4, 4),
            "an8": (8, 16, 6, 32, 11, 6, 1, 3),
            "an9": (3, 3, 2, 11, 5, 6, 45, 4, 4),
        },
        "ch2": {
            "an5": (4, 7, 3, 1),
            "an6": (4, 7, 3, 1),
            "an7": (5, 6, 3, 1),
            "an10": (5, 5, 4, 1),
            "an8": (14, 1),
            "an9": (14, 1),
        },
        "ch5": {
            "an5": (9, 4, 5, 9, 8, 7),
            "an6": (2, 1, 6, 3, 2, 4, 17, 7),
            "an7": (19, 15, 8),
            "an10": (4, 10, 5, 1, 14, 4, 4),
            "an8": (9, 4, 6, 16, 3, 4),
            "an9": (13, 6, 15, 8),
        },
    },
    "hearst1997": {
        "stargazer": {
            "1": (2, 3, 3, 1, 3, 6, 3),
            "2": (2, 8, 2, 4, 2, 3),
            "3": (2, 1, 2, 3, 1, 3, 1, 3, 2, 2, 1),
            "4": (2, 1, 4, 1, 1, 3, 1, 4, 3, 1),
            "5": (3, 2, 4, 3, 5, 4),
            "6": (2, 3, 4, 2, 2, 5, 3),
            "7": (2, 3, 2, 2, 3, 1, 3, 2, 3),
        }
    },
}

#: Where each set comes from, for the reader.
SOURCES = {
    "kazantseva2012_g5": "The Moonstone, 4 chapters, 4 annotators (Kazantseva & Szpakowicz 2012)",
    "kazantseva2012_g2": "The Moonstone, 4 chapters, 6 annotators (Kazantseva & Szpakowicz 2012)",
    "hearst1997": "'Stargazers look for life', 7 readers (Hearst 1997)",
}


def masses_to_boundaries(masses: Masses) -> list[int]:
    """Segment lengths as boundaries: ``(2, 3, 1)`` -> ``[2, 5]``."""
    out, at = [], 0
    for mass in masses[:-1]:
        at += mass
        out.append(at)
    return out


@dataclass(frozen=True)
class Agreement:
    """Mean pairwise agreement between the coders of one set."""

    name: str
    source: str
    items: int
    coders: int
    #: Mean B over unordered pairs of coders (higher is closer).
    b: float
    #: Mean Pk and WindowDiff over ordered pairs (lower is closer).
    pk: float
    windowdiff: float


def agreement(name: str) -> Agreement:
    """The mean pairwise agreement of the set ``name`` (a key of :data:`HUMAN_SEGMENTATIONS`)."""
    items = HUMAN_SEGMENTATIONS[name]
    b_values: list[float] = []
    pk_values: list[float] = []
    wd_values: list[float] = []
    coders: set[str] = set()
    for codings in items.values():
        coders.update(codings)
        length = sum(next(iter(codings.values())))
        bounds = {coder: masses_to_boundaries(m) for coder, m in codings.items()}
        for one, other in combinations(bounds, 2):
            b_values.append(boundary_similarity(bounds[one], bounds[other], length))
        for hypothesis, reference in permutations(bounds, 2):
            pk_values.append(pk(bounds[reference], bounds[hypothesis], length))
            wd_values.append(windowdiff(bounds[reference], bounds[hypothesis], length))
    return Agreement(
        name=name,
        source=SOURCES[name],
        items=len(items),
        coders=len(coders),
        b=fmean(b_values),
        pk=fmean(pk_values),
        windowdiff=fmean(wd_values),
    )


def human_agreement() -> list[Agreement]:
    """The agreement of every bundled set, in the order of :data:`HUMAN_SEGMENTATIONS`."""
    return [agreement(name) for name in HUMAN_SEGMENTATIONS]


@dataclass(frozen=True)
class Band:
    """The range of mean pairwise human agreement across the sets: (low, high) each."""

    b: tuple[float, float]
    pk: tuple[float, float]
    windowdiff: tuple[float, float]


def human_band() -> Band:
    """The human-agreement band a chunker's scores are drawn against."""
    sets = human_agreement()

    def span(values: list[float]) -> tuple[float, float]:
        return min(values), max(values)

    return Band(
        b=span([s.b for s in sets]),
        pk=span([s.pk for s in sets]),
        windowdiff=span([s.windowdiff for s in sets]),
    )
