"""The search: draw points of a space, evaluate each on the tuning questions, and read
out the front and whether the winner is real.

Before anything is embedded (:func:`plan`): every point on paper is built; invalid ones
are skipped and counted; every distinct configuration is cut once, and points whose
chunk offsets are identical on every document (with the same retrieval) share one
*signature*: the first is evaluated, the others are reported with ``duplicate_of``. The
dry run is the plan: "N on paper, M to run" and the estimated time.

Every trial goes through the same embedder, whose cache keeps each vector it computed:
no chunk text (and no question) is embedded twice across trials. With a ``model`` axis
(:mod:`.space`) each point carries its model: each model is loaded once, when a trial
first needs it, and keeps its own cache (no text embedded twice per model); the model
is part of a point's signature (two models on the same chunks are two trials), of its
label when the axis has more than one value, and of its ``config`` in the JSON.

:func:`tune` then runs the sampler on the tuning split (:mod:`.holdout`), scores each
trial's objective per question (:mod:`.objectives`), and computes the statistics of
:mod:`chunking.evaluation.stats` (shared with Evaluate's interval columns): an interval
per trial, the front (:mod:`.front`), the winner against the runner-up and against a
baseline, the detectable difference, the split-half stability,
and the finalists' scores on the held-out questions.

With a boundary objective (``boundary_f1``, ``boundary_b``; :mod:`.objectives`) a trial
is scored by its chunk starts against a gold segmentation per document: no question, no
model, nothing embedded. Those scores are one number per document, not a sample of
questions, so none of the statistics above is computed for them (no interval, no
difference, no detectable difference, no stability: :data:`NO_INTERVALS` says why in
the JSON and the verdict); the trials, the front and the ranking are the scores as they
are.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config
from ..evaluation.boundaries import ToleranceUnit
from ..evaluation.core import (
    Evaluation,
    Scope,
    Settings,
    chunk_documents,
    evaluate,
    searched_texts,
    technique_chunks,
)
from ..evaluation.questions import Question
from ..evaluation.stats import (
    Difference,
    Interval,
    Stability,
    detectable_difference,
    mean_interval,
    paired_difference,
    split_half_stability,
)
from ..evaluation.techniques import DENSE
from ..model import Chunk, Progress, report_fraction
from .front import front_mask
from .holdout import DEFAULT_HOLDOUT, check_share, split_questions
from .objectives import (
    BOUNDARY_COSTS,
    COST_LABELS,
    OBJECTIVE_LABELS,
    TokenCounter,
    boundary_score,
    check_cost,
    check_objective,
    is_boundary,
    needs_retrieval,
    objective_scores,
    trial_costs,
)
from .samplers import check_sampler, make_sampler
from .space import DEFAULT_TOP_K, MODEL_AXIS, Point, Space

if TYPE_CHECKING:
    import pandas as pd

    from ..embedding.base import Embedder

#: Draws a sampler may make per trial of the budget before the search gives up (TPE
#: may draw points already seen).
DRAWS_PER_TRIAL = 20
#: Why a search on a boundary objective reports no interval (``statistics`` in its JSON).
NO_INTERVALS = (
    "none: a boundary score compares one segmentation with the gold one per document; "
    "it is not a mean over questions, so there is nothing to resample: no interval, "
    "difference, p-value, detectable difference or stability is computed"
)


#: Loads an embedding model by name (None for ``none``: no model, bm25 only).
ModelLoader = Callable[[str], "Embedder | None"]


def load_embedder(name: str) -> Embedder | None:
    """The default :data:`ModelLoader`: the named model, once per process."""
    if name.lower() == "none":
        return None
    from ..embedding.models import get_embedder

    return get_embedder(name)


def default_baseline() -> Config:
    """The baseline the winner is compared with: recursive, 400 tokens, overlap 0."""
    return Config.create("recursive", size=400, overlap=0, unit="tokens")


@dataclass(frozen=True)
class TuneOptions:
    """How a search runs and what it optimises."""

    sampler: str = "tpe"
    #: Trials to evaluate; None: every point to run (grid), a third of them otherwise.
    trials: int | None = None
    seed: int = 0
    objective: str = "recall"
    cost: str = "tokens_sent"
    holdout: float = DEFAULT_HOLDOUT
    scope: Scope = "document"
    #: How far a chunk start may be from a gold boundary for ``boundary_f1``.
    tolerance: int = 0
    tolerance_unit: ToleranceUnit = "chars"

    def __post_init__(self) -> None:
        check_sampler(self.sampler)
        check_objective(self.objective)
        check_cost(self.cost)
        if is_boundary(self.objective) and self.cost not in BOUNDARY_COSTS:
            raise ValueError(
                f"the cost {self.cost} needs questions to retrieve for; with "
                f"{self.objective} choose one of: {', '.join(BOUNDARY_COSTS)}"
            )
        if self.tolerance < 0:
            raise ValueError(f"--tolerance must be 0 or more; got {self.tolerance}")
        check_share(self.holdout)
        if self.seed < 0:
            raise ValueError(f"--seed must be 0 or more; got {self.seed}")
        if self.trials is not None and self.trials < 1:
            raise ValueError(f"--trials must be at least 1; got {self.trials}")

    def budget(self, distinct: int) -> int:
        """How many trials run when ``distinct`` points could."""
        if self.trials is not None:
            return min(self.trials, distinct)
        return distinct if self.sampler == "grid" else max(1, math.ceil(distinct / 3))


def point_key(values: Mapping[str, Any]) -> str:
    return json.dumps(dict(values), sort_keys=True, default=str)


@dataclass(frozen=True)
class Candidate:
    """A valid point on paper, cut: its label, signature and the point it repeats."""

    key: str
    point: Point
    label: str
    signature: str
    duplicate_of: str | None


@dataclass(frozen=True, eq=False)
class Plan:
    """The dry run: what is on paper, what is invalid, what repeats, what will run."""

    space: Space
    options: TuneOptions
    on_paper: int
    invalid: tuple[str, ...]
    candidates: Mapping[str, Candidate]
    distinct: int
    to_run: int
    estimate_seconds: float
    chunks: Mapping[str, Mapping[str, tuple[Chunk, ...]]] = field(repr=False)

    @property
    def duplicates(self) -> int:
        return sum(c.duplicate_of is not None for c in self.candidates.values())

    def describe(self) -> str:
        """``24 on paper, 20 to run (3 invalid, 1 duplicate); estimated about 40 s``."""
        from ..embedding.timing import about

        extra = [f"{len(self.invalid)} invalid", f"{self.duplicates} with the same chunks"]
        if self.to_run < self.distinct:
            extra.append(f"{self.options.sampler} tries {self.to_run} of {self.distinct}")
        return (
            f"{self.on_paper} on paper, {self.to_run} to run ({', '.join(extra)}); "
            f"estimated {about(self.estimate_seconds)}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "on_paper": self.on_paper,
            "to_run": self.to_run,
            "invalid": len(self.invalid),
            "duplicates": self.duplicates,
            "estimate_seconds": round(self.estimate_seconds, 1),
            "skipped": list(self.invalid),
        }


def _labels(space: Space) -> Callable[[Point], str]:
    """A point's label: the configuration, plus the retrieval axes the space varies."""
    varying = {k for k, v in space.retrieval.items() if len(v) > 1}

    def label(point: Point) -> str:
        assert point.config is not None and point.technique is not None
        parts = [point.config.label()]
        if varying & {"retriever", "embedding", "context", "return"}:
            parts.append(point.technique.name)
        if "top_k" in varying:
            parts.append(f"top {point.top_k}")
        if MODEL_AXIS in varying and point.model is not None:
            parts.append(point.model)
        return " · ".join(parts)

    return label


