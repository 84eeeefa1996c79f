"""Plotly figures for the app: pure functions from numbers to ``go.Figure``.

Nothing here reads widgets or chunks documents; the pages pass plain lists in, which
keeps every figure testable on its own. ``chunking/__init__.py`` does not import this
module, so the core stays usable without plotly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

#: Colours of the configurations on the Compare page, in order.
PALETTE = ("#4285f4", "#fb8c00", "#8e24aa", "#43a047", "#e53935", "#00897b")
LIMIT_COLOUR = "#d81b60"


def _layout(fig: go.Figure, title: str, height: int = 320) -> go.Figure:
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left"},
        height=height,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        bargap=0.05,
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 1, "xanchor": "right"},
    )
    return fig


def _bins(values: Sequence[int], limit: int | None, nbins: int) -> dict[str, float]:
    """Bins from 0 to past the largest size (or the limit), ``nbins`` of them."""
    top = max([*values, limit or 0, 1])
    width = max(1.0, math.ceil(top / nbins))
    return {"start": 0, "end": top + width, "size": width}


def size_histogram(
    sizes: Sequence[int],
    *,
    limit: int | None = None,
    unit: str = "chars",
    nbins: int = 40,
    title: str = "Chunk sizes",
) -> go.Figure:
    """Histogram of chunk sizes from 0, with the size limit drawn as a dashed line."""
    bins = _bins(sizes, limit, nbins)
    fig = go.Figure(
        go.Histogram(
            x=list(sizes),
            xbins=bins,
            name="chunks",
            marker={"color": PALETTE[0]},
            hovertemplate=f"%{{x}} {unit}<br>%{{y}} chunks<extra></extra>",
        )
    )
    if limit is not None:
        fig.add_vline(
            x=limit,
            line={"color": LIMIT_COLOUR, "dash": "dash", "width": 2},
            annotation_text=f"limit {limit}",
            annotation_position="top",
            name="limit",
        )
    # a little room on the right so the limit's label is not cut off
    fig.update_xaxes(title_text=f"size ({unit})", range=[0, bins["end"] * 1.06])
    fig.update_yaxes(title_text="chunks")
    return _layout(fig, title)


def overlaid_histograms(
    series: Mapping[str, Sequence[int]],
    *,
    limits: Mapping[str, int] | None = None,
    unit: str = "chars",
    nbins: int = 40,
    title: str = "Chunk sizes by configuration",
) -> go.Figure:
    """One semi-transparent histogram per configuration on shared bins.

    ``limits`` maps a configuration name to its size limit in ``unit``; each is drawn
    as a dashed line in that configuration's colour.
    """
    fig = go.Figure()
    values = [v for sizes in series.values() for v in sizes]
    bins = _bins(values, max((limits or {}).values(), default=None), nbins)
    for i, (name, sizes) in enumerate(series.items()):
        fig.add_trace(
            go.Histogram(
                x=list(sizes),
                name=name,
                opacity=0.55,
                xbins=bins,
                marker={"color": PALETTE[i % len(PALETTE)]},
                hovertemplate=f"{name}<br>%{{x}} {unit}: %{{y}} chunks<extra></extra>",
            )
        )
    for i, name in enumerate(series):
        limit = (limits or {}).get(name)
        if limit is not None:
            fig.add_vline(
                x=limit,
                line={"color": PALETTE[i % len(PALETTE)], "dash": "dash", "width": 2},
                name=f"limit {name}",
            )
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(title_text=f"size ({unit})", range=[0, bins["end"]])
    fig.update_yaxes(title_text="chunks")
    return _layout(fig, title)


def boundary_strip(
    lanes: Mapping[str, Sequence[int]],
    length: int,
    *,
    title: str = "Where each configuration cuts",
) -> go.Figure:
    """Every boundary's offset along the document, one horizontal lane per configuration.

    A boundary is drawn as a short vertical tick at ``(offset, lane)``. The x axis spans
    the whole document, ``[0, length]``.
    """
    fig = go.Figure()
    names = list(lanes)
    for i, name in enumerate(names):
        offsets = list(lanes[name])
        fig.add_trace(
            go.Scatter(
                x=offsets,
                y=[name] * len(offsets),
                mode="markers",
                name=name,
                marker={
                    "symbol": "line-ns-open",
                    "size": 18,
                    "line": {"width": 1.5, "color": PALETTE[i % len(PALETTE)]},
                    "color": PALETTE[i % len(PALETTE)],
                },
                hovertemplate=f"{name}<br>boundary at %{{x}}<extra></extra>",
            )
        )
    fig.update_xaxes(title_text="character offset", range=[0, max(1, length)])
    fig.update_yaxes(categoryorder="array", categoryarray=list(reversed(names)), showgrid=False)
    fig.update_layout(showlegend=False)
    return _layout(fig, title, height=max(180, 70 + 55 * len(names)))


def agreement_heatmap(
    names: Sequence[str], matrix: Sequence[Sequence[float]], *, k: int
) -> go.Figure:
    """Pairwise boundary agreement (0-1) as an annotated heatmap."""
    fig = go.Figure(
        go.Heatmap(
            z=[list(row) for row in matrix],
            x=list(names),
            y=list(names),
            zmin=0,
            zmax=1,
            colorscale="Blues",
            text=[[f"{v:.0%}" for v in row] for row in matrix],
            texttemplate="%{text}",
            hovertemplate="%{y} vs %{x}: %{text}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, f"Boundary agreement within {k} characters", height=320)
