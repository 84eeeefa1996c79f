"""Sweeps: evaluate a grid of configurations and collect one tidy row per configuration.

A grid is strategy × size × overlap × unit (× threshold, for strategies that have one,
such as ``semantic``). ``size`` sets each strategy's size limit (``size``, or
``max_size``/``window`` where that is the limit); ``overlap`` applies to strategies
that have an overlap, ``unit`` to those that have a unit (a strategy that counts only
tokens keeps counting tokens). An overlap between 0 and 1 exclusive is a fraction of
the size (``0.1`` with size 400 is 40). Combinations a strategy rejects (an overlap not
below the size) are skipped and listed in :attr:`SweepResult.skipped`.

Every text goes through the embedder's cache, so questions are embedded once per sweep
and a chunk text shared by two configurations once: :attr:`SweepResult.texts_embedded`
counts what the model really embedded, :attr:`SweepResult.texts_requested` what was
asked for.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config, get_strategy
from ..params import Strategy
from .core import METRICS, Evaluation, Progress, Settings, evaluate
from .questions import Question

if TYPE_CHECKING:
    import pandas as pd

    from ..embedding.models import Embedder

AXES = ("strategy", "size", "overlap", "unit", "threshold")
#: Columns of the results table, in order.
TABLE_COLUMNS = (
    "strategy",
    "size",
    "overlap",
    "unit",
    "threshold",
    "n_chunks",
    "mean_tokens",
    *(f"{m}_{s}" for m in METRICS for s in ("mean", "std")),
    "split_share",
    "mean_chunk_chars",
    "mean_gold_chars",
    "questions",
    "config",
)


def _as_list(name: str, value: Any) -> list[Any]:
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        raise ValueError(f"grid axis {name!r} is an empty list; give at least one value")
    return values


@dataclass(frozen=True)
class Grid:
    """The axes of a sweep; an empty axis means "the strategy's default"."""

    strategies: tuple[str, ...] = ("recursive",)
    sizes: tuple[int, ...] = ()
    overlaps: tuple[float, ...] = ()
    units: tuple[str, ...] = ()
    thresholds: tuple[float, ...] = ()
    #: Parameters fixed for every strategy that has them (e.g. separators).
    fixed: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Grid:
        """A grid from ``{"strategy": [...], "size": [...], ...}`` plus fixed parameters.

        Keys other than the axes (``strategy``, ``size``, ``overlap``, ``unit``,
        ``threshold``) are fixed parameters; ``{"params": {...}}`` works too.
        """
        if not isinstance(data, Mapping):
            raise ValueError('a sweep grid is a JSON object such as {"strategy": ["recursive"]}')
        params = data.get("params", {})
        if not isinstance(params, Mapping):
            raise ValueError('"params" in a grid must be an object of parameter names to values')
        fixed = dict(params)
        fixed.update({k: v for k, v in data.items() if k not in (*AXES, "params")})
        axes = {k: _as_list(k, data[k]) for k in AXES if k in data}
        grid = cls(
            strategies=tuple(str(s) for s in axes.get("strategy", ["recursive"])),
            sizes=tuple(_number(v, "size", int) for v in axes.get("size", [])),
            overlaps=tuple(_overlap_value(v) for v in axes.get("overlap", [])),
            units=tuple(str(u) for u in axes.get("unit", [])),
            thresholds=tuple(_number(v, "threshold", float) for v in axes.get("threshold", [])),
            fixed=fixed,
        )
        grid.check()
        return grid

    def to_dict(self) -> dict[str, Any]:
        """The grid as :meth:`from_dict` reads it (non-empty axes, fixed params)."""
        data: dict[str, Any] = {"strategy": list(self.strategies), "params": dict(self.fixed)}
        for axis, values in (
            ("size", self.sizes),
            ("overlap", self.overlaps),
            ("unit", self.units),
            ("threshold", self.thresholds),
        ):
            if values:
                data[axis] = list(values)
        return data

    def check(self) -> None:
        """Raise ``ValueError`` for unknown strategies or fixed parameters nobody has."""
        specs = [get_strategy(s) for s in self.strategies]
        for name in self.fixed:
            if not any(name in spec.param_names for spec in specs):
                strategies = ", ".join(self.strategies)
                raise ValueError(f"no strategy in the grid ({strategies}) has a parameter {name!r}")

    def configs(self) -> tuple[list[Config], list[str]]:
        """Every valid configuration (duplicates removed) and the skipped combinations."""
        configs: dict[str, Config] = {}
        skipped: list[str] = []
        for name in self.strategies:
            spec = get_strategy(name)
            for params in self._combinations(spec):
                try:
                    config = Config.create(name, **params)
                except ValueError as exc:
                    skipped.append(f"{name} {_describe(params)}: {exc}")
                    continue
                configs.setdefault(config.to_json(), config)
        return list(configs.values()), skipped

    def _combinations(self, spec: Strategy) -> list[dict[str, Any]]:
        names = spec.param_names
        fixed = {k: v for k, v in self.fixed.items() if k in names}
        limit = spec.limit_param
        sizes = list(self.sizes) if self.sizes and limit else [None]
        overlaps = list(self.overlaps) if self.overlaps and "overlap" in names else [None]
        thresholds = list(self.thresholds) if self.thresholds and "threshold" in names else [None]
        out = []
        for size, overlap, unit, threshold in itertools.product(
            sizes, overlaps, self._units(spec), thresholds
        ):
            params = dict(fixed)
            if size is not None and limit:
                params[limit] = size
            if overlap is not None:
                params["overlap"] = _overlap(overlap, params.get(limit or ""), spec)
            if unit is not None:
                params["unit"] = unit
            if threshold is not None:
                params["threshold"] = threshold
            out.append(params)
        return out

    def _units(self, spec: Strategy) -> list[str | None]:
        if not self.units or "unit" not in spec.param_names:
            return [None]
        choices = spec.param("unit").choices or ()
        usable = [u for u in self.units if u in choices]
        return list(usable) if usable else [None]


def _number(value: Any, axis: str, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"grid axis {axis!r} takes numbers; got {value!r}")
    if kind is int:
        if float(value) != int(value):
            raise ValueError(f"grid axis {axis!r} takes whole numbers; got {value!r}")
        return int(value)
    return float(value)


def _overlap(value: float, size: int | None, spec: Strategy) -> int:
    """An absolute overlap; a value in (0, 1) is a fraction of the size."""
    if 0 < value < 1:
        base = size if size is not None else spec.defaults().get(spec.limit_param or "", 0)
        return round(value * base)
    return int(value)


def _overlap_value(value: Any) -> float:
    """A grid overlap: a whole number of units, or a share of the size in (0, 1)."""
    number = _number(value, "overlap", float)
    if number >= 1 and not number.is_integer():
        raise ValueError(
            f"overlap {number:g} is neither a whole number nor a share of the size between 0 and 1"
        )
    return number


def _describe(params: Mapping[str, Any]) -> str:
    shown = {k: v for k, v in params.items() if k in ("size", "max_size", "window", *AXES)}
    return " ".join(f"{k}={v}" for k, v in shown.items())


def load_grid(path: str | Path) -> Grid:
    """Read a grid from a JSON file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    try:
        return Grid.from_dict(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


# ----------------------------------------------------------------------------- sweep


@dataclass(frozen=True, eq=False)
class SweepCounts:
    """What every form of a sweep's outcome holds: its table (one row per
    configuration), the configurations skipped and why, and the embedding counts."""

    table: pd.DataFrame
    skipped: tuple[str, ...]
    texts_requested: int
    texts_embedded: int


@dataclass(frozen=True, eq=False)
class SweepResult(SweepCounts):
    """A sweep's table and counts, with the evaluations behind them."""

    evaluations: tuple[Evaluation, ...]


def results_table(evaluations: Sequence[Evaluation]) -> pd.DataFrame:
    """One tidy row per evaluation, columns :data:`TABLE_COLUMNS`."""
    import pandas as pd

    rows = [e.summary for e in evaluations]
    return pd.DataFrame.from_records(rows, columns=list(TABLE_COLUMNS))


def sweep(
    documents: Mapping[str, str],
    questions: Sequence[Question],
    configs: Grid | Sequence[Config],
    embedder: Embedder | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> SweepResult:
    """Evaluate every configuration; ``progress(fraction, message)`` after each step."""
    skipped: list[str] = []
    if isinstance(configs, Grid):
        configs, skipped = configs.configs()
    if not configs:
        raise ValueError("the grid has no valid configuration; " + "; ".join(skipped[:3]))
    evaluations = []
    total = len(configs)
    done = [0.0]  # the furthest fraction reported: progress never moves back

    for i, config in enumerate(configs):
        label = f"{i + 1}/{total}: {config_label(config)}"

        def step(fraction: float, message: str, i: int = i, label: str = label) -> None:
            done[0] = max(done[0], min((i + fraction) / total, 1.0))
            if progress is not None:
                progress(done[0], f"{label} — {message}")

        evaluations.append(evaluate(documents, questions, config, embedder, settings, step))
    return SweepResult(
        table=results_table(evaluations),
        evaluations=tuple(evaluations),
        skipped=tuple(skipped),
        texts_requested=sum(e.texts_requested for e in evaluations),
        texts_embedded=sum(e.texts_embedded for e in evaluations),
    )


@dataclass(frozen=True)
class Snapshot:
    """A picklable digest of one :class:`Evaluation` (for caches such as st.cache_data).

    ``hits[q]`` lists ``(start, end, rank, score)`` of the chunks retrieved for question
    ``q`` in its own document (empty without retrieval).
    """

    label: str
    config_json: str
    summary: Mapping[str, Any]
    per_question: pd.DataFrame
    chunk_spans: Mapping[str, np.ndarray]
    hits: tuple[tuple[tuple[int, int, int, float], ...], ...]


def snapshot(evaluation: Evaluation) -> Snapshot:
    """The parts of an evaluation a viewer needs, as plain data."""
    hits = tuple(tuple(evaluation.retrieved_spans(q)) for q in range(len(evaluation.questions)))
    return Snapshot(
        label=config_label(evaluation.config),
        config_json=evaluation.config.to_json(),
        summary=dict(evaluation.summary),
        per_question=evaluation.per_question(),
        chunk_spans={k: np.asarray(v) for k, v in evaluation.chunk_spans.items()},
        hits=hits,
    )


@dataclass(frozen=True, eq=False)
class Digest(SweepCounts):
    """A picklable digest of a :class:`SweepResult` (for caches such as st.cache_data):
    its table and counts, and one :class:`Snapshot` per evaluation."""

    snapshots: tuple[Snapshot, ...]


def digest(result: SweepResult) -> Digest:
    """The table, one :class:`Snapshot` per evaluation, and the counts, as plain data."""
    return Digest(
        table=result.table,
        snapshots=tuple(snapshot(e) for e in result.evaluations),
        skipped=result.skipped,
        texts_requested=result.texts_requested,
        texts_embedded=result.texts_embedded,
    )


def parse_values(text: str, kind: type, name: str) -> list[Any]:
    """``"200, 400 800"`` as ``[200, 400, 800]``; a message naming ``name`` if it is not."""
    items = [t for t in text.replace(",", " ").split() if t]
    if not items:
        raise ValueError(f"{name}: give at least one value, e.g. 200, 400")
    try:
        values = [kind(t) for t in items]
    except ValueError:
        raise ValueError(
            f"{name}: {text!r} is not a list of {kind.__name__} values (e.g. 200, 400)"
        ) from None
    return list(dict.fromkeys(values))


def config_label(config: Config) -> str:
    """``recursive · 400 tokens · overlap 40`` (plus the threshold where there is one)."""
    parts = [config.strategy]
    if config.limit is not None:
        parts.append(f"{config.limit} {config.unit}")
    overlap = config.params.get("overlap")
    if overlap:
        parts.append(f"overlap {overlap}")
    threshold = config.params.get("threshold")
    if threshold is not None:
        parts.append(f"threshold {threshold:g}")
    return " · ".join(parts)