def _signature(point: Point, chunks: Mapping[str, Sequence[Chunk]]) -> str:
    """What decides a trial's scores: every document's chunk offsets, the technique, k
    and (on a model axis) the model."""
    assert point.technique is not None
    head = f"{point.technique.name}|{point.top_k}"
    if point.model is not None:
        head += f"|{point.model}"
    digest = hashlib.sha1(head.encode())
    for corpus_id in sorted(chunks):
        offsets = np.array([(c.start, c.end) for c in chunks[corpus_id]], dtype=np.int64)
        digest.update(corpus_id.encode("utf-8", "surrogatepass") + b"\0" + offsets.tobytes())
    return digest.hexdigest()


def _ids(documents: Mapping[str, str], questions: Sequence[Question], scope: Scope) -> list[str]:
    if not questions:  # a boundary objective: every document given (those with gold)
        return list(documents)
    ids = list(dict.fromkeys(q.corpus_id for q in questions))
    unknown = [i for i in ids if i not in documents]
    if unknown:
        raise ValueError(f"question refers to document {unknown[0]!r}, which is not loaded")
    return list(dict.fromkeys([*ids, *documents])) if scope == "all" else ids


def plan(
    documents: Mapping[str, str],
    questions: Sequence[Question],
    space: Space,
    options: TuneOptions | None = None,
    model: str | None = None,
    progress: Progress | None = None,
) -> Plan:
    """Build, check and cut every point on paper (nothing is embedded); ``model`` is
    the embedding model whose speed estimates the time (None: no embedding)."""
    options = options or TuneOptions()
    if not questions and not is_boundary(options.objective):
        raise ValueError("there are no questions to tune on")
    ids = _ids(documents, questions, options.scope)
    label = _labels(space)
    paper = space.paper()
    invalid: list[str] = []
    candidates: dict[str, Candidate] = {}
    cuts: dict[str, dict[str, tuple[Chunk, ...]]] = {}
    first: dict[str, str] = {}
    for number, values in enumerate(paper):
        report_fraction(progress, number / max(len(paper), 1), "Cutting the points on paper")
        point = space.point(values)
        if not point.valid:
            invalid.append(str(point.error))
            continue
        assert point.config is not None
        key = point_key(values)
        name = point.config.to_json()
        if name not in cuts:
            cuts[name] = chunk_documents(documents, point.config, ids)
        signature = _signature(point, cuts[name])
        text = label(point)
        candidates[key] = Candidate(key, point, text, signature, first.get(signature))
        first.setdefault(signature, text)
    distinct = len(first)
    if not distinct:
        raise ValueError("the space has no valid point; " + "; ".join(invalid[:3]))
    to_run = options.budget(distinct)
    seconds = _estimate(documents, questions, candidates.values(), cuts, model)
    return Plan(
        space,
        options,
        len(paper),
        tuple(invalid),
        candidates,
        distinct,
        to_run,
        seconds * to_run / distinct,
        cuts,
    )


