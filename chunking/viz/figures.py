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


def _limit_line(limit: int, colour: str, xref: str = "x") -> dict[str, object]:
    """A dashed vertical line at ``limit`` across the whole plot height."""
    return {
        "type": "line",
        "xref": xref,
        "yref": "paper",
        "x0": limit,
        "x1": limit,
        "y0": 0,
        "y1": 1,
        "line": {"color": colour, "dash": "dash", "width": 2},
    }


def size_histogram(
    sizes: Sequence[int],
    *,
    limit: int | None = None,
    unit: str = "chars",
    nbins: int = 40,
    title: str = "Chunk sizes",
) -> go.Figure:
    """Histogram of chunk sizes from 0, with the size limit drawn as a dashed line.

    Built from one dictionary: Explore draws it on every rerun, and plotly's
    property-by-property updates (``add_vline``, ``update_layout``) cost twenty times
    more than constructing the figure at once.
    """
    bins = _bins(sizes, limit, nbins)
    layout: dict[str, object] = {
        "title": {"text": title, "x": 0, "xanchor": "left"},
        "height": 320,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "bargap": 0.05,
        # a little room on the right so the limit's label is not cut off
        "xaxis": {"title": {"text": f"size ({unit})"}, "range": [0, bins["end"] * 1.06]},
        "yaxis": {"title": {"text": "chunks"}},
    }
    if limit is not None:
        layout["shapes"] = [_limit_line(limit, LIMIT_COLOUR)]
        layout["annotations"] = [
            {
                "x": limit,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "text": f"limit {limit}",
                "showarrow": False,
                "yanchor": "bottom",
            }
        ]
    trace = {
        "type": "histogram",
        "x": list(sizes),
        "xbins": bins,
        "name": "chunks",
        "marker": {"color": PALETTE[0]},
        "hovertemplate": f"%{{x}} {unit}<br>%{{y}} chunks<extra></extra>",
    }
    return go.Figure({"data": [trace], "layout": layout})


def histogram_panels(
    series: Mapping[str, Sequence[int]],
    *,
    units: Mapping[str, str],
    limits: Mapping[str, int | None] | None = None,
    nbins: int = 30,
    title: str = "Chunk sizes by configuration",
) -> go.Figure:
    """Small multiples: one histogram panel per configuration, side by side.

    Configurations may count in different units (characters, tokens, the model's word
    pieces), so each panel has its own x axis in its own ``units[name]`` and its own
    size limit (``limits[name]``) as a dashed line in the configuration's colour.
    """
    from plotly.subplots import make_subplots

    names = list(series)
    fig = make_subplots(rows=1, cols=max(1, len(names)), subplot_titles=names)
    for i, name in enumerate(names):
        colour = PALETTE[i % len(PALETTE)]
        unit, limit = units[name], (limits or {}).get(name)
        bins = _bins(series[name], limit, nbins)
        fig.add_trace(
            go.Histogram(
                x=list(series[name]),
                name=name,
                xbins=bins,
                marker={"color": colour},
                hovertemplate=f"%{{x}} {unit}: %{{y}} chunks<extra></extra>",
            ),
            row=1,
            col=i + 1,
        )
        if limit is not None:
            fig.add_vline(
                x=limit,
                line={"color": LIMIT_COLOUR, "dash": "dash", "width": 2},
                annotation_text=f"limit {limit}",
                annotation_position="top",
                row=1,
                col=i + 1,
            )
        fig.update_xaxes(
            title_text=f"size ({unit})", range=[0, bins["end"] * 1.06], row=1, col=i + 1
        )
    fig.update_yaxes(title_text="chunks", row=1, col=1)
    fig.update_layout(showlegend=False)
    return _layout(fig, title, height=340)


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
