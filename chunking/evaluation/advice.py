"""Advice from evaluation results: seed 001's two tuning rules and the best configuration.

The rules, as the seed states them: *if precision < 0.7, reduce the chunk size by 25 %;
if recall < 0.6, increase the overlap by 10 %*. How they are read here:

- "precision" and "recall" are the mean scores over the questions (character based,
  top-k retrieval, :mod:`chunking.evaluation.spans`).
- "reduce the chunk size by 25 %": the size limit becomes ``round(0.75 × size)``. The
  overlap keeps its *ratio* to the size, so 400/100 becomes 300/75.
- "increase the overlap by 10 %": 10 % *of the chunk size*, i.e. the overlap ratio rises
  by 10 percentage points (400/0 becomes 400/40; 400/40 becomes 400/80), capped at 50 %.
  Read literally as 10 % of the current overlap, the rule would never move an overlap of
  0, the most common setting.
- When both fire, both apply: 400/0 becomes 300/30.

Character precision is low by construction when gold spans are short and k chunks are
retrieved (a 150-character answer in five 800-character chunks is at most 3.75 %), so
the precision rule fires on almost every configuration; the advice says so with the
numbers, so that the user reads it as "smaller chunks are more precise" rather than as
a target. When even one well-aimed chunk of the suggested size could not reach the
floor (a question's gold text is much shorter than a chunk), the rule's message says so
itself instead of asking for 0.7 and then calling it unreachable.

Where chunks are longer than the embedding model reads (its own word pieces), the
advice says how many: the model embedded only their beginning, so a size under the
model's window is suggested for this model (a larger size may still suit the LLM that
reads the chunks, at the cost of retrieval on their ends).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..config import Config
from .core import METRIC_LABELS, METRICS

if TYPE_CHECKING:
    import pandas as pd

PRECISION_FLOOR = 0.7
RECALL_FLOOR = 0.6
SIZE_CUT = 0.25
OVERLAP_STEP = 0.10
MAX_OVERLAP_RATIO = 0.5


@dataclass(frozen=True)
class Firing:
    """A rule that fired: which, on what value, and what it asks for."""

    rule: str
    metric: str
    value: float
    floor: float
    reason: str


@dataclass(frozen=True)
class Advice:
    """The rules applied to one configuration's results."""

    config: Config
    firings: tuple[Firing, ...]
    suggestion: Config | None
    notes: tuple[str, ...]

    def lines(self) -> list[str]:
        """The advice as sentences, one per line."""
        label = self.config.label()
        if not self.firings and not self.notes:
            return [
                f"{label}: precision ≥ {PRECISION_FLOOR} and recall ≥ {RECALL_FLOOR}; "
                "neither rule fires. Keep this configuration."
            ]
        out = [f"{label}:"]
        out += [f"- {f.reason}" for f in self.firings]
        if self.suggestion is not None:
            out.append(f"- Suggested next: {self.suggestion.label()}.")
        out += [f"- {n}" for n in self.notes]
        return out

    def text(self) -> str:
        return "\n".join(self.lines())

    def markdown(self) -> str:
        """The advice as Markdown: the configuration, then one bullet per rule or note."""
        first, *rest = self.lines()
        return f"**{first}**\n\n" + "\n".join(rest)


def _lower(label: str) -> str:
    """``Precision Ω`` → ``precision Ω`` (an acronym such as ``IoU`` stays)."""
    return label if label == "IoU" else label[:1].lower() + label[1:]


def _ratio_text(value: float) -> str:
    return f"{value:.3f}"


def advise(row: Mapping[str, Any]) -> Advice:
    """Apply the rules to one results row (an :attr:`Evaluation.summary` or table row)."""
    config = Config.from_json(row["config"])
    precision, recall = float(row["precision_mean"]), float(row["recall_mean"])
    if math.isnan(precision) or math.isnan(recall):
        note = "The rules need recall and precision: evaluate with an embedding model."
        return Advice(config, (), None, (note,))
    firings: list[Firing] = []
    notes: list[str] = []
    size = config.limit
    overlap = config.params.get("overlap")
    new_size, ratio = size, (overlap / size if size and overlap is not None else None)
    if precision < PRECISION_FLOOR:
        firings.append(_precision_firing(precision, size, row))
        if size is not None:
            new_size = max(1, round(size * (1 - SIZE_CUT)))
    if recall < RECALL_FLOOR:
        firings.append(_recall_firing(recall, overlap, size))
        if ratio is None:
            notes.append(
                f"{config.spec.label} has no overlap parameter, so the recall rule cannot be "
                "applied to it; try a strategy with overlap (recursive, token windows)."
            )
        else:
            ratio = min(ratio + OVERLAP_STEP, MAX_OVERLAP_RATIO)
    notes.append(_truncation_note(row))
    suggestion = _suggest(config, new_size, ratio) if firings else None
    return Advice(config, tuple(firings), suggestion, tuple(n for n in notes if n))


def _precision_firing(precision: float, size: int | None, row: Mapping[str, Any]) -> Firing:
    target = f"{size} → {max(1, round(size * (1 - SIZE_CUT)))}" if size else "smaller chunks"
    ceiling = _precision_ceiling(row)
    if ceiling is None or ceiling >= PRECISION_FLOOR:
        reason = (
            f"Precision {_ratio_text(precision)} < {PRECISION_FLOOR}: reduce the chunk size "
            f"by {SIZE_CUT:.0%} ({target})."
        )
    else:
        gold, chunk = float(row["mean_gold_chars"]), float(row["mean_chunk_chars"])
        reason = (
            f"Precision {_ratio_text(precision)} < {PRECISION_FLOOR}, and {PRECISION_FLOOR} is "
            f"out of reach here: precision is counted in characters, a question's gold text "
            f"averages {gold:.0f} characters and a chunk {chunk:.0f}, so even a single "
            f"well-aimed chunk {SIZE_CUT:.0%} smaller would score at most {ceiling:.2f}. "
            f"Smaller chunks are still more precise: try {target} and keep it if recall holds."
        )
    return Firing("precision", "precision", precision, PRECISION_FLOOR, reason)


