"""The retrieval lens on the map: questions drawn with the chunks they search.

:func:`lens_figure` draws one document's chunks and its questions on one projection
(the questions placed on the chunks' map, never refitted, see
:func:`chunking.evaluation.lens.lens_map`). Chunks are coloured by
:func:`chunking.evaluation.lens.chunk_colours`: how many questions retrieved each (a
heat scale; never-retrieved chunks stay pale) or the miss reason they stand in.
Questions are diamonds shaded by their nearest chunk's similarity, so a cluster of
questions far from every chunk shows. A selected question is joined to its gold chunks
(green) and its top k (orange, labelled with the rank).

Trace 0 holds the questions (``customdata`` is the question's row); the chunks come
after it. Text only reaches the figure through :func:`~chunking.viz.semantic.hover_text`,
which escapes it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..evaluation.lens import CUT, FOUND, NO_GOLD, OUT_RANKED, TRUNCATED, QuestionMarks
from .semantic import hover_text

#: The colour of each value of ``chunk_colours(..., "reason")``.
REASON_COLOURS: Mapping[str, str] = {
    CUT: "#d81b60",
    TRUNCATED: "#fb8c00",
    OUT_RANKED: "#8e24aa",
    FOUND: "#43a047",
    NO_GOLD: "#bdbdbd",
}
GOLD_COLOUR = "#2e7d32"
RETRIEVED_COLOUR = "#ef6c00"
QUESTION_TRACE = 0


def _scatter(coords: np.ndarray, **kwargs: Any) -> go.Scattergl | go.Scatter3d:
    if coords.shape[1] == 3:
        return go.Scatter3d(x=coords[:, 0], y=coords[:, 1], z=coords[:, 2], **kwargs)
    return go.Scattergl(x=coords[:, 0], y=coords[:, 1], **kwargs)


def _lines(
    start: np.ndarray, ends: np.ndarray, colour: str, name: str, dash: str
) -> go.Scattergl | go.Scatter3d:
    """Segments from ``start`` to each row of ``ends`` (one trace, broken by gaps)."""
    rows: list[list[float]] = []
    for end in ends:
        rows += [list(start), list(end), [np.nan] * len(start)]
    xyz = np.array(rows, dtype=float).reshape(-1, len(start))
    style: dict[str, Any] = {"color": colour, "width": 2}
    if xyz.shape[1] == 2:
        style["dash"] = dash
    return _scatter(xyz, mode="lines", line=style, name=name, hoverinfo="skip")


def lens_figure(
    chunk_coords: np.ndarray,
    question_coords: np.ndarray,
    colours: Sequence[Any],
    by: str,
    previews: Sequence[str],
    questions: Sequence[str],
    nearest: Sequence[float],
    marks: QuestionMarks | None = None,
    selected: int | None = None,
    *,
    title: str = "Questions and chunks",
    height: int = 620,
) -> go.Figure:
    """The map of chunks and questions; ``marks`` (with ``selected``, the question's row
    in ``question_coords``) joins one question to its gold and retrieved chunks.

    ``colours`` and ``by`` come from :func:`chunking.evaluation.lens.chunk_colours`;
    ``previews`` are the chunks' first words, ``questions`` the questions' texts,
    ``nearest`` each question's highest similarity to a chunk.
    """
    chunk_coords, question_coords = np.asarray(chunk_coords), np.asarray(question_coords)
    n = len(chunk_coords)
    if not (len(colours) == len(previews) == n) or len(questions) != len(question_coords):
        raise ValueError("one colour and preview per chunk, one text per question")
    if by not in ("retrieved", "reason"):
        raise ValueError(f"colour chunks by 'retrieved' or 'reason'; got {by!r}")
    three_d = chunk_coords.shape[1] == 3
    size = 4 if three_d else 8
    fig = go.Figure()
    fig.add_trace(
        _scatter(
            question_coords,
            mode="markers",
            name=f"questions ({len(question_coords)})",
            marker={
                "symbol": "diamond",
                "size": size + 3,
                "color": np.asarray(nearest, dtype=float),
                "coloraxis": "coloraxis2",
                "line": {"color": "#212121", "width": 1},
            },
            customdata=list(range(len(question_coords))),
            hovertext=[
                f"<b>question {j}</b> · nearest chunk similarity {s:.2f}<br>"
                f"{hover_text(q, limit=120, width=50)}"
                for j, (q, s) in enumerate(zip(questions, nearest, strict=True))
            ],
            hovertemplate="%{hovertext}<extra></extra>",
        )
    )

    def chunk_hover(i: int) -> str:
        value = colours[i]
        what = f"retrieved by {value}" if by == "retrieved" else html.escape(str(value))
        return f"<b>chunk {i}</b> · {what}<br>{hover_text(previews[i], limit=120, width=50)}"

    if by == "retrieved":
        counts = np.asarray(colours, dtype=float)
        fig.add_trace(
            _scatter(
                chunk_coords,
                mode="markers",
                name=f"chunks ({n})",
                marker={"size": size, "color": counts, "coloraxis": "coloraxis"},
                customdata=list(range(n)),
                hovertext=[chunk_hover(i) for i in range(n)],
                hovertemplate="%{hovertext}<extra></extra>",
            )
        )
        top = max(1.0, float(counts.max()) if n else 1.0)
        fig.update_layout(
            coloraxis={
                "colorscale": [[0, "#eeeeee"], [1e-9, "#ffe082"], [1, "#b71c1c"]],
                "cmin": 0,
                "cmax": top,
                "colorbar": {
                    # counts: ticks at whole numbers only (0, 1, 2... or every few)
                    "tick0": 0,
                    "dtick": max(1, math.ceil(top / 5)),
                    "tickformat": "d",
                    "title": {"text": "times<br>retrieved"},
                    "x": 1.02,
                    "len": 0.45,
                    "y": 1,
                    "yanchor": "top",
                },
            }
        )
    else:
        for reason, colour in REASON_COLOURS.items():
            rows = [i for i in range(n) if colours[i] == reason]
            if not rows:
                continue
            fig.add_trace(
                _scatter(
                    chunk_coords[rows],
                    mode="markers",
                    name=f"{reason} ({len(rows)})",
                    marker={"size": size, "color": colour},
                    customdata=rows,
                    hovertext=[chunk_hover(i) for i in rows],
                    hovertemplate="%{hovertext}<extra></extra>",
                )
            )
    fig.update_layout(
        coloraxis2={
            "colorscale": "Blues",
            "colorbar": {
                "title": {"text": "question's<br>nearest<br>chunk"},
                "x": 1.02,
                "len": 0.45,
                "y": 0,
                "yanchor": "bottom",
            },
        }
    )
    if marks is not None and selected is not None:
        _mark(fig, chunk_coords, question_coords[selected], marks, size)
    fig.update_layout(showlegend=True, dragmode="zoom" if not three_d else "orbit")
    fig.update_layout(
        title={"text": html.escape(title, quote=False), "x": 0, "xanchor": "left"},
        height=height,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "yanchor": "top", "y": -0.02, "x": 0, "xanchor": "left"},
        hoverlabel={"align": "left"},
    )
    if not three_d:
        fig.update_xaxes(showticklabels=False, title_text="")
        fig.update_yaxes(showticklabels=False, title_text="")
    return fig


def _mark(
    fig: go.Figure, chunks: np.ndarray, question: np.ndarray, marks: QuestionMarks, size: int
) -> None:
    """Join the question to its gold chunks and its retrieved ones (same document)."""
    gold = [i for i in marks.gold_chunks if i < len(chunks)]
    ranked = [(i, r) for cid, i, r in marks.retrieved if cid == marks.corpus_id and i < len(chunks)]
    if gold:
        fig.add_trace(_lines(question, chunks[gold], GOLD_COLOUR, "to its gold chunks", "solid"))
        fig.add_trace(
            _scatter(
                chunks[gold],
                mode="markers",
                name=f"gold chunks ({len(gold)})",
                marker={
                    "size": size + 8,
                    "color": "rgba(0,0,0,0)",
                    "line": {"color": GOLD_COLOUR, "width": 3},
                },
                hoverinfo="skip",
            )
        )
    if ranked:
        rows = [i for i, _ in ranked]
        fig.add_trace(_lines(question, chunks[rows], RETRIEVED_COLOUR, "to its top k", "dot"))
        fig.add_trace(
            _scatter(
                chunks[rows],
                mode="markers+text",
                name=f"top {len(rows)}",
                text=[str(r) for _, r in ranked],
                textposition="top center",
                marker={"size": size + 4, "symbol": "circle-open", "color": RETRIEVED_COLOUR},
                hoverinfo="skip",
            )
        )
    fig.add_trace(
        _scatter(
            question[None, :],
            mode="markers",
            name="selected question",
            marker={"size": size + 10, "symbol": "diamond-open", "color": "#000000"},
            hoverinfo="skip",
        )
    )


def selected_question(points: Sequence[Mapping[str, Any]]) -> int | None:
    """The question row of the first selected question point of a :func:`lens_figure`
    (``st.plotly_chart``'s ``selection.points``), or None."""
    for point in points:
        index = point.get("point_index", point.get("point_number"))
        if point.get("curve_number") == QUESTION_TRACE and isinstance(index, int):
            return index
    return None
