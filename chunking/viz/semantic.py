"""Plotly figures of the Semantic and Map pages: pure functions from numbers to figures.

- :func:`distance_curve`: the distance between consecutive sentence windows, the cutoff
  as a horizontal line, and every breakpoint as a marker coloured by its reason.
- :func:`distance_histogram`: the distribution of the distances with every method's
  cutoff drawn on it.
- :func:`embedding_map`: chunk embeddings projected to 2D (``Scattergl``) or 3D
  (``Scatter3d``), one trace per configuration, coloured by position, size or
  configuration.
- :func:`document_positions`: where chosen chunks sit in the document.

Document text only ever reaches a figure through :func:`hover_text`, which escapes it:
plotly reads a few HTML tags in hover labels, and a document is untrusted. Nothing here
reads widgets or computes embeddings; ``chunking/__init__.py`` does not import this
module, so the core stays usable without plotly.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .figures import PALETTE

#: Reason of a boundary removed because a chunk was under ``min_size``.
MERGED = "min-size merge"
#: Colour of each breakpoint reason (the core's reasons plus :data:`MERGED`).
REASON_COLOURS: Mapping[str, str] = {
    "similarity": "#d81b60",
    "max-size split": "#fb8c00",
    "structural": "#6d4c41",
    MERGED: "#9e9e9e",
}
REASON_LABELS: Mapping[str, str] = {
    "similarity": "similarity cut",
    "max-size split": "max-size split",
    "structural": "structural split (inside one long sentence)",
    MERGED: "removed by min-size merge",
}
#: Colour of each method's cutoff on the histogram.
METHOD_COLOURS: Mapping[str, str] = {
    "percentile": "#4285f4",
    "similarity": "#43a047",
    "std": "#8e24aa",
    "iqr": "#00897b",
    "gradient": "#6d4c41",
    "count": "#fb8c00",
}
CURRENT_COLOUR = "#212121"
COLOUR_MODES = ("position", "size", "configuration")
#: Marker symbols of the configurations when colour shows something else (2D and 3D).
SYMBOLS = ("circle", "square", "diamond", "x")
#: Above this many points the curve is drawn with WebGL. SVG is faster below: a line's
#: path is simplified, and WebGL costs a lot where it is emulated on the CPU.
WEBGL_POINTS = 20_000
#: Above this many breakpoints of one reason, stems replace markers.
MARKER_LIMIT = 300


def hover_text(text: str, *, limit: int = 160, width: int = 60) -> str:
    """``text`` on a few lines for a hover label: flattened, shortened, escaped.

    Lines are joined with ``<br>``; every character of the text itself is escaped, so
    markup in a document shows as text.
    """
    flat = " ".join(text[: limit * 4].split())  # only the start is ever shown
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return "<br>".join(html.escape(line, quote=False) for line in _wrap(flat, width))


def _wrap(flat: str, width: int) -> list[str]:
    """Greedy lines of at most ``width`` characters, broken at spaces where possible
    (textwrap is ten times slower, which shows with thousands of breakpoints)."""
    lines = []
    while len(flat) > width:
        cut = flat.rfind(" ", 0, width + 1)
        if cut <= 0:
            cut = width
        lines.append(flat[:cut])
        flat = flat[cut:].lstrip(" ")
    lines.append(flat)
    return lines


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(
        title={"text": html.escape(title, quote=False), "x": 0, "xanchor": "left"},
        height=height,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 1, "xanchor": "right"},
        hoverlabel={"align": "left"},
    )
    return fig


# --- the distance curve --------------------------------------------------------------------


def _note(
    i: int,
    distance: float,
    reason: str,
    pairs: Mapping[int, tuple[str, str]] | None,
    with_distance: bool,
) -> str:
    """What the curve's label adds at a breakpoint: reason, place, the distance when the
    curve shows another series (the gradient), and the sentences on either side."""
    label = f"<b>{html.escape(REASON_LABELS.get(reason, reason))}</b>"
    if reason == "structural":
        label += f" inside sentence {i}"
    lines = [label]
    if with_distance and not math.isnan(distance):
        lines.append(f"distance {distance:.3f}")
    if pairs is not None and i in pairs:
        before, after = pairs[i]
        if reason == "structural":
            lines.append(f"<i>sentence:</i> {hover_text(before, limit=120)}")
        else:
            lines.append(f"<i>before:</i> {hover_text(before, limit=120)}")
            lines.append(f"<i>after:</i> {hover_text(after, limit=120)}")
    return "<br>" + "<br>".join(lines)


def _notes(
    n: int,
    points: Sequence[tuple[int, float, str]],
    pairs: Mapping[int, tuple[str, str]] | None,
    with_distance: bool,
) -> list[str]:
    """One note per curve point: empty, or the breakpoints after that sentence."""
    notes = [""] * n
    seen: set[tuple[int, str]] = set()
    for i, distance, reason in points:
        if 0 <= i < n and (i, reason) not in seen:
            seen.add((i, reason))
            notes[i] += _note(i, distance, reason, pairs, with_distance)
    return notes


def _marker_trace(
    points: Sequence[tuple[int, float, str]], reason: str, scores: np.ndarray
) -> go.Scatter:
    """The breakpoints of one reason: a marker each, or, above :data:`MARKER_LIMIT`, a
    stem from the bottom of the plot up to the curve. The stems are one unbroken line
    (a comb along the bottom): thousands of markers, or of separate segments, make every
    redraw several times slower. Their labels are on the curve (see
    :func:`distance_curve`), so they are not repeated here."""
    floor = float(np.nanmin(scores)) if len(scores) and np.isfinite(scores).any() else 0.0
    xs = [i for i, _, _ in points]
    ys = [floor if reason == "structural" else float(scores[i]) for i, _, _ in points]
    colour = REASON_COLOURS.get(reason, PALETTE[0])
    common: dict[str, Any] = {
        "name": f"{REASON_LABELS.get(reason, reason)} ({len(points)})",
        "meta": reason,
        "hoverinfo": "skip",
    }
    if len(points) > MARKER_LIMIT:
        tops = np.asarray(ys, dtype=np.float64)
        return go.Scatter(
            x=np.repeat(np.asarray(xs), 3),
            y=np.column_stack([np.full_like(tops, floor), tops, np.full_like(tops, floor)]).ravel(),
            mode="lines",
            line={"color": colour, "width": 1},
            **common,
        )
    symbol = {"structural": "triangle-up", MERGED: "x-thin-open"}.get(reason, "circle")
    outline = {"width": 2, "color": colour} if reason == MERGED else {"width": 1, "color": "#fff"}
    return go.Scatter(
        x=xs,
        y=ys,
        mode="markers",
        marker={
            "color": colour,
            "size": 9 if reason == MERGED else 10,
            "symbol": symbol,
            "line": outline,
        },
        **common,
    )


def distance_curve(
    scores: Sequence[float] | np.ndarray,
    *,
    threshold: float,
    breakpoints: Sequence[tuple[int, float, str]],
    merged: Sequence[tuple[int, float, str]] = (),
    pairs: Mapping[int, tuple[str, str]] | None = None,
    series: str = "distance",
    title: str = "Distance between consecutive sentence windows",
    webgl: bool | None = None,
    height: int = 380,
) -> go.Figure:
    """The series a method cuts (``scores[i]``: after sentence ``i``), the cutoff as a
    dashed horizontal line, and breakpoints as markers coloured by reason.

    ``breakpoints`` and ``merged`` hold ``(i, distance, reason)`` as in
    :class:`chunking.semantic.SemanticResult`; markers sit on the curve at ``scores[i]``
    (structural splits, inside a sentence, at the bottom). The curve (the trace with
    ``meta="curve"``, drawn last) carries every label: hovering at a breakpoint shows its
    reason and ``pairs[i]``, the sentences before and after it; each label is sent once.
    The curve uses WebGL above :data:`WEBGL_POINTS` distances unless ``webgl`` says
    otherwise.
    """
    y = np.asarray(scores, dtype=np.float64)
    use_gl = len(y) > WEBGL_POINTS if webgl is None else webgl
    fig = go.Figure()
    by_reason: dict[str, list[tuple[int, float, str]]] = {}
    for point in breakpoints:
        by_reason.setdefault(point[2], []).append(point)
    for reason, points in by_reason.items():
        fig.add_trace(_marker_trace(points, reason, y))
    removed = [(i, d, MERGED) for i, d, _ in merged]
    if removed:
        fig.add_trace(_marker_trace(removed, MERGED, y))
    notes = _notes(len(y), [*breakpoints, *removed], pairs, series != "distance")
    # The curve comes after the markers so that its thin line stays visible over them.
    curve = go.Scattergl if use_gl else go.Scatter
    fig.add_trace(
        curve(
            x=np.arange(len(y)),
            y=y,
            mode="lines+markers" if len(y) <= 200 else "lines",
            name=series,
            meta="curve",
            legendrank=1,
            line={"color": PALETTE[0], "width": 1.5},
            marker={"size": 4, "color": PALETTE[0]},
            hovertext=np.asarray(notes, dtype=object),  # an array: validated at once
            hovertemplate=(
                f"after sentence %{{x}} · {html.escape(series)} %{{y:.3f}}%{{hovertext}}"
                "<extra></extra>"
            ),
        )
    )
    if math.isfinite(threshold):
        fig.add_hline(
            y=threshold,
            line={"color": CURRENT_COLOUR, "dash": "dash", "width": 1.5},
            name="threshold",
            annotation_text=f"cutoff {threshold:.3f}",
            annotation_position="top left",
        )
    fig.update_layout(hovermode="x")  # the label of the nearest sentence, wherever the mouse is
    fig.update_xaxes(title_text="sentence (boundary after it)", rangemode="tozero")
    fig.update_yaxes(title_text=series)
    return _layout(fig, title, height)


# --- the histogram -------------------------------------------------------------------------


def distance_histogram(
    distances: Sequence[float] | np.ndarray,
    *,
    cutoffs: Mapping[str, float],
    current: float | None = None,
    current_label: str = "current",
    nbins: int = 40,
    title: str = "Distances and each method's cutoff (default settings)",
    height: int = 340,
) -> go.Figure:
    """Histogram of the distances with each method's cutoff as a dotted vertical line.

    ``cutoffs`` maps a method name to its cutoff on the distance scale; infinite ones
    (a method that cuts nowhere or everywhere) are left out. ``current``, the cutoff in
    use, is drawn solid. Each line is a shape named after its method.
    """
    d = np.asarray(distances, dtype=np.float64)
    fig = go.Figure(
        go.Histogram(
            x=d,
            nbinsx=nbins,
            name="distances",
            marker={"color": "rgba(66, 133, 244, 0.55)"},
            hovertemplate="distance %{x}<br>%{y} boundaries<extra></extra>",
        )
    )
    for method, value in cutoffs.items():
        if not math.isfinite(value):
            continue
        fig.add_vline(
            x=value,
            line={"color": METHOD_COLOURS.get(method, PALETTE[0]), "dash": "dot", "width": 2},
            name=method,
            showlegend=True,
            legendgroup=method,
        )
    if current is not None and math.isfinite(current):
        fig.add_vline(
            x=current,
            line={"color": CURRENT_COLOUR, "width": 3},
            name=current_label,
            showlegend=True,
        )
    fig.update_xaxes(title_text="distance (1 - cosine similarity)")
    fig.update_yaxes(title_text="boundaries")
    _layout(fig, title, height)
    fig.update_layout(legend={"y": -0.25, "yanchor": "top", "x": 0, "xanchor": "left"})
    return fig


# --- the embedding map ---------------------------------------------------------------------


@dataclass(frozen=True)
class MapPoints:
    """The points of an embedding map, one per chunk, in any order.

    ``group[k]`` indexes ``groups`` (configuration names); ``chunk[k]`` is the chunk's
    index in its configuration; ``position[k]`` its start as a share of the document
    (0-1); ``size[k]`` its size; ``preview[k]`` its first words (plain text).
    """

    coords: np.ndarray
    groups: Sequence[str]
    group: Sequence[int]
    chunk: Sequence[int]
    position: Sequence[float]
    size: Sequence[int]
    preview: Sequence[str]

    def __post_init__(self) -> None:
        n = len(self.coords)
        lengths = {len(self.group), len(self.chunk), len(self.position), len(self.size)}
        if lengths | {len(self.preview)} != {n}:
            raise ValueError("every field of MapPoints needs one entry per point")
        if self.coords.ndim != 2 or self.coords.shape[1] not in (2, 3):
            raise ValueError(f"coords must have 2 or 3 columns; got shape {self.coords.shape}")

    @property
    def dims(self) -> int:
        return int(self.coords.shape[1])

    def members(self, g: int) -> np.ndarray:
        """Row numbers of group ``g``'s points, in the order given."""
        return np.flatnonzero(np.asarray(self.group) == g)


