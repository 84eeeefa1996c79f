"""The quality–cost chart of a search, built from its trials alone.

A pure function: the trials (the ``trials`` of ``tune.json``) in, a ``go.Figure`` out.
Every trial evaluated is a point with its 95 % interval as an error bar; the front is
joined in cost order and drawn strong, dominated trials pale; the hover shows the
configuration. Each point's ``customdata`` is its label, so a page can tell which point
a user selected (:func:`selected_label`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

FRONT_COLOUR = "#1a73e8"
PALE_COLOUR = "rgba(95, 99, 104, 0.35)"
WINNER_COLOUR = "#d93025"


def _hover(trial: Mapping[str, Any]) -> str:
    config = trial.get("config") or {}
    params = config.get("params", {}) if isinstance(config, Mapping) else {}
    shown = ", ".join(
        f"{k}={v}" for k, v in params.items() if k in ("size", "overlap", "unit", "threshold")
    )
    return f"{config.get('strategy', '')}: {shown}" if shown else str(config.get("strategy", ""))


def _trace(
    trials: Sequence[Mapping[str, Any]], name: str, colour: str, lines: bool, size: int
) -> go.Scatter:
    return go.Scatter(
        x=[t["cost"] for t in trials],
        y=[t["quality"] for t in trials],
        mode="lines+markers" if lines else "markers",
        name=name,
        marker={"color": colour, "size": size},
        line={"color": colour, "width": 2},
        error_y={
            "type": "data",
            "symmetric": False,
            "array": [t["ci_high"] - t["quality"] for t in trials],
            "arrayminus": [t["quality"] - t["ci_low"] for t in trials],
            "color": colour,
            "thickness": 1,
        },
        customdata=[
            [t["label"], _hover(t), t.get("technique", ""), t.get("top_k", "")] for t in trials
        ],
        hovertemplate=(
            "<b>%{customdata[0]}</b><br>%{customdata[1]}<br>"
            "retrieval: %{customdata[2]}, top %{customdata[3]}<br>"
            "quality %{y:.3f}, cost %{x:,.1f}<extra></extra>"
        ),
    )


def front_chart(
    trials: Sequence[Mapping[str, Any]],
    objective: str = "recall",
    cost: str = "tokens sent per question",
    winner: str | None = None,
) -> go.Figure:
    """Quality (with its interval) against cost for every trial evaluated; duplicates
    (``duplicate_of`` set) are left out, they sit on their original."""
    shown = [t for t in trials if not t.get("duplicate_of")]
    front = sorted((t for t in shown if t.get("on_front")), key=lambda t: t["cost"])
    dominated = [t for t in shown if not t.get("on_front")]
    fig = go.Figure()
    if dominated:
        fig.add_trace(_trace(dominated, "dominated", PALE_COLOUR, False, 8))
    if front:
        fig.add_trace(_trace(front, "front", FRONT_COLOUR, True, 10))
    best = [t for t in shown if t["label"] == winner]
    if best:
        trace = _trace(best, "winner", WINNER_COLOUR, False, 14)
        trace.marker.symbol = "star"
        fig.add_trace(trace)
    fig.update_layout(
        title="Quality against cost (95 % intervals; the front joined)",
        xaxis_title=cost,
        yaxis_title=objective,
        height=420,
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        legend={"orientation": "h", "y": -0.2},
        clickmode="event+select",
    )
    return fig


def selected_label(points: Sequence[Mapping[str, Any]]) -> str | None:
    """The label of the first point of a plotly selection (``customdata[0]``), if any."""
    for point in points:
        data = point.get("customdata")
        if isinstance(data, (list, tuple)) and data:
            return str(data[0])
    return None


def difference_chart(differences: Sequence[float], title: str) -> go.Figure:
    """Per-question differences (winner minus the other), sorted, as bars."""
    ordered = sorted(differences)
    fig = go.Figure(
        go.Bar(
            x=list(range(1, len(ordered) + 1)),
            y=ordered,
            marker={"color": [FRONT_COLOUR if d > 0 else WINNER_COLOUR for d in ordered]},
            hovertemplate="difference %{y:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title="questions, sorted by difference",
        yaxis_title="difference",
        height=300,
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
    )
    return fig