def _estimate(
    documents: Mapping[str, str],
    questions: Sequence[Question],
    candidates: Any,
    cuts: Mapping[str, Mapping[str, tuple[Chunk, ...]]],
    model: str | None,
) -> float:
    """Seconds to embed every distinct text of the distinct points and the questions,
    per model (a point's own model on a model axis, else ``model``)."""
    per_model: dict[str, dict[str, None]] = {}
    for candidate in candidates:
        technique = candidate.point.technique
        name = candidate.point.model or model
        if name is None or name.lower() == "none":
            continue  # no model: nothing is embedded (nor imported)
        from ..embedding.models import canonical_model_name

        name = canonical_model_name(name)
        if name not in per_model:
            per_model[name] = dict.fromkeys(q.text for q in questions)
        texts = per_model[name]
        if candidate.duplicate_of is not None or not technique.uses_vectors:
            continue
        for i, chunks in cuts[candidate.point.config.to_json()].items():
            if technique.embedding == "late":
                texts[documents[i]] = None
                continue
            cut = technique_chunks(documents[i], chunks, i, technique)
            texts.update(dict.fromkeys(searched_texts(cut, technique)))
    if not per_model:
        return 0.0
    from ..embedding.models import estimate_wait

    return sum(estimate_wait(name, list(texts)).seconds for name, texts in per_model.items())


# --------------------------------------------------------------------------- trials


@dataclass(frozen=True, eq=False)
class Trial:
    """One trial: a point, its quality per question on the tuning split and its costs."""

    number: int
    label: str
    point: Point
    scores: np.ndarray
    costs: Mapping[str, float]
    duplicate_of: str | None
    evaluation: Evaluation | None = field(repr=False)
    interval: Interval = field(default_factory=lambda: Interval(math.nan, math.nan, math.nan))
    on_front: bool = False

    @property
    def config(self) -> Config:
        assert self.point.config is not None
        return self.point.config

    @property
    def quality(self) -> float:
        return float(np.mean(self.scores)) if len(self.scores) else math.nan

    def to_dict(self, cost: str) -> dict[str, Any]:
        technique = self.point.technique or DENSE
        return {
            "label": self.label,
            "config": _config_dict(self.config, self.point.model),
            "technique": technique.name,
            "top_k": self.point.top_k,
            "quality": self.interval.mean,
            "ci_low": self.interval.low,
            "ci_high": self.interval.high,
            "cost": self.costs[cost],
            "costs": dict(self.costs),
            "on_front": self.on_front,
            "duplicate_of": self.duplicate_of,
        }


def _config_dict(config: Config, model: str | None) -> dict[str, Any]:
    """A trial's ``config`` in the JSON: with its ``model`` on a model axis (which
    :meth:`Config.from_dict` ignores when it reads the configuration back)."""
    data = config.to_dict()
    if model is not None:
        data["model"] = model
    return data


@dataclass(frozen=True)
class Finalist:
    """The winner, the runner-up or the baseline: tuning and held-out intervals."""

    label: str
    config: Config
    tuning: Interval
    held_out: Interval | None
    tuning_scores: np.ndarray = field(repr=False)
    held_out_scores: np.ndarray | None = field(default=None, repr=False)
    #: Its embedding model on a model axis (None: the search's one model).
    model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "config": _config_dict(self.config, self.model),
            **self.tuning.to_dict(),
            "held_out": self.held_out.to_dict() if self.held_out is not None else None,
        }


