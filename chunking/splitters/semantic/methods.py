"""Breakpoint methods: how a series of distances between consecutive sentence windows
becomes a cutoff, and the automatic choice between methods. Pure numpy."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ...units import DEFAULT_MODEL_WINDOW, SPECIAL_TOKENS

METHODS = ("percentile", "similarity", "std", "iqr", "gradient", "count", "auto")
#: Every method but ``auto``: the ones with a formula.
FORMULA_METHODS = METHODS[:-1]
#: The threshold each method uses when none is given (``count``: see :func:`default_count`).
DEFAULT_THRESHOLDS: Mapping[str, float] = {
    "percentile": 95.0,
    "similarity": 0.8,
    "std": 3.0,
    "iqr": 1.5,
    "gradient": 95.0,
}
#: The thresholds a bounded method accepts, lowest and highest (:func:`check_threshold`);
#: std and iqr take any finite k, count any whole number from 1.
THRESHOLD_RANGES: Mapping[str, tuple[float, float]] = {
    "percentile": (0.0, 100.0),
    "similarity": (-1.0, 1.0),
    "gradient": (0.0, 100.0),
}
#: Sentences per chunk that ``count`` aims at when no count is given.
SENTENCES_PER_CHUNK = 10
#: Registry value of ``threshold`` meaning "the method's own default".
METHOD_DEFAULT = -1.0
#: Registry value of ``min_size`` meaning "a tenth of ``max_size``"
#: (:func:`~chunking.splitters.semantic.analysis.resolve_min_size`).
AUTO_MIN_SIZE = -1
#: The default unit and largest chunk: the default model's window in its own word
#: pieces, so that it reads every chunk whole (the Semantic page starts there too).
DEFAULT_UNIT = "model"
DEFAULT_MAX_SIZE = DEFAULT_MODEL_WINDOW - SPECIAL_TOKENS

THRESHOLD_HELP = (
    "Its meaning depends on the method; -1 uses the method's default. similarity: the "
    "lowest similarity kept inside a chunk (default 0.8: split where similarity < 0.8, "
    "i.e. distance > 0.2). percentile: split where the distance is above this "
    "percentile of all distances (default 95). std: split above mean + k·std "
    "(k, default 3). iqr: split above mean + k·IQR (k, default 1.5; LangChain's "
    "interquartile formula, which adds k·IQR to the mean, not to Q3). gradient: "
    "split where the gradient of the distances is above this percentile of the "
    "gradient (default 95, as LangChain's gradient method). count: the number of "
    "chunks wanted, cut at the count - 1 largest distances (default: one chunk per "
    f"{SENTENCES_PER_CHUNK} sentences). auto: ignored."
)


# --- thresholds -----------------------------------------------------------------------


def default_count(sentences: int) -> int:
    """The number of chunks ``count`` aims at by default."""
    return max(1, math.ceil(sentences / SENTENCES_PER_CHUNK))


def method_default(method: str, sentences: int) -> float:
    """The threshold parameter ``method`` uses when none is given."""
    if method == "count":
        return float(default_count(sentences))
    if method not in DEFAULT_THRESHOLDS:
        choices = ", ".join(FORMULA_METHODS)
        raise ValueError(f"unknown method {method!r}; choose one of: {choices}")
    return DEFAULT_THRESHOLDS[method]


def check_threshold(method: str, value: float) -> None:
    """Reject a threshold outside its method's range, saying what the range is."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
    if not math.isfinite(value):
        raise ValueError(f"the threshold must be a finite number; got {value!r}")
    lo, hi = THRESHOLD_RANGES.get(method, (-math.inf, math.inf))
    if not lo <= value <= hi and method == "similarity":
        raise ValueError(f"a similarity threshold is between -1 and 1 (e.g. 0.8); got {value:g}")
    if not lo <= value <= hi:  # percentile, gradient
        raise ValueError(
            f"a {method} threshold is a percentile from {lo:g} to {hi:g}; got {value:g}"
        )
    if method == "count" and (value < 1 or not float(value).is_integer()):
        raise ValueError(f"count is a whole number of chunks (1 or more); got {value:g}")


