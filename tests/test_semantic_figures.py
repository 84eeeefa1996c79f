"""The Semantic and Map pages' figures, on their own: traces, lines, markers, colours."""

from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go
import pytest

import chunking.splitters.semantic.analysis as sem
from chunking.viz.semantic import (
    COLOUR_MODES,
    MARKER_LIMIT,
    MERGED,
    METHOD_COLOURS,
    REASON_COLOURS,
    MapPoints,
    distance_curve,
    distance_histogram,
    document_positions,
    embedding_map,
    hover_text,
    selected_chunks,
)

TEXT = (
    "Cats purr when they are content. Cats sleep for most of the day. A kitten plays "
    "with string. Stocks fell sharply on Monday. Markets slid as investors worried. "
    "Bond yields rose again. The striker scored twice. The crowd sang all night. "
    "The coach praised the defence. Rain is expected tomorrow. Winds will be strong."
)


@pytest.fixture(scope="module")
def analysis() -> sem.SemanticAnalysis:
    return sem.analyze(TEXT, embedder="hash", buffer_size=0)


def _markers(fig: go.Figure) -> dict[str, go.Scatter]:
    return {t.meta: t for t in fig.data if t.meta != "curve"}


def _curve(fig: go.Figure) -> go.Scatter:
    [curve] = [t for t in fig.data if t.meta == "curve"]
    return curve


def _shape_x(fig: go.Figure) -> dict[str, float]:
    return {s.name: s.x0 for s in fig.layout.shapes}


# ---------------------------------------------------------------------- hover text


def test_hover_text_escapes_markup_and_shortens() -> None:
    text = "<script>alert(1)</script> & <b>bold</b> " + "word " * 100
    out = hover_text(text, limit=80, width=30)
    assert "<script>" not in out and "<b>bold" not in out
    assert "&lt;script&gt;" in out and "&amp;" in out
    plain = html.unescape(out.replace("<br>", " "))
    assert plain.endswith("…")
    assert len(plain) <= 80
    assert out.count("<br>") >= 2  # wrapped onto lines


# ---------------------------------------------------------------------- distance curve


def test_curve_draws_every_distance_and_the_threshold(analysis: sem.SemanticAnalysis) -> None:
    result = analysis.chunk(method="percentile", threshold=60, unit="chars", max_size=10**6)
    fig = distance_curve(result.scores, threshold=result.threshold, breakpoints=result.breakpoints)
    curve = _curve(fig)
    assert fig.data[-1] is curve
    assert fig.layout.hovermode == "x"  # a breakpoint's label shows beside the curve's
    assert list(curve.y) == pytest.approx(list(analysis.distances))
    assert len(curve.x) == len(analysis.sentences) - 1
    [line] = fig.layout.shapes
    assert line.name == "threshold"
    assert line.y0 == line.y1 == pytest.approx(result.threshold)


def test_curve_marks_each_breakpoint_on_the_curve_in_its_reasons_colour(
    analysis: sem.SemanticAnalysis,
) -> None:
    result = analysis.chunk(method="percentile", threshold=50, unit="chars", max_size=10**6)
    fig = distance_curve(result.scores, threshold=result.threshold, breakpoints=result.breakpoints)
    markers = _markers(fig)
    assert set(markers) == {"similarity"}
    similarity = markers["similarity"]
    assert len(similarity.x) == len(result.breakpoints) == len(result.chunks) - 1
    assert similarity.marker.color == REASON_COLOURS["similarity"]
    for x, y in zip(similarity.x, similarity.y, strict=True):
        assert y == pytest.approx(analysis.distances[x])
        assert y > result.threshold  # every similarity cut is above the cutoff


def test_curve_separates_max_size_splits_and_min_size_merges(
    analysis: sem.SemanticAnalysis,
) -> None:
    capped = analysis.chunk(method="percentile", threshold=99, unit="chars", max_size=120)
    merged = analysis.chunk(method="percentile", threshold=10, unit="chars", min_size=80)
    assert any(r == "max-size split" for _, _, r in capped.breakpoints)
    assert merged.merged
    fig = distance_curve(capped.scores, threshold=capped.threshold, breakpoints=capped.breakpoints)
    splits = [b for b in capped.breakpoints if b[2] == "max-size split"]
    marker = _markers(fig)["max-size split"]
    assert len(marker.x) == len(splits)
    assert marker.marker.color == REASON_COLOURS["max-size split"]

    fig = distance_curve(
        merged.scores,
        threshold=merged.threshold,
        breakpoints=merged.breakpoints,
        merged=merged.merged,
    )
    removed = _markers(fig)[MERGED]
    assert sorted(removed.x) == sorted(i for i, _, _ in merged.merged)
    assert removed.marker.color == REASON_COLOURS[MERGED]