@dataclass(frozen=True, eq=False)
class TuneResult:
    """Everything a search found; :meth:`to_dict` is ``tune.json`` (the same for the
    same seed, but for timings: ``seconds``, ``estimate_seconds``, the ``seconds`` cost;
    how many texts the model embedded depends on its cache and is left out)."""

    plan: Plan
    options: TuneOptions
    trials: tuple[Trial, ...]
    winner: Finalist
    runner_up: Finalist | None
    baseline: Finalist
    difference: Difference | None
    difference_baseline: Difference | None
    detectable_difference: float
    stability: Stability
    tuning: tuple[Question, ...]
    held_out: tuple[Question, ...]
    warnings: tuple[str, ...]
    texts_requested: int
    texts_embedded: int
    seconds: float
    #: With a boundary objective: each scored document's gold boundaries.
    gold: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def front(self) -> list[str]:
        return [t.label for t in self.trials if t.on_front]

    def trial(self, label: str) -> Trial:
        for t in self.trials:
            if t.label == label:
                return t
        raise KeyError(label)

    def to_dict(self) -> dict[str, Any]:
        options = self.options
        return {
            "objective": options.objective,
            "cost": options.cost,
            "sampler": options.sampler,
            "seed": options.seed,
            **self.plan.to_dict(),
            "trials": [t.to_dict(options.cost) for t in self.trials],
            "front": self.front,
            "winner": self.winner.to_dict(),
            "runner_up": self.runner_up.to_dict() if self.runner_up is not None else None,
            "baseline": self.baseline.to_dict(),
            "difference": self.difference.to_dict() if self.difference is not None else None,
            "difference_baseline": (
                self.difference_baseline.to_dict() if self.difference_baseline is not None else None
            ),
            "detectable_difference": self.detectable_difference,
            "stability": self.stability.to_dict(),
            "questions": {"tuning": len(self.tuning), "held_out": len(self.held_out)},
            **self._boundary_fields(),
            "warnings": list(self.warnings),
            "texts_requested": self.texts_requested,
            "seconds": round(self.seconds, 2),
        }

    def _boundary_fields(self) -> dict[str, Any]:
        """With a boundary objective: ``statistics`` (why there is no interval) and
        ``gold`` (the documents, the boundaries, the tolerance of boundary F1)."""
        options = self.options
        if not is_boundary(options.objective):
            return {}
        return {
            "stability": None,  # replaces the empty Stability(0, 0): nothing was resampled
            "statistics": NO_INTERVALS,
            "gold": {
                "documents": len(self.gold),
                "boundaries": sum(len(b) for b in self.gold.values()),
                "tolerance": options.tolerance,
                "tolerance_unit": options.tolerance_unit,
            },
        }

    def trials_frame(self) -> pd.DataFrame:
        """One row per trial (``trials.parquet``): the JSON's fields, config as JSON."""
        import pandas as pd

        rows = []
        for t in self.trials:
            row = t.to_dict(self.options.cost)
            row["config"] = t.config.to_json()
            if t.point.model is not None:
                row["model"] = t.point.model
            costs = row.pop("costs")
            row.update({f"cost_{k}": v for k, v in costs.items()})
            row["number"] = t.number
            rows.append(row)
        return pd.DataFrame.from_records(rows)

    def per_question(self) -> pd.DataFrame:
        """``label``, ``question_id``, ``split`` and ``score``: every trial on the tuning
        split, the winner, runner-up and baseline on the held-out split (no row with a
        boundary objective, which asks no question)."""
        import pandas as pd

        labels: list[str] = []
        ids: list[int] = []
        splits: list[str] = []
        scores: list[float] = []
        if is_boundary(self.options.objective):
            return pd.DataFrame(
                {"label": labels, "question_id": ids, "split": splits, "score": scores}
            )

        def add(label: str, questions: Sequence[Question], values: np.ndarray, split: str) -> None:
            labels.extend([label] * len(questions))
            ids.extend(q.index for q in questions)
            splits.extend([split] * len(questions))
            scores.extend(float(v) for v in values)

        for t in self.trials:
            add(t.label, self.tuning, t.scores, "tuning")
        if self.baseline.label not in {t.label for t in self.trials}:
            add(self.baseline.label, self.tuning, self.baseline.tuning_scores, "tuning")
        seen: set[str] = set()
        for finalist in (self.winner, self.runner_up, self.baseline):
            if finalist is None or finalist.held_out_scores is None or finalist.label in seen:
                continue
            seen.add(finalist.label)
            add(finalist.label, self.held_out, finalist.held_out_scores, "held_out")
        return pd.DataFrame({"label": labels, "question_id": ids, "split": splits, "score": scores})

    def verdict(self) -> list[str]:
        """The verdict ("Is the winner real?") in plain words, one sentence per line."""
        return verdict_lines(self)