def gradient(distances: np.ndarray) -> np.ndarray:
    """``np.gradient`` of the distances; zeros when there are fewer than two."""
    if len(distances) < 2:
        return np.zeros(len(distances))
    return np.gradient(distances)


def cutoff(method: str, distances: np.ndarray, value: float) -> float:
    """The cutoff a method with threshold parameter ``value`` puts on its series.

    Breakpoints are where the series (the distances; their gradient for ``gradient``)
    is strictly above the cutoff. With no distances (one sentence) it is ``inf``.
    """
    d = np.asarray(distances, dtype=np.float64)
    if method == "similarity":
        return 1.0 - value
    if len(d) == 0:
        return math.inf
    if method == "percentile":
        return float(np.percentile(d, value))
    if method == "std":
        return float(np.mean(d) + value * np.std(d))
    if method == "iqr":
        q1, q3 = np.percentile(d, [25, 75])
        return float(np.mean(d) + value * (q3 - q1))
    if method == "gradient":
        return float(np.percentile(gradient(d), value)) if len(d) >= 2 else math.inf
    if method == "count":
        wanted = int(value)  # the count - 1 largest distances are above the count-th
        return float(np.sort(d)[len(d) - wanted]) if wanted <= len(d) else -math.inf
    raise ValueError(f"unknown method {method!r}; choose one of: {', '.join(FORMULA_METHODS)}")


# --- the automatic choice -------------------------------------------------------------


@dataclass(frozen=True)
class AutoChoice:
    method: str
    threshold: float
    reason: str


def _skewness(d: np.ndarray) -> float:
    sd = float(np.std(d))
    return float(np.mean((d - np.mean(d)) ** 3) / sd**3) if sd > 0 else 0.0


def bimodality(d: np.ndarray) -> float:
    """Sarle's bimodality coefficient; above 5/9 (0.555) suggests two groups."""
    n = len(d)
    sd = float(np.std(d))
    if n < 4 or sd == 0:
        return 0.0
    g = _skewness(d)
    kurtosis = float(np.mean((d - np.mean(d)) ** 4) / sd**4) - 3.0
    return (g**2 + 1) / (kurtosis + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))


def choose_method(distances: np.ndarray, sentences: int) -> AutoChoice:
    """Pick a method from the shape of the distance series, and say why.

    - Fewer than 8 distances: too few for statistics; an absolute similarity cutoff.
    - Distances that hardly vary (IQR < 0.01): the gradient shows where they change.
    - A long right tail (skewness > 1) or two groups (bimodality coefficient > 5/9):
      some distances stand out as topic changes; mean + 1.5·IQR (robust to the tail
      itself, unlike the standard deviation) cuts at those.
    - Otherwise nothing stands out: the largest 5% are cut (95th percentile).
    """
    d = np.asarray(distances, dtype=np.float64)
    if len(d) < 8:
        return AutoChoice(
            "similarity",
            DEFAULT_THRESHOLDS["similarity"],
            f"{sentences} sentences give only {len(d)} distances, too few for statistics: "
            "an absolute cutoff is used (split where similarity < 0.8)",
        )
    q1, q3 = np.percentile(d, [25, 75])
    skew, bc = _skewness(d), bimodality(d)
    shape = (
        f"{len(d)} distances with IQR {q3 - q1:.3f}, skewness {skew:.2f} and "
        f"bimodality coefficient {bc:.2f}"
    )
    if q3 - q1 < 0.01:
        return AutoChoice(
            "gradient",
            DEFAULT_THRESHOLDS["gradient"],
            f"{shape}: the distances hardly vary (IQR < 0.01), so the cut follows where "
            "they change fastest (95th percentile of their gradient)",
        )
    if skew > 1 or bc > 5 / 9:
        why = "a long right tail (skewness > 1)" if skew > 1 else "two groups (bimodality > 0.555)"
        return AutoChoice(
            "iqr",
            DEFAULT_THRESHOLDS["iqr"],
            f"{shape}: {why} means some distances stand out as topic changes; "
            "mean + 1.5·IQR, robust to those outliers, cuts at them",
        )
    return AutoChoice(
        "percentile",
        DEFAULT_THRESHOLDS["percentile"],
        f"{shape}: no group of large distances stands out, so the largest 5% are cut "
        "(95th percentile)",
    )
