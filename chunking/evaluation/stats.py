"""Is the winner real? Intervals, a paired test, the detectable difference and the
split-half stability, all from per-question scores.

Every resampling is scipy's (:func:`scipy.stats.bootstrap`,
:func:`scipy.stats.permutation_test`), seeded, with :data:`RESAMPLES` resamples:

- a trial's quality gets a 95 % percentile bootstrap interval of its mean;
- two trials scored on the same questions are compared *paired*: the mean of the
  per-question differences, its paired-bootstrap interval, and the p-value of a paired
  permutation test (each question's two scores swapped or not). The difference is
  :attr:`Difference.distinguishable` only when the interval excludes 0 **and** p < 0.05;
- the smallest difference this many questions can detect with 80 % power (two-sided,
  5 %) from the spread of the paired differences (normal approximation);
- split-half stability: in :data:`SPLITS` seeded random halves of the questions, how
  often the winner still has the highest mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Resamples of every bootstrap and permutation test.
RESAMPLES = 2000
#: Random half-splits of the split-half stability.
SPLITS = 200
CONFIDENCE = 0.95
ALPHA = 0.05
POWER = 0.8


@dataclass(frozen=True)
class Interval:
    """A mean and its 95 % interval."""

    mean: float
    low: float
    high: float

    def overlaps(self, other: Interval) -> bool:
        return self.low <= other.high and other.low <= self.high

    def to_dict(self) -> dict[str, float]:
        return {"quality": self.mean, "ci_low": self.low, "ci_high": self.high}


@dataclass(frozen=True)
class Difference:
    """``a - b`` over the same questions: mean, paired-bootstrap interval, permutation p."""

    mean: float
    low: float
    high: float
    p_value: float
    questions: int

    @property
    def distinguishable(self) -> bool:
        """The interval excludes 0 and p < 0.05 (both, never one alone)."""
        excludes = self.low > 0 or self.high < 0
        return bool(excludes and self.p_value < ALPHA)

    def to_dict(self) -> dict[str, float | bool]:
        return {
            "mean": self.mean,
            "ci_low": self.low,
            "ci_high": self.high,
            "p_value": self.p_value,
            "distinguishable": self.distinguishable,
        }


def _rng(seed: int | Sequence[int]) -> np.random.Generator:
    return np.random.default_rng(seed if isinstance(seed, int) else list(seed))


def _clean(scores: Sequence[float] | np.ndarray) -> np.ndarray:
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError("scores are one value per question")
    if np.isnan(values).any():
        raise ValueError("a score is NaN: the objective was not computed (is there a model?)")
    return values


def mean_interval(
    scores: Sequence[float] | np.ndarray,
    seed: int | Sequence[int] = 0,
    resamples: int = RESAMPLES,
) -> Interval:
    """The mean of ``scores`` with its 95 % percentile bootstrap interval."""
    from scipy.stats import bootstrap  # type: ignore[import-untyped, unused-ignore]

    values = _clean(scores)
    if len(values) == 0:
        return Interval(math.nan, math.nan, math.nan)
    mean = float(values.mean())
    if np.ptp(values) == 0:  # every resample has the same mean
        return Interval(mean, mean, mean)
    result = bootstrap(
        (values,),
        np.mean,
        n_resamples=resamples,
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=_rng(seed),
    )
    low, high = result.confidence_interval
    return Interval(mean, float(low), float(high))


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def paired_difference(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    seed: int | Sequence[int] = 0,
    resamples: int = RESAMPLES,
) -> Difference:
    """``mean(a - b)`` with its paired-bootstrap interval and paired permutation p-value."""
    from scipy.stats import (  # type: ignore[import-untyped, unused-ignore]
        bootstrap,
        permutation_test,
    )

    x, y = _clean(a), _clean(b)
    if len(x) != len(y):
        raise ValueError(f"paired scores need the same questions; got {len(x)} and {len(y)}")
    if len(x) < 2:
        raise ValueError("comparing two trials needs at least 2 questions")
    diff = x - y
    mean = float(diff.mean())
    if np.ptp(diff) == 0:
        low = high = mean
    else:
        interval = bootstrap(
            (x, y),
            _mean_difference,
            paired=True,
            n_resamples=resamples,
            confidence_level=CONFIDENCE,
            method="percentile",
            rng=_rng(seed),
        ).confidence_interval
        low, high = float(interval.low), float(interval.high)
    if not diff.any():
        p_value = 1.0
    else:
        p_value = float(
            permutation_test(
                (x, y),
                _mean_difference,
                permutation_type="samples",
                n_resamples=resamples,
                rng=_rng(seed),
            ).pvalue
        )
    return Difference(mean, low, high, min(p_value, 1.0), len(x))


def detectable_difference(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray
) -> float:
    """The smallest true mean difference a paired comparison of these questions finds
    with 80 % power at the 5 % level: ``(z(0.975) + z(0.8)) · sd(a - b) / √n``."""
    from scipy.stats import norm  # type: ignore[import-untyped, unused-ignore]

    diff = _clean(a) - _clean(b)
    if len(diff) < 2:
        return math.nan
    spread = float(np.std(diff, ddof=1))
    factor = float(norm.ppf(1 - ALPHA / 2) + norm.ppf(POWER))
    return factor * spread / math.sqrt(len(diff))


@dataclass(frozen=True)
class Stability:
    """In how many of ``splits`` random halves of the questions the winner was first."""

    first: int
    splits: int

    @property
    def share(self) -> float:
        return self.first / self.splits if self.splits else math.nan

    def to_dict(self) -> dict[str, float | int]:
        return {"first": self.first, "splits": self.splits, "share": self.share}


def split_half_stability(
    scores: np.ndarray, winner: int, seed: int | Sequence[int] = 0, splits: int = SPLITS
) -> Stability:
    """``scores`` is trials × questions; in each of ``splits`` seeded halves of the
    questions, is trial ``winner``'s mean the highest (ties count for it)?"""
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2 or not 0 <= winner < matrix.shape[0]:
        raise ValueError("split-half stability takes a trials × questions matrix and a trial")
    count = matrix.shape[1]
    if count < 2 or matrix.shape[0] < 2:
        return Stability(splits, splits)
    rng = _rng(seed)
    first = 0
    for _ in range(splits):
        half = rng.permutation(count)[: count // 2]
        means = matrix[:, half].mean(axis=1)
        first += bool(means[winner] >= means.max())
    return Stability(first, splits)