class _Runner:
    """Evaluates points on one question set, timing each: with ``embedder``, or on a
    model axis with each point's model, loaded by ``load_model`` once per model when a
    trial first needs it (its cache then serves every later trial of that model)."""

    def __init__(
        self,
        documents: Mapping[str, str],
        embedder: Embedder | None,
        options: TuneOptions,
        cuts: Mapping[str, Mapping[str, tuple[Chunk, ...]]],
        counter: TokenCounter,
        load_model: ModelLoader | None = None,
    ) -> None:
        self.documents, self.embedder, self.options = documents, embedder, options
        self.cuts, self.counter = cuts, counter
        self.load_model = load_model or load_embedder
        self.embedders: dict[str, Embedder | None] = {}
        self.requested = self.embedded = 0

    def embedder_for(self, point: Point) -> Embedder | None:
        """The point's model, loaded on first use; the search's embedder without one."""
        name = point.model
        if name is None:
            return self.embedder
        if name not in self.embedders:
            self.embedders[name] = self.load_model(name)
        return self.embedders[name]

    def run(
        self,
        point: Point,
        questions: Sequence[Question],
        progress: Progress | None = None,
    ) -> tuple[Evaluation | None, np.ndarray, dict[str, float]]:
        assert point.config is not None and point.technique is not None
        began = time.perf_counter()
        settings = Settings(top_k=point.top_k, scope=self.options.scope)
        embedder = self.embedder_for(point)
        cut = self.cuts.get(point.config.to_json())
        if cut is None or point.technique.returned == "parent":
            evaluation = evaluate(
                self.documents,
                questions,
                point.config,
                embedder,
                settings,
                progress,
                point.technique,
            )
        else:  # cut once in the plan; evaluated as given, then named
            evaluation = evaluate(
                self.documents,
                questions,
                None,
                embedder,
                settings,
                progress,
                point.technique,
                chunks=cut,
            )
            evaluation = dataclasses.replace(evaluation, config=point.config)
        scores = objective_scores(evaluation, self.documents, self.options.objective)
        self.requested += evaluation.texts_requested
        self.embedded += evaluation.texts_embedded
        costs = trial_costs(evaluation, self.counter, time.perf_counter() - began)
        return evaluation, scores, costs


class _BoundaryRunner(_Runner):
    """Scores points by their chunk starts against each document's gold boundaries: one
    score per document with a gold segmentation (in ``gold``'s order), nothing embedded."""

    def __init__(
        self,
        documents: Mapping[str, str],
        gold: Mapping[str, Sequence[int]],
        options: TuneOptions,
        cuts: Mapping[str, Mapping[str, tuple[Chunk, ...]]],
        counter: TokenCounter,
    ) -> None:
        super().__init__(documents, None, options, cuts, counter)
        self.gold = gold

    def run(
        self,
        point: Point,
        questions: Sequence[Question],
        progress: Progress | None = None,
    ) -> tuple[Evaluation | None, np.ndarray, dict[str, float]]:
        assert point.config is not None
        began = time.perf_counter()
        options = self.options
        cut = self.cuts.get(point.config.to_json()) or chunk_documents(
            self.documents, point.config, list(self.gold)
        )
        scores = np.array(
            [
                boundary_score(
                    self.documents[name],
                    boundaries,
                    cut[name],
                    options.objective,
                    options.tolerance,
                    options.tolerance_unit,
                )
                for name, boundaries in self.gold.items()
            ],
            dtype=np.float64,
        )
        costs = {
            "tokens_sent": math.nan,  # nothing is retrieved: no question, no tokens sent
            "chunks": float(sum(len(cut[name]) for name in self.gold)),
            "embedded_tokens": float(
                sum(self.counter.text(c.text) for name in self.gold for c in cut[name])
            ),
            "seconds": round(time.perf_counter() - began, 3),
        }
        return None, scores, costs


def _gold_documents(
    documents: Mapping[str, str], gold: Mapping[str, Sequence[int]] | None, objective: str
) -> dict[str, str]:
    """The documents a boundary objective scores: those with a gold segmentation."""
    if not gold:
        raise ValueError(
            f"the objective {objective} scores chunk starts against a gold segmentation: "
            "give one (--gold GOLD.json, saved from Explore's boundary editor)"
        )
    missing = [name for name in gold if name not in documents]
    if missing:
        raise ValueError(f"the gold segmentation is for {missing[0]!r}, which is not loaded")
    return {name: documents[name] for name in gold}