def _precision_ceiling(row: Mapping[str, Any]) -> float | None:
    """The best precision one retrieved chunk of the rule's smaller size could reach:
    the gold characters over the chunk's (``None`` without the chunk statistics)."""
    gold, chunk = row.get("mean_gold_chars"), row.get("mean_chunk_chars")
    if not gold or not chunk or _missing(gold) or _missing(chunk):
        return None
    return min(1.0, float(gold) / (float(chunk) * (1 - SIZE_CUT)))


def _missing(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _truncation_note(row: Mapping[str, Any]) -> str:
    """What the model did not read, where chunks are longer than its window."""
    share, limit = row.get("truncated_share"), row.get("model_limit")
    if not share or not limit or _missing(share) or _missing(limit):
        return ""
    model = row.get("model") or "the embedding model"
    return (
        f"{share:.0%} of these chunks are longer than {model} reads ({int(limit)} of its word "
        "pieces): it embedded only their beginning, so text near their end cannot be found. "
        f"For this model prefer chunks under about {int(limit)} word pieces (or a "
        "long-context model); a larger size only suits the LLM that reads the chunks."
    )


def _recall_firing(recall: float, overlap: int | None, size: int | None) -> Firing:
    if overlap is not None and size:
        ratio = overlap / size
        new = min(ratio + OVERLAP_STEP, MAX_OVERLAP_RATIO)
        change = f"overlap {ratio:.0%} → {new:.0%} of the chunk size"
    else:
        change = "more overlap"
    return Firing(
        "recall",
        "recall",
        recall,
        RECALL_FLOOR,
        f"Recall {_ratio_text(recall)} < {RECALL_FLOOR}: increase the overlap by "
        f"{OVERLAP_STEP:.0%} of the chunk size ({change}).",
    )


def _suggest(config: Config, size: int | None, ratio: float | None) -> Config | None:
    params = dict(config.params)
    limit = config.spec.limit_param
    if limit and size is not None:
        params[limit] = size
    if ratio is not None and size is not None:
        params["overlap"] = min(round(ratio * size), size - 1)
    try:
        return Config.create(config.strategy, **params)
    except ValueError:
        return None


# ------------------------------------------------------------------- best configuration


def best_row(table: pd.DataFrame, metric: str) -> pd.Series:
    """The row with the highest mean ``metric``; ties go to the lower std, then fewer chunks."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    if table.empty:
        raise ValueError("the results table is empty")
    column = f"{metric}_mean"
    if table[column].isna().all():
        raise ValueError(f"no {metric} scores: evaluate with an embedding model first")
    ranked = table.sort_values(
        [column, f"{metric}_std", "n_chunks"], ascending=[False, True, True], na_position="last"
    )
    return ranked.iloc[0]


@dataclass(frozen=True)
class Report:
    """The best configuration for a metric and the rules applied to it."""

    metric: str
    best: Mapping[str, Any]
    advice: Advice
    #: How the suggested configuration scored, if the sweep already holds it.
    suggestion_row: Mapping[str, Any] | None

    def lines(self) -> list[str]:
        label = Config.from_json(self.best["config"]).label()
        technique, model = self.best.get("technique"), self.best.get("model")
        extra = [str(technique)] if technique and technique != "dense" else []
        extra += [str(model)] if isinstance(model, str) and model else []
        if extra:
            label += f" ({', '.join(extra)})"
        name = METRIC_LABELS[self.metric]
        scores = ", ".join(
            f"{_lower(METRIC_LABELS[m])} {self.best[f'{m}_mean']:.3f}"
            for m in METRICS
            if m != self.metric and not math.isnan(self.best[f"{m}_mean"])
        )
        out = [
            f"Best for {name}: {label} — {_lower(name)} {self.best[f'{self.metric}_mean']:.3f} "
            f"± {self.best[f'{self.metric}_std']:.3f} ({scores})."
        ]
        out += self.advice.lines()
        if self.suggestion_row is not None:
            row = self.suggestion_row
            shown = dict.fromkeys(("precision", "recall", self.metric))
            scores = ", ".join(f"{_lower(METRIC_LABELS[m])} {row[f'{m}_mean']:.3f}" for m in shown)
            out.append(f"- The sweep already has the suggestion: {scores}.")
        return out

    def text(self) -> str:
        return "\n".join(self.lines())

    def markdown(self) -> str:
        """The report as Markdown: the best configuration, then the advice on it."""
        first, *rest = self.lines()
        advice = self.advice.lines()
        extra = rest[len(advice) :]
        return f"{first}\n\n{self.advice.markdown()}" + "".join(f"\n{x}" for x in extra)


def report(table: pd.DataFrame, metric: str = "recall") -> Report:
    """Name the best configuration for ``metric`` and apply the rules to it."""
    best = best_row(table, metric)
    advice = advise(best)
    found = None
    if advice.suggestion is not None:
        same = table["config"] == advice.suggestion.to_json()
        for column in ("model", "technique"):
            if column in table and column in best:
                same &= table[column].fillna("") == (best[column] or "")
        match = table[same]
        found = match.iloc[0].to_dict() if len(match) else None
    return Report(metric, best.to_dict(), advice, found)
