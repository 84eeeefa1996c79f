"""Plotly figures of evaluation results, built from the results table alone.

Pure functions: a table in, a ``go.Figure`` out, nothing drawn or shown here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..evaluation.core import METRIC_LABELS, METRICS
from ..evaluation.passk import table_ks

if TYPE_CHECKING:
    import pandas as pd

CHART_METRICS = ("recall", "precision", "iou")
_PALETTE = (
    "#1a73e8",
    "#e8710a",
    "#188038",
    "#d93025",
    "#9334e6",
    "#12b5cb",
    "#f9ab00",
    "#5f6368",
)


def series_label(row: pd.Series) -> str:
    """What a line stands for: everything but the size (strategy, unit, overlap, threshold)."""
    parts = [str(row["strategy"]), str(row["unit"])]
    overlap = row.get("overlap")
    if overlap is not None and overlap == overlap:  # not NaN
        parts.append(f"overlap {int(overlap)}")
    threshold = row.get("threshold")
    if threshold is not None and threshold == threshold:
        parts.append(f"threshold {float(threshold):g}")
    return " · ".join(parts)


def metrics_vs_size(
    table: pd.DataFrame, metrics: Sequence[str] = CHART_METRICS, show_std: bool = False
) -> go.Figure:
    """One panel per metric: its mean against the chunk size, one line per series.

    ``show_std`` adds ± one standard deviation as error bars (per-question scores
    spread widely, so they are off by default).
    """
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric {unknown[0]!r}; choose from {', '.join(METRICS)}")
    titles = [METRIC_LABELS[m] for m in metrics]
    fig = make_subplots(rows=1, cols=len(metrics), subplot_titles=titles, shared_xaxes=False)
    frame = table.assign(series=[series_label(r) for _, r in table.iterrows()])
    for number, (name, group) in enumerate(frame.groupby("series", sort=True)):
        group = group.sort_values("size")
        colour = _PALETTE[number % len(_PALETTE)]
        for col, metric in enumerate(metrics, start=1):
            error = (
                {"type": "data", "array": group[f"{metric}_std"], "visible": True}
                if show_std
                else None
            )
            fig.add_trace(
                go.Scatter(
                    x=group["size"],
                    y=group[f"{metric}_mean"],
                    error_y=error,
                    mode="lines+markers",
                    name=name,
                    legendgroup=name,
                    showlegend=col == 1,
                    line={"color": colour},
                    hovertemplate=(
                        f"{name}<br>size %{{x}}<br>{METRIC_LABELS[metric]} %{{y:.3f}}"
                        "<extra></extra>"
                    ),
                ),
                row=1,
                col=col,
            )
            fig.update_xaxes(title_text="chunk size", row=1, col=col)
    fig.update_yaxes(rangemode="tozero", tickformat=".1%")
    fig.update_layout(
        height=360,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


def question_scores(per_question: pd.DataFrame, metric: str = "recall") -> go.Figure:
    """Histogram of one metric's per-question scores, one colour per document."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(METRICS)}")
    fig = go.Figure()
    for name, group in per_question.groupby("corpus_id", sort=True):
        fig.add_trace(go.Histogram(x=group[metric], name=str(name), xbins={"size": 0.05}))
    fig.update_layout(
        barmode="stack",
        height=300,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis_title=METRIC_LABELS[metric],
        yaxis_title="questions",
    )
    return fig


def technique_deltas(table: pd.DataFrame, metrics: Sequence[str] = CHART_METRICS) -> go.Figure:
    """Each technique's difference from plain dense retrieval (the table's first row),
    one bar per metric, in percentage points; the seconds each took in the hover."""
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric {unknown[0]!r}; choose from {', '.join(METRICS)}")
    fig = go.Figure()
    for number, metric in enumerate(metrics):
        fig.add_trace(
            go.Bar(
                y=table["technique"],
                x=100 * table[f"{metric}_delta"],
                orientation="h",
                name=f"Δ {METRIC_LABELS[metric]}",
                marker={"color": _PALETTE[number % len(_PALETTE)]},
                customdata=table["seconds"],
                hovertemplate=(
                    f"%{{y}}<br>Δ {METRIC_LABELS[metric]} %{{x:+.1f}} points"
                    "<br>%{customdata:.1f} s<extra></extra>"
                ),
            )
        )
    fig.update_layout(
        barmode="group",
        height=80 + 40 * len(table),
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis_title="difference from dense (percentage points)",
        yaxis={"autorange": "reversed"},
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def row_label(row: pd.Series) -> str:
    """What one results row stands for: its configuration (strategy, size and unit) or
    technique, and its model."""
    if "configuration" in row and isinstance(row.get("technique"), str):
        parts = [str(row["technique"])]
    else:
        parts = [str(row["strategy"])]
        size = row.get("size")
        if size is not None and size == size:  # not NaN
            parts.append(f"{int(size)} {row['unit']}")
        technique = row.get("technique")
        if isinstance(technique, str) and technique != "dense":
            parts.append(technique)
    model = row.get("model")
    if isinstance(model, str) and model:
        parts.append(model)
    return " · ".join(parts)


def pass_at_k_chart(table: pd.DataFrame) -> go.Figure:
    """Pass@k (percent) against k, one line per row of a results or techniques table
    that has ``pass@K`` columns (:mod:`chunking.evaluation.passk`)."""
    ks = table_ks(table)
    if not ks:
        raise ValueError("the table has no pass@k column; evaluate with several --top-k")
    fig = go.Figure()
    for number, (_, row) in enumerate(table.iterrows()):
        name = row_label(row)
        fig.add_trace(
            go.Scatter(
                x=ks,
                y=[row[f"pass@{k}"] for k in ks],
                mode="lines+markers",
                name=name,
                line={"color": _PALETTE[number % len(_PALETTE)]},
                hovertemplate=f"{name}<br>Pass@%{{x}}: %{{y:.2f}}<extra></extra>",
            )
        )
    fig.update_layout(
        height=360,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={"title": {"text": "k (chunks retrieved)"}, "tickvals": ks},
        yaxis={"title": {"text": "Pass@k (%)"}, "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.25},
    )
    return fig