def tune(
    documents: Mapping[str, str],
    questions: Sequence[Question],
    space: Space,
    embedder: Embedder | None,
    options: TuneOptions | None = None,
    baseline: Config | None = None,
    progress: Progress | None = None,
    gold: Mapping[str, Sequence[int]] | None = None,
    load_model: ModelLoader | None = None,
) -> TuneResult:
    """Search ``space`` on the tuning split of ``questions``; see the module docstring.

    ``progress(done, total, what)`` hears each trial; raise from it to stop. With a
    boundary objective, ``gold`` maps each document to score to its gold boundaries;
    ``questions`` and ``embedder`` are not used (give ``()`` and ``None``). On a
    ``model`` axis, ``load_model`` loads each model by name, once per search (default
    :func:`load_embedder`), and ``embedder`` is not used.
    """
    began = time.perf_counter()
    options = options or TuneOptions()
    boundary = is_boundary(options.objective)
    if boundary:
        documents, questions = _gold_documents(documents, gold, options.objective), ()
        varied = [k for k, v in space.retrieval.items() if len(v) > 1]
        if varied:
            raise ValueError(
                f"{options.objective} scores where chunks start, not what is retrieved: "
                f"the space should not vary {varied[0]}"
            )
    models = space.retrieval.get(MODEL_AXIS)
    if embedder is None and models is None and needs_retrieval(options.objective):
        dense = [r for r in space.retrieval.get("retriever", ("dense",)) if r != "bm25"]
        if dense:
            raise ValueError(
                f"the objective {options.objective} needs retrieval: give an embedding "
                "model, or search only the bm25 retriever"
            )
    tuning, held_out = split_questions(questions, options.holdout, options.seed)
    model = embedder.name if embedder is not None and models is None else None
    the_plan = plan(documents, tuning, space, options, model)
    counter = TokenCounter(documents)
    runner = (
        _BoundaryRunner(documents, gold or {}, options, the_plan.chunks, counter)
        if boundary
        else _Runner(documents, embedder, options, the_plan.chunks, counter, load_model)
    )
    trials = _search(the_plan, space, tuning, runner, progress)
    trials = _with_statistics(trials, options)
    originals = [t for t in trials if t.duplicate_of is None]
    ranked = sorted(originals, key=lambda t: (-t.quality, t.costs[options.cost], t.number))
    winner_trial = ranked[0]
    runner_trial = ranked[1] if len(ranked) > 1 else None
    base_config = baseline or default_baseline()
    base_values = {MODEL_AXIS: models[0]} if models else {}
    base_point = Point(base_values, base_config, DENSE, _first_k(space))
    base_trial = _baseline_trial(the_plan, base_point, trials, runner, tuning, documents)
    report_fraction(progress, 0.97, "Scoring the finalists on the held-out questions")
    winner = _finalist(winner_trial, runner, tuning, held_out, options)
    runner_up = (
        _finalist(runner_trial, runner, tuning, held_out, options)
        if runner_trial is not None
        else None
    )
    base = _finalist(base_trial, runner, tuning, held_out, options)
    seed = options.seed
    difference = (
        paired_difference(winner_trial.scores, runner_trial.scores, (seed, 1))
        if runner_trial is not None and len(tuning) > 1
        else None
    )
    difference_baseline = (
        paired_difference(winner_trial.scores, base_trial.scores, (seed, 2))
        if len(tuning) > 1
        else None
    )
    other = runner_trial if runner_trial is not None else base_trial
    if boundary:  # no questions to resample: nothing is computed (NO_INTERVALS)
        detectable, stability = math.nan, Stability(0, 0)
    else:
        detectable = detectable_difference(winner_trial.scores, other.scores)
        matrix = np.array([t.scores for t in ranked])
        stability = split_half_stability(matrix, 0, (seed, 3))
    warnings = []
    if (
        winner.held_out is not None
        and base.held_out is not None
        and winner.label != base.label
        and winner.held_out.overlaps(base.held_out)
    ):
        warnings.append(
            f"on the held-out questions the winner's interval {_span(winner.held_out)} "
            f"overlaps the baseline's {_span(base.held_out)}: it may be no better there"
        )
    report_fraction(progress, 1.0, "Done")
    return TuneResult(
        plan=the_plan,
        options=options,
        trials=tuple(trials),
        winner=winner,
        runner_up=runner_up,
        baseline=base,
        difference=difference,
        difference_baseline=difference_baseline,
        detectable_difference=detectable,
        stability=stability,
        tuning=tuple(tuning),
        held_out=tuple(held_out),
        warnings=tuple(warnings),
        texts_requested=runner.requested,
        texts_embedded=runner.embedded,
        seconds=time.perf_counter() - began,
        gold={k: tuple(int(b) for b in v) for k, v in (gold or {}).items()} if boundary else {},
    )