def _point_hover(points: MapPoints, k: int, unit: str) -> str:
    name = html.escape(points.groups[points.group[k]], quote=False)
    head = (
        f"<b>{name}</b> · chunk {points.chunk[k]} · {points.size[k]:,} {unit} · "
        f"at {points.position[k]:.0%}"
    )
    return f"{head}<br>{hover_text(points.preview[k], limit=120, width=50)}"


def _colour(points: MapPoints, rows: np.ndarray, g: int, colour_by: str) -> dict[str, Any]:
    if colour_by == "configuration":
        return {"color": PALETTE[g % len(PALETTE)]}
    values = np.asarray(points.position if colour_by == "position" else points.size, dtype=float)
    scale = 100.0 if colour_by == "position" else 1.0
    return {"color": values[rows] * scale, "coloraxis": "coloraxis"}


def embedding_map(
    points: MapPoints,
    *,
    colour_by: str = "position",
    unit: str = "chars",
    title: str = "Chunk embeddings",
    height: int = 620,
) -> go.Figure:
    """One marker per chunk: ``Scattergl`` in 2D, ``Scatter3d`` in 3D, one trace per
    configuration (trace ``g`` holds group ``g``'s points in the order given).

    ``colour_by`` is ``"position"`` (start in the document, %), ``"size"`` (in ``unit``)
    or ``"configuration"``. Each point's ``customdata`` is ``[group, chunk]``.
    """
    if colour_by not in COLOUR_MODES:
        raise ValueError(f"colour_by must be one of {', '.join(COLOUR_MODES)}; got {colour_by!r}")
    fig = go.Figure()
    three_d = points.dims == 3
    for g, name in enumerate(points.groups):
        rows = points.members(g)
        marker = {
            "size": 4 if three_d else 7,
            "opacity": 0.85,
            "symbol": SYMBOLS[g % len(SYMBOLS)] if colour_by != "configuration" else "circle",
            **_colour(points, rows, g, colour_by),
        }
        common = {
            "mode": "markers",
            "name": f"{name} ({len(rows)})",
            "meta": name,
            "marker": marker,
            "customdata": [[g, int(points.chunk[k])] for k in rows],
            "hovertext": [_point_hover(points, int(k), unit) for k in rows],
            "hovertemplate": "%{hovertext}<extra></extra>",
        }
        xyz = points.coords[rows]
        if three_d:
            fig.add_trace(go.Scatter3d(x=xyz[:, 0], y=xyz[:, 1], z=xyz[:, 2], **common))
        else:
            fig.add_trace(go.Scattergl(x=xyz[:, 0], y=xyz[:, 1], **common))
    if colour_by == "position":
        fig.update_layout(
            coloraxis={
                "colorscale": "Viridis",
                "cmin": 0,
                "cmax": 100,
                "colorbar": {"title": {"text": "position in<br>document (%)"}},
            }
        )
    elif colour_by == "size":
        fig.update_layout(
            coloraxis={"colorscale": "Plasma", "colorbar": {"title": {"text": f"size ({unit})"}}}
        )
    fig.update_layout(showlegend=True, dragmode="lasso" if not three_d else "orbit")
    if not three_d:
        fig.update_xaxes(showticklabels=False, title_text="")
        fig.update_yaxes(showticklabels=False, title_text="")
    return _layout(fig, title, height)