def test_the_curve_labels_a_breakpoint_with_both_sentences_escaped() -> None:
    pairs = {1: ("First <b>one</b>.", "Second & <img src=x>.")}
    fig = distance_curve(
        [0.1, 0.6, 0.2],
        threshold=0.5,
        breakpoints=[(1, 0.6, "similarity")],
        pairs=pairs,
    )
    notes = list(_curve(fig).hovertext)
    assert notes[0] == notes[2] == ""  # no breakpoint after sentences 0 and 2
    assert "similarity cut" in notes[1]
    assert "First &lt;b&gt;one&lt;/b&gt;." in notes[1]
    assert "Second &amp; &lt;img src=x&gt;." in notes[1]
    assert "<img" not in notes[1]
    assert _markers(fig)["similarity"].hoverinfo == "skip"  # each label is sent once


def test_a_gradient_curve_labels_both_the_distance_and_the_gradient() -> None:
    fig = distance_curve(
        [0.0, 0.3, -0.1],
        threshold=0.2,
        breakpoints=[(1, 0.45, "similarity")],
        series="gradient of the distance",
    )
    marker = _markers(fig)["similarity"]
    assert list(marker.y) == [pytest.approx(0.3)]  # on the gradient curve
    curve = _curve(fig)
    assert "distance 0.450" in curve.hovertext[1]
    assert "gradient of the distance %{y:.3f}" in curve.hovertemplate


def test_many_breakpoints_are_drawn_as_stems() -> None:
    n = MARKER_LIMIT + 50
    scores = np.linspace(0.1, 0.9, 2 * n)
    cuts = [(i, float(scores[i]), "similarity") for i in range(0, 2 * n, 2)]
    pairs = {i: (f"before {i}", f"after {i}") for i, _, _ in cuts}
    fig = distance_curve(scores, threshold=0.05, breakpoints=cuts, pairs=pairs)
    stems = _markers(fig)["similarity"]
    assert stems.mode == "lines"
    assert stems.line.color == REASON_COLOURS["similarity"]
    tops = [(x, y) for k, (x, y) in enumerate(zip(stems.x, stems.y, strict=True)) if k % 3 == 1]
    assert [x for x, _ in tops] == [i for i, _, _ in cuts]  # one stem per breakpoint
    assert [y for _, y in tops] == pytest.approx([d for _, d, _ in cuts])
    floor = min(scores)
    assert list(stems.y[0::3]) == list(stems.y[2::3]) == [floor] * len(cuts)  # a comb
    notes = _curve(fig).hovertext
    assert "before 4" in notes[4] and "after 4" in notes[4]
    assert notes[5] == ""


def test_structural_splits_sit_at_the_bottom_of_the_curve() -> None:
    fig = distance_curve([0.3, 0.1, 0.4], threshold=0.35, breakpoints=[(1, math.nan, "structural")])
    marker = _markers(fig)["structural"]
    assert list(marker.x) == [1]
    assert list(marker.y) == [pytest.approx(0.1)]


def test_curve_without_a_finite_cutoff_has_no_line() -> None:
    fig = distance_curve([0.1, 0.2], threshold=math.inf, breakpoints=[])
    assert len(fig.layout.shapes) == 0


@pytest.mark.parametrize(
    ("points", "webgl", "kind"),
    [
        (50, None, "scatter"),
        (5_000, None, "scatter"),
        (30_000, None, "scattergl"),
        (50, True, "scattergl"),
    ],
)
def test_only_very_long_curves_use_webgl(points: int, webgl: bool | None, kind: str) -> None:
    fig = distance_curve(np.linspace(0, 1, points), threshold=0.5, breakpoints=[], webgl=webgl)
    assert _curve(fig).type == kind


# ---------------------------------------------------------------------- histogram