def _first_k(space: Space) -> int:
    ks = space.retrieval.get("top_k")
    return int(ks[0]) if ks else DEFAULT_TOP_K


def _search(
    the_plan: Plan,
    space: Space,
    tuning: Sequence[Question],
    runner: _Runner,
    progress: Progress | None,
) -> list[Trial]:
    """Ask the sampler until the budget is spent; duplicates reuse their original."""
    options = the_plan.options
    budget = the_plan.to_run
    sampler = make_sampler(
        options.sampler, space.paper(), space.sampler_axes(), options.seed, budget
    )
    trials: list[Trial] = []
    by_key: dict[str, Trial] = {}
    by_signature: dict[str, Trial] = {}
    evaluated = draws = 0
    while evaluated < budget and draws < DRAWS_PER_TRIAL * budget + 100:
        draw = sampler.ask()
        if draw is None:
            break
        draws += 1
        key = point_key(space.relevant(draw))
        if key in by_key:  # drawn before (TPE): the same answer
            sampler.tell(by_key[key].quality)
            continue
        candidate = the_plan.candidates.get(key)
        if candidate is None:  # invalid on paper: skipped, counted in the plan
            sampler.tell(None)
            continue
        same = by_signature.get(candidate.signature)
        if same is not None:
            trial = Trial(
                len(trials),
                candidate.label,
                candidate.point,
                same.scores,
                same.costs,
                same.label,
                None,
            )
        else:
            label = f"{evaluated + 1}/{budget}: {candidate.label}"

            def step(done: int, total: int, what: str, n: int = evaluated, t: str = label) -> None:
                share = (n + done / max(total, 1)) / budget
                report_fraction(progress, 0.95 * share, f"{t} — {what}")

            evaluation, scores, costs = runner.run(candidate.point, tuning, step)
            trial = Trial(
                len(trials), candidate.label, candidate.point, scores, costs, None, evaluation
            )
            by_signature[candidate.signature] = trial
            evaluated += 1
        trials.append(trial)
        by_key[key] = trial
        sampler.tell(trial.quality)
    return trials


def _with_statistics(trials: Sequence[Trial], options: TuneOptions) -> list[Trial]:
    """Each trial with its interval; originals with whether they are on the front."""
    intervals: dict[str, Interval] = {}
    for t in trials:
        if t.duplicate_of is None:
            intervals[t.label] = _interval(t, options)
    originals = [t for t in trials if t.duplicate_of is None]
    on_front = front_mask(
        [t.quality for t in originals], [t.costs[options.cost] for t in originals]
    )
    front = {t.label for t, on in zip(originals, on_front, strict=True) if on}
    return [
        dataclasses.replace(
            t,
            interval=intervals[t.duplicate_of or t.label],
            on_front=t.label in front,
        )
        for t in trials
    ]


def _baseline_trial(
    the_plan: Plan,
    point: Point,
    trials: Sequence[Trial],
    runner: _Runner,
    tuning: Sequence[Question],
    documents: Mapping[str, str],
) -> Trial:
    """The baseline as a trial: the searched trial with its chunks, or evaluated now."""
    assert point.config is not None
    ids = _ids(documents, tuning, the_plan.options.scope)
    name = point.config.to_json()
    cut = the_plan.chunks.get(name) or chunk_documents(documents, point.config, ids)
    signature = _signature(point, cut)
    label = _labels(the_plan.space)(point)
    for t in trials:
        candidate = the_plan.candidates.get(point_key(t.point.values))
        if candidate is not None and candidate.signature == signature:
            original = next(o for o in trials if o.label == (t.duplicate_of or t.label))
            return dataclasses.replace(original, label=label)
    evaluation, scores, costs = runner.run(point, tuning)
    return Trial(-1, label, point, scores, costs, None, evaluation)


def _interval(trial: Trial, options: TuneOptions) -> Interval:
    """The trial's quality with its bootstrap interval over the questions; with a
    boundary objective the score alone (the interval is NaN: nothing to resample)."""
    if is_boundary(options.objective):
        return Interval(trial.quality, math.nan, math.nan)
    return mean_interval(trial.scores, (options.seed, 0, trial.number + 1))


def _finalist(
    trial: Trial,
    runner: _Runner,
    tuning: Sequence[Question],
    held_out: Sequence[Question],
    options: TuneOptions,
) -> Finalist:
    tuning_interval = (
        trial.interval if not math.isnan(trial.interval.mean) else _interval(trial, options)
    )
    model = trial.point.model
    if not held_out:
        return Finalist(trial.label, trial.config, tuning_interval, None, trial.scores, None, model)
    _, scores, _ = runner.run(trial.point, held_out)
    interval = mean_interval(scores, (options.seed, 4, trial.number + 1))
    return Finalist(
        trial.label, trial.config, tuning_interval, interval, trial.scores, scores, model
    )


