"""Boundaries against a gold segmentation, drawn: the ranking chart of the Compare page
and the marked text of the Explore page. Pure functions from numbers (and the text) to a
figure or to escaped HTML."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

#: How each kind of boundary is drawn on the text: (colour, what it means).
MARK_KINDS = {
    "matched": ("#2e7d32", "matched: the chunks cut here and so does the gold"),
    "missed": ("#d62728", "missed: the gold cuts here, no chunk starts near"),
    "extra": ("#9e9e9e", "extra: a chunk starts here, the gold does not cut near"),
}
#: Metric labels for the charts; higher is better for all but Pk and WindowDiff.
METRIC_NAMES = {
    "b": "boundary similarity B",
    "f1": "boundary F1",
    "pk": "Pk",
    "windowdiff": "WindowDiff",
    "precision": "boundary precision",
    "recall": "boundary recall",
}
LOWER_IS_BETTER = ("pk", "windowdiff")


def agreement_ranking(
    values: Mapping[str, float],
    metric: str,
    band: tuple[float, float] | None = None,
) -> go.Figure:
    """One bar per configuration (best first) for ``metric`` against the gold, with the
    human-agreement ``band`` (low, high) as a shaded stripe when there is one."""
    lower = metric in LOWER_IS_BETTER
    ranked = sorted(values.items(), key=lambda item: item[1], reverse=not lower)
    names = [name for name, _ in ranked]
    fig = go.Figure(
        go.Bar(
            x=[value for _, value in ranked],
            y=names,
            orientation="h",
            marker_color="#4285f4",
            text=[f"{value:.2f}" for _, value in ranked],
            textposition="outside",
            hovertemplate="%{y}: %{x:.3f}<extra></extra>",
        )
    )
    if band is not None:
        fig.add_vrect(
            x0=band[0],
            x1=band[1],
            fillcolor="#fb8c00",
            opacity=0.18,
            line_width=0,
            annotation_text="people agree with each other",
            annotation_position="top left",
        )
    label = METRIC_NAMES.get(metric, metric)
    better = "lower is better" if lower else "higher is better"
    fig.update_xaxes(range=[0, 1.08], title=f"{label} ({better})")
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(
        title={"text": f"Agreement with the gold: {label}", "x": 0, "xanchor": "left"},
        height=120 + 40 * len(names),
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        showlegend=False,
    )
    return fig


def marked_text_html(
    text: str,
    matched: Sequence[int],
    missed: Sequence[int],
    extra: Sequence[int],
    *,
    height: int = 420,
) -> str:
    """``text`` (escaped) in a scrolling box with a mark at every boundary: green where
    the chunks and the gold agree, red where the gold cuts alone, grey where a chunk
    starts alone. Each mark's tooltip says which it is and its offset."""
    marks = sorted(
        [(b, "matched") for b in matched]
        + [(b, "missed") for b in missed]
        + [(b, "extra") for b in extra]
    )
    parts: list[str] = []
    at = 0
    for offset, kind in marks:
        offset = max(at, min(int(offset), len(text)))
        parts.append(html.escape(text[at:offset]))
        colour, meaning = MARK_KINDS[kind]
        parts.append(
            f'<span class="bmark bmark-{kind}" title="{html.escape(meaning)} '
            f'(character {offset:,})" style="display:inline-block;width:0.55em;'
            f"height:1.05em;margin:0 1px;vertical-align:-0.15em;border-radius:2px;"
            f'background:{colour}"></span>'
        )
        at = offset
    parts.append(html.escape(text[at:]))
    legend = " ".join(
        f'<span style="display:inline-block;width:0.7em;height:0.7em;background:{colour};'
        f'border-radius:2px;margin:0 0.25em 0 0.8em"></span>{html.escape(kind)}'
        for kind, (colour, _) in MARK_KINDS.items()
    )
    return (
        f'<div class="boundary-legend" style="font-size:0.85rem;margin-bottom:0.3rem">'
        f"{legend}</div>"
        f'<div class="boundary-marks" style="white-space:pre-wrap;overflow-wrap:anywhere;'
        f"max-height:{int(height)}px;overflow-y:auto;border:1px solid #e1e3e8;"
        f'border-radius:0.4rem;padding:0.6rem 0.8rem;line-height:1.55;font-size:0.92rem">'
        f"{''.join(parts)}</div>"
    )