def selected_chunks(
    points: Sequence[Mapping[str, Any]], chunks_by_trace: Sequence[Sequence[int]]
) -> list[tuple[int, int]]:
    """``(group, chunk)`` of each selected point of an :func:`embedding_map`.

    ``points`` is ``st.plotly_chart``'s ``selection.points``; ``chunks_by_trace[g]`` the
    chunk index of each point of trace ``g``. Unknown points are ignored; the result is
    sorted and has no repeats.
    """
    found: set[tuple[int, int]] = set()
    for point in points:
        curve = point.get("curve_number")
        index = point.get("point_index", point.get("point_number"))
        if not isinstance(curve, int) or not isinstance(index, int):
            continue
        if 0 <= curve < len(chunks_by_trace) and 0 <= index < len(chunks_by_trace[curve]):
            found.add((curve, int(chunks_by_trace[curve][index])))
    return sorted(found)


def document_positions(
    spans: Sequence[tuple[str, int, int]],
    length: int,
    *,
    colours: Sequence[str] | None = None,
    title: str = "Where the selected chunks sit in the document",
) -> go.Figure:
    """One horizontal bar per ``(label, start, end)`` span on an axis ``[0, length]``."""
    labels = [label for label, _, _ in spans]
    fig = go.Figure(
        go.Bar(
            orientation="h",
            y=labels,
            base=[start for _, start, _ in spans],
            x=[max(1, end - start) for _, start, end in spans],
            marker={"color": list(colours) if colours else PALETTE[0]},
            hovertext=[
                f"{html.escape(label, quote=False)}: characters {start:,}–{end:,}"
                for label, start, end in spans
            ],
            hovertemplate="%{hovertext}<extra></extra>",
        )
    )
    fig.update_xaxes(title_text="character offset", range=[0, max(1, length)])
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_layout(showlegend=False, bargap=0.35)
    return _layout(fig, title, height=max(170, 90 + 26 * len(spans)))