# ------------------------------------------------------------------------ read-out


def _span(interval: Interval) -> str:
    return f"[{interval.low:.2f}, {interval.high:.2f}]"


def _points(value: float) -> str:
    return f"{100 * value:.1f}"


def verdict_lines(result: TuneResult) -> list[str]:
    """The verdict ("Is the winner real?") in plain words."""
    options = result.options
    name = OBJECTIVE_LABELS[options.objective]
    if is_boundary(options.objective):
        return boundary_verdict_lines(result)
    winner, lines = result.winner, []
    lines.append(
        f"Winner: {winner.label}, {name} {winner.tuning.mean:.2f} {_span(winner.tuning)} "
        f"on {len(result.tuning)} tuning questions."
    )
    diff = result.difference
    if diff is not None and result.runner_up is not None:
        verdict = (
            "a real difference"
            if diff.distinguishable
            else "not distinguishable: either could be better"
        )
        lines.append(
            f"{winner.label} beats {result.runner_up.label} by {_points(diff.mean)} {name} "
            f"points, 95 % interval {_points(diff.low)} to {_points(diff.high)}, "
            f"p = {diff.p_value:.3f}: {verdict}."
        )
    base = result.difference_baseline
    if result.baseline.label == winner.label:
        lines.append(f"The winner is the baseline itself ({winner.label}).")
    elif base is not None:
        verdict = "a real difference" if base.distinguishable else "not distinguishable"
        lines.append(
            f"Against the baseline ({result.baseline.label}): {_points(base.mean)} points, "
            f"95 % interval {_points(base.low)} to {_points(base.high)}, "
            f"p = {base.p_value:.3f}: {verdict}."
        )
    if not math.isnan(result.detectable_difference):
        lines.append(
            f"With {len(result.tuning)} questions, differences smaller than about "
            f"{_points(result.detectable_difference)} points are likely to go unseen "
            "(80 % power)."
        )
    st = result.stability
    lines.append(f"The winner is first in {st.first} of {st.splits} random half-splits.")
    if result.baseline.label == winner.label and winner.held_out is not None:
        lines.append(
            f"On {len(result.held_out)} held-out questions: {winner.held_out.mean:.2f} "
            f"{_span(winner.held_out)}."
        )
    elif winner.held_out is not None and result.baseline.held_out is not None:
        inside = winner.held_out.overlaps(result.baseline.held_out)
        lines.append(
            f"On {len(result.held_out)} held-out questions: {winner.held_out.mean:.2f} "
            f"{_span(winner.held_out)} against the baseline's "
            f"{result.baseline.held_out.mean:.2f} {_span(result.baseline.held_out)}"
            + (", within the baseline's interval." if inside else ", clear of it.")
        )
    return lines


def boundary_verdict_lines(result: TuneResult) -> list[str]:
    """The read-out of a search on a boundary objective: the scores, and plainly why
    there is no interval or test."""
    options = result.options
    name = OBJECTIVE_LABELS[options.objective]
    winner = result.winner
    documents = len(result.gold)
    boundaries = sum(len(b) for b in result.gold.values())
    within = ""
    if options.objective == "boundary_f1":
        unit = "character" if options.tolerance_unit == "chars" else "sentence"
        within = f", a cut within {options.tolerance} {unit}{'' if options.tolerance == 1 else 's'}"
    lines = [
        f"Winner: {winner.label}, {name} {winner.tuning.mean:.3f} against the gold "
        f"segmentation ({documents} document{'' if documents == 1 else 's'}, "
        f"{boundaries} boundaries{within})."
    ]
    if result.runner_up is not None:
        lines.append(f"Runner-up: {result.runner_up.label}, {result.runner_up.tuning.mean:.3f}.")
    if result.baseline.label == winner.label:
        lines.append(f"The winner is the baseline itself ({winner.label}).")
    else:
        lines.append(f"Baseline ({result.baseline.label}): {result.baseline.tuning.mean:.3f}.")
    lines.append(
        "No interval and no test: a boundary score compares one segmentation with the gold "
        "one per document, it is not a mean over questions, so there is nothing to resample; "
        "whether a lead is real cannot be said from one gold segmentation."
    )
    if options.objective == "boundary_b":
        from ..evaluation.agreement import human_band

        low, high = human_band().b
        lines.append(
            f"People cutting the same text agree with each other at B {low:.2f} to {high:.2f} "
            "(segeval's samples, measured in paragraphs): read the scores against that."
        )
    return lines


def describe_cost(cost: str) -> str:
    return COST_LABELS[cost]