def test_histogram_draws_each_methods_cutoff_where_the_core_puts_it(
    analysis: sem.SemanticAnalysis,
) -> None:
    result = analysis.chunk(method="std", threshold=1.0, unit="chars", max_size=10**6)
    cutoffs = {m: v for m, v in result.thresholds.items() if m != "gradient"}
    fig = distance_histogram(analysis.distances, cutoffs=cutoffs, current=result.threshold)
    assert fig.data[0].type == "histogram"
    assert list(fig.data[0].x) == pytest.approx(list(analysis.distances))
    lines = _shape_x(fig)
    finite = {m for m, v in cutoffs.items() if math.isfinite(v)}
    assert set(lines) == finite | {"current"}
    d = analysis.distances
    assert lines["percentile"] == pytest.approx(np.percentile(d, 95))
    assert lines["similarity"] == pytest.approx(1 - 0.8)
    assert lines["std"] == pytest.approx(np.mean(d) + 3 * np.std(d))
    q1, q3 = np.percentile(d, [25, 75])
    assert lines["iqr"] == pytest.approx(np.mean(d) + 1.5 * (q3 - q1))
    assert lines["current"] == pytest.approx(np.mean(d) + 1.0 * np.std(d))
    colours = {s.name: s.line.color for s in fig.layout.shapes}
    assert colours["std"] == METHOD_COLOURS["std"]


def test_histogram_leaves_out_infinite_cutoffs() -> None:
    fig = distance_histogram(
        [0.1, 0.2], cutoffs={"count": -math.inf, "percentile": 0.19}, current=math.inf
    )
    assert set(_shape_x(fig)) == {"percentile"}


# ---------------------------------------------------------------------- embedding map


def _points(dims: int = 2, groups: tuple[str, ...] = ("A", "B")) -> MapPoints:
    rng = np.random.default_rng(0)
    group = [0, 0, 1, 0, 1, 1, 1]
    return MapPoints(
        coords=rng.normal(size=(len(group), dims)),
        groups=list(groups),
        group=group,
        chunk=[0, 1, 0, 2, 1, 2, 3],
        position=[0.0, 0.3, 0.0, 0.6, 0.2, 0.5, 0.9],
        size=[100, 120, 80, 90, 300, 40, 55],
        preview=["alpha <b>", "beta", "gamma", "delta", "epsilon", "zeta", "eta"],
    )


@pytest.mark.parametrize(("dims", "kind"), [(2, "scattergl"), (3, "scatter3d")])
def test_map_has_one_point_per_chunk_in_one_trace_per_configuration(dims: int, kind: str) -> None:
    points = _points(dims)
    fig = embedding_map(points)
    assert [t.type for t in fig.data] == [kind, kind]
    assert sum(len(t.x) for t in fig.data) == len(points.coords)
    assert [len(t.x) for t in fig.data] == [3, 4]
    assert [c[1] for c in fig.data[1].customdata] == [0, 1, 2, 3]
    rows = points.members(1)
    assert list(fig.data[1].x) == pytest.approx(list(points.coords[rows, 0]))
    if dims == 3:
        assert list(fig.data[1].z) == pytest.approx(list(points.coords[rows, 2]))


def test_map_colour_modes() -> None:
    points = _points()
    by_position = embedding_map(points, colour_by="position")
    assert list(by_position.data[0].marker.color) == pytest.approx([0, 30, 60])
    assert by_position.layout.coloraxis.cmax == 100
    by_size = embedding_map(points, colour_by="size")
    assert list(by_size.data[1].marker.color) == [80, 300, 40, 55]
    by_config = embedding_map(points, colour_by="configuration")
    colours = [t.marker.color for t in by_config.data]
    assert all(isinstance(c, str) for c in colours) and len(set(colours)) == 2
    with pytest.raises(ValueError, match="colour_by"):
        embedding_map(points, colour_by="rainbow")
    assert set(COLOUR_MODES) == {"position", "size", "configuration"}


def test_map_hover_shows_first_words_escaped() -> None:
    fig = embedding_map(_points())
    first = fig.data[0].hovertext[0]
    assert "alpha &lt;b&gt;" in first and "chunk 0" in first


def test_map_points_must_line_up() -> None:
    with pytest.raises(ValueError, match="one entry per point"):
        MapPoints(np.zeros((2, 2)), ["A"], [0], [0, 1], [0, 0], [1, 1], ["a", "b"])


def test_selected_points_map_back_to_chunks() -> None:
    by_trace = [[0, 1, 2], [0, 1, 2, 3]]
    points = [
        {"curve_number": 1, "point_index": 3},
        {"curve_number": 0, "point_number": 1},
        {"curve_number": 1, "point_index": 3},  # a repeat
        {"curve_number": 5, "point_index": 0},  # no such trace
        {"x": 1.0},
    ]
    assert selected_chunks(points, by_trace) == [(0, 1), (1, 3)]


def test_document_positions_draws_one_bar_per_span() -> None:
    fig = document_positions([("A · chunk 1", 10, 50), ("B · chunk 4", 30, 90)], 100)
    [bars] = fig.data
    assert list(bars.base) == [10, 30]
    assert list(bars.x) == [40, 60]
    assert tuple(fig.layout.xaxis.range) == (0, 100)
