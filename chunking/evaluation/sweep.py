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

import dataclasses
import itertools
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config, get_strategy
from ..model import Chunk, Progress, report_fraction
from ..params import Strategy
from .core import GIVEN, METRIC_LABELS, METRICS, Evaluation, Settings, evaluate
from .questions import Question
from .stats import mean_interval
from .techniques import DENSE, TABLE_TECHNIQUES, Technique

if TYPE_CHECKING:
    import pandas as pd

    from ..embedding.models import Embedder

AXES = ("strategy", "size", "overlap", "unit", "threshold")
#: The metrics whose mean gets a 95 % bootstrap interval in the results table
#: (``recall_ci_low``, ``recall_ci_high``, ...): recall, what retrieval finds, and
#: precision Ω, the ceiling the chunks allow (the one scored without retrieval).
INTERVAL_METRICS = ("recall", "precision_omega")
#: What names a row of the results table: the configuration, the model, the technique
#: and what the chunks look like.
KEY_COLUMNS = (*AXES, "model", "technique", "n_chunks", "mean_tokens")
#: Columns of the results table, in order.
TABLE_COLUMNS = (
    *KEY_COLUMNS,
    *(f"{m}_{s}" for m in METRICS for s in ("mean", "std")),
    *(f"{m}_ci_{s}" for m in INTERVAL_METRICS for s in ("low", "high")),
    "split_share",
    "truncated_share",
    "model_limit",
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
    #: Whole configurations evaluated besides the axes' combinations (the app adds the
    #: sidebar's), after them; one equal to a combination is evaluated once.
    include: tuple[Config, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Grid:
        """A grid from ``{"strategy": [...], "size": [...], ...}`` plus fixed parameters.

        Keys other than the axes (``strategy``, ``size``, ``overlap``, ``unit``,
        ``threshold``) are fixed parameters; ``{"params": {...}}`` works too.
        ``{"include": [{"strategy": ..., "params": {...}}, ...]}`` adds whole
        configurations (as :meth:`Config.to_dict` writes them).
        """
        if not isinstance(data, Mapping):
            raise ValueError('a sweep grid is a JSON object such as {"strategy": ["recursive"]}')
        params = data.get("params", {})
        if not isinstance(params, Mapping):
            raise ValueError('"params" in a grid must be an object of parameter names to values')
        fixed = dict(params)
        fixed.update({k: v for k, v in data.items() if k not in (*AXES, "params", "include")})
        include = data.get("include", [])
        if not isinstance(include, list) or not all(isinstance(c, Mapping) for c in include):
            raise ValueError('"include" in a grid is a list of configurations (JSON objects)')
        axes = {k: _as_list(k, data[k]) for k in AXES if k in data}
        grid = cls(
            strategies=tuple(str(s) for s in axes.get("strategy", ["recursive"])),
            sizes=tuple(_number(v, "size", int) for v in axes.get("size", [])),
            overlaps=tuple(_overlap_value(v) for v in axes.get("overlap", [])),
            units=tuple(str(u) for u in axes.get("unit", [])),
            thresholds=tuple(_number(v, "threshold", float) for v in axes.get("threshold", [])),
            fixed=fixed,
            include=tuple(Config.from_dict(c) for c in include),
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
        if self.include:
            data["include"] = [c.to_dict() for c in self.include]
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
        for config in self.include:
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
        param = spec.param("unit")
        choices = param.choices or ()
        usable = [u for u in self.units if u in choices or param.matches_pattern(u)]
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


#: Human names of the results table's columns, for display.
COLUMN_LABELS = {
    "strategy": "Strategy",
    "size": "Size",
    "overlap": "Overlap",
    "unit": "Unit",
    "threshold": "Threshold",
    "model": "Model",
    "technique": "Technique",
    "n_chunks": "Chunks",
    "mean_tokens": "Mean tokens",
    **{f"{m}_mean": METRIC_LABELS[m] for m in METRICS},
    **{f"{m}_std": f"{METRIC_LABELS[m]} (std)" for m in METRICS},
    **{f"{m}_ci_low": f"{METRIC_LABELS[m]} 95 % low" for m in INTERVAL_METRICS},
    **{f"{m}_ci_high": f"{METRIC_LABELS[m]} 95 % high" for m in INTERVAL_METRICS},
    "split_share": "Gold spans split",
    "truncated_share": "Chunks over the model's window",
    "model_limit": "Model window (word pieces)",
    "mean_chunk_chars": "Mean chunk chars",
    "mean_gold_chars": "Mean gold chars",
    "questions": "Questions",
}
#: Columns holding shares in [0, 1] (shown as percentages).
SHARE_COLUMNS = (
    *(f"{m}_{s}" for m in METRICS for s in ("mean", "std")),
    *(f"{m}_ci_{s}" for m in INTERVAL_METRICS for s in ("low", "high")),
    "split_share",
    "truncated_share",
)


def labelled_table(table: pd.DataFrame) -> pd.DataFrame:
    """The results table for people: human column names, no empty or internal column."""
    shown = table.drop(columns=["config", "questions"], errors="ignore")
    shown = shown[[c for c in shown.columns if shown[c].notna().any()]]
    return shown.rename(columns=COLUMN_LABELS)


def metric_intervals(
    evaluation: Evaluation, metrics: Sequence[str] = INTERVAL_METRICS, seed: int = 0
) -> dict[str, float]:
    """``{metric}_ci_low`` and ``{metric}_ci_high``: the 95 % percentile bootstrap
    interval of each metric's mean over the evaluation's questions
    (:func:`chunking.evaluation.stats.mean_interval`, seeded, so the same scores give the
    same interval). NaN where the metric was not computed (no retrieval) or there are
    no questions; a metric with the same score on every question has a zero-width
    interval."""
    out: dict[str, float] = {}
    for metric in metrics:
        scores = np.asarray(evaluation.scores[metric], dtype=np.float64)
        if np.isnan(scores).any():
            low = high = float("nan")
        else:
            interval = mean_interval(scores, seed)
            low, high = interval.low, interval.high
        out[f"{metric}_ci_low"], out[f"{metric}_ci_high"] = low, high
    return out


def results_table(evaluations: Sequence[Evaluation]) -> pd.DataFrame:
    """One tidy row per evaluation, columns :data:`TABLE_COLUMNS`; the metrics of
    :data:`INTERVAL_METRICS` with their 95 % bootstrap interval (:func:`metric_intervals`)."""
    import pandas as pd

    rows = [{**e.summary, **metric_intervals(e)} for e in evaluations]
    return pd.DataFrame.from_records(rows, columns=list(TABLE_COLUMNS))


def sweep(
    documents: Mapping[str, str],
    questions: Sequence[Question],
    configs: Grid | Sequence[Config],
    embedder: Embedder | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
    technique: Technique = DENSE,
    llm: Any = None,
) -> SweepResult:
    """Evaluate every configuration with ``technique``; ``progress(done, total, what)``
    after each step."""
    skipped: list[str] = []
    if isinstance(configs, Grid):
        configs, skipped = configs.configs()
    if not configs:
        raise ValueError("the grid has no valid configuration; " + "; ".join(skipped[:3]))
    evaluations = []
    total = len(configs)
    done = [0.0]  # the furthest fraction reported: progress never moves back

    for i, config in enumerate(configs):
        label = f"{i + 1}/{total}: {config.label()}"

        def step(part: int, whole: int, what: str, i: int = i, label: str = label) -> None:
            done[0] = max(done[0], min((i + part / max(whole, 1)) / total, 1.0))
            report_fraction(progress, done[0], f"{label} — {what}")

        evaluations.append(
            evaluate(documents, questions, config, embedder, settings, step, technique, llm)
        )
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
        label=evaluation.label,
        config_json=evaluation.config.to_json() if evaluation.config is not None else "",
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


def merge_results(results: Sequence[SweepResult]) -> SweepResult:
    """Several sweeps (one per model, say) as one: rows and counts added up."""
    import pandas as pd

    if not results:
        raise ValueError("there are no sweep results to merge")
    return SweepResult(
        table=pd.concat([r.table for r in results], ignore_index=True),
        evaluations=tuple(e for r in results for e in r.evaluations),
        skipped=tuple(dict.fromkeys(s for r in results for s in r.skipped)),
        texts_requested=sum(r.texts_requested for r in results),
        texts_embedded=sum(r.texts_embedded for r in results),
    )


#: The metrics shown per model side by side (issue 13: what a faster model costs).
MODEL_METRICS = ("recall", "precision_omega")


def models_side_by_side(
    table: pd.DataFrame, metrics: Sequence[str] = MODEL_METRICS
) -> pd.DataFrame:
    """One row per configuration and technique, one column per metric and model
    (``Recall · all-MiniLM-L6-v2``), means in [0, 1]."""
    frame = table.assign(
        configuration=[
            Config.from_json(c).label() if isinstance(c, str) else GIVEN for c in table["config"]
        ],
        model=table["model"].fillna("none"),
    )
    wide = frame.pivot_table(
        index=["configuration", "technique"],
        columns="model",
        values=[f"{m}_mean" for m in metrics],
        sort=False,
    )
    wide.columns = [
        f"{METRIC_LABELS[m.removesuffix('_mean')]} · {model}" for m, model in wide.columns
    ]
    return wide.reset_index()


# ------------------------------------------------------------------ techniques table


#: The chunker of Chroma's study evaluated next to the techniques, when registered.
CLUSTER = "cluster"


@dataclass(frozen=True, eq=False)
class TechniqueRun:
    """One row of the techniques table: what ran, what it scored, how long it took."""

    label: str
    technique: Technique
    evaluation: Evaluation
    seconds: float


def table_rows(base: Config | None) -> list[tuple[str, Technique, Config | None]]:
    """The rows of the techniques table for ``base``: every technique that applies to
    it (``parent`` needs a parent-child configuration), and the ``cluster`` chunker
    with the same size and unit where that strategy is registered. ``None`` (given
    chunks, which have no parents and are not cut): every technique but ``parent``."""
    if base is None:
        return [(t.name, t, None) for t in TABLE_TECHNIQUES if t.returned != "parent"]
    rows: list[tuple[str, Technique, Config | None]] = []
    for technique in TABLE_TECHNIQUES:
        try:
            technique.check(base)
        except ValueError:
            continue
        rows.append((technique.name, technique, base))
    cluster = _cluster_config(base)
    if cluster is not None:
        rows.append((CLUSTER, DENSE, cluster))
    return rows


def _cluster_config(base: Config) -> Config | None:
    from ..config import strategies

    spec = strategies().get(CLUSTER)
    if spec is None or base.strategy == CLUSTER:
        return None
    params: dict[str, Any] = {}
    if spec.limit_param and base.limit is not None:
        params[spec.limit_param] = base.limit
    if "unit" in spec.param_names and "unit" in base.params:
        params["unit"] = base.params["unit"]
    try:
        return Config.create(CLUSTER, **params)
    except ValueError:
        return None


def compare_techniques(
    documents: Mapping[str, str],
    questions: Sequence[Question],
    base: Config | None,
    embedder: Embedder | None,
    settings: Settings | None = None,
    progress: Progress | None = None,
    rows: Sequence[tuple[str, Technique, Config | None]] | None = None,
    chunks: Mapping[str, tuple[Chunk, ...]] | None = None,
) -> list[TechniqueRun]:
    """Evaluate each row of the techniques table (default :func:`table_rows`), timing
    each. A row's time includes embedding what earlier rows left out of the cache. Rows
    the embedder cannot run are left out: all but ``bm25`` without a model, ``late``
    with a model that is not a torch sentence-transformer. With ``chunks`` (and
    ``base=None``) every row evaluates those given chunks."""
    rows = list(rows) if rows is not None else table_rows(base)
    runs = []
    for number, (label, technique, config) in enumerate(rows):
        if not _runs_with(technique, embedder):
            continue

        def step(
            part: int, whole: int, what: str, number: int = number, label: str = label
        ) -> None:
            fraction = (number + part / max(whole, 1)) / len(rows)
            report_fraction(progress, fraction, f"{label}: {what}")

        began = time.perf_counter()
        given = chunks if config is None else None
        evaluation = evaluate(
            documents, questions, config, embedder, settings, step, technique, chunks=given
        )
        runs.append(TechniqueRun(label, technique, evaluation, time.perf_counter() - began))
    return runs


def _runs_with(technique: Technique, embedder: Embedder | None) -> bool:
    """Whether the technique can run with this embedder: dense retrieval needs one,
    late chunking one whose token vectors are reachable."""
    if embedder is None:
        return not technique.uses_vectors
    if technique.embedding == "late":
        from .late import supports_late

        return supports_late(embedder)
    return True


def techniques_table(runs: Sequence[TechniqueRun]) -> pd.DataFrame:
    """One row per technique: each metric's mean, its difference from the first row
    (plain dense retrieval), and the seconds it took."""
    import pandas as pd

    if not runs:
        raise ValueError("no technique was evaluated")
    reference = runs[0].evaluation
    records = []
    for run in runs:
        row: dict[str, Any] = {
            "technique": run.label,
            "configuration": run.evaluation.label,
        }
        for metric in METRICS:
            row[metric] = run.evaluation.mean(metric)
        for metric in METRICS:
            row[f"{metric}_delta"] = run.evaluation.mean(metric) - reference.mean(metric)
        row["seconds"] = round(run.seconds, 2)
        records.append(row)
    return pd.DataFrame.from_records(records)


def technique_snapshots(runs: Sequence[TechniqueRun]) -> tuple[Snapshot, ...]:
    """One :class:`Snapshot` per technique row, labelled with the technique."""
    return tuple(dataclasses.replace(snapshot(r.evaluation), label=r.label) for r in runs)
