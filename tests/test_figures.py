"""Tests for chunking.viz.figures: every figure is a pure function of plain numbers."""

from __future__ import annotations

import subprocess
import sys

import plotly.graph_objects as go
import pytest

import chunking
from chunking.analysis.report import agreement_matrix, boundaries
from chunking.viz.figures import (
    agreement_heatmap,
    boundary_strip,
    histogram_panels,
    size_histogram,
)


def _vlines(fig: go.Figure) -> list[float]:
    return [s.x0 for s in fig.layout.shapes if s.type == "line" and s.x0 == s.x1]


def test_size_histogram_draws_every_size_and_the_limit() -> None:
    sizes = [120, 480, 500, 510, 33]
    fig = size_histogram(sizes, limit=500, unit="tokens")
    assert isinstance(fig, go.Figure)
    assert len(fig.data) == 1 and fig.data[0].type == "histogram"
    assert list(fig.data[0].x) == sizes
    bins = fig.data[0].xbins
    assert bins.start == 0 and bins.end > 510 and bins.size >= 1
    low, high = fig.layout.xaxis.range
    assert low == 0 and high >= bins.end  # the axis starts at zero and shows every bin
    assert _vlines(fig) == [500]
    assert "tokens" in fig.layout.xaxis.title.text
    assert any("limit 500" in (a.text or "") for a in fig.layout.annotations)


def test_size_histogram_without_a_limit_draws_no_line() -> None:
    fig = size_histogram([1, 2, 3])
    assert _vlines(fig) == []
    assert list(fig.data[0].x) == [1, 2, 3]


def test_size_histogram_of_real_chunks() -> None:
    text = "A sentence of some length. " * 60
    chunks = chunking.chunk(text, "recursive", size=200)
    fig = size_histogram([c.size for c in chunks], limit=200)
    assert len(fig.data[0].x) == len(chunks)
    assert max(fig.data[0].x) <= _vlines(fig)[0]


def test_histogram_panels_give_each_configuration_its_own_unit_and_limit() -> None:
    series = {"A": [100, 200, 300], "B": [50, 60], "C": [400]}
    units = {"A": "chars", "B": "tokens", "C": "model"}
    fig = histogram_panels(series, units=units, limits={"A": 300, "B": None, "C": 254})
    assert [t.name for t in fig.data] == ["A", "B", "C"]
    assert [list(t.x) for t in fig.data] == list(series.values())
    axes = [t.xaxis for t in fig.data]
    assert len(set(axes)) == 3  # one panel each
    titles = [fig.layout[f"xaxis{'' if i == 0 else i + 1}"].title.text for i in range(3)]
    assert titles == ["size (chars)", "size (tokens)", "size (model)"]
    lines = [s for s in fig.layout.shapes if s.type == "line" and s.x0 == s.x1]
    assert sorted((s.x0, s.xref) for s in lines) == [(254, "x3"), (300, "x")]
    assert [a.text for a in fig.layout.annotations][:3] == ["A", "B", "C"]  # panel titles
    assert fig.data[1].xbins.end < 100  # B's bins fit B's own sizes


def test_boundary_strip_has_one_lane_per_configuration() -> None:
    text = "Some words to cut. " * 80
    lanes = {
        "A · fixed": boundaries(chunking.chunk(text, "fixed", size=100, overlap=0)),
        "B · recursive": boundaries(chunking.chunk(text, "recursive", size=250)),
    }
    fig = boundary_strip(lanes, len(text))
    assert [t.name for t in fig.data] == list(lanes)
    for trace, (name, offsets) in zip(fig.data, lanes.items(), strict=True):
        assert list(trace.x) == offsets
        assert set(trace.y) == {name}
        assert trace.mode == "markers"
    assert list(fig.layout.xaxis.range) == [0, len(text)]
    assert list(fig.layout.yaxis.categoryarray) == list(reversed(list(lanes)))


def test_boundary_strip_of_configurations_without_cuts() -> None:
    fig = boundary_strip({"A": [], "B": []}, 0)
    assert len(fig.data) == 2 and all(len(t.x) == 0 for t in fig.data)
    assert list(fig.layout.xaxis.range) == [0, 1]


def test_agreement_heatmap_shows_the_matrix_as_percentages() -> None:
    matrix = agreement_matrix([[10, 20], [10, 90], [500]], 5)
    fig = agreement_heatmap(["A", "B", "C"], matrix, k=5)
    heat = fig.data[0]
    assert heat.type == "heatmap"
    assert [list(row) for row in heat.z] == matrix
    assert (heat.zmin, heat.zmax) == (0, 1)
    assert heat.text[0][1] == f"{matrix[0][1]:.0%}"
    assert "5 characters" in fig.layout.title.text


@pytest.mark.parametrize("module", ["chunking", "chunking.analysis.report", "chunking.viz.render"])
def test_core_modules_do_not_import_plotly_or_streamlit(module: str) -> None:
    code = (
        f"import sys, {module}; "
        "bad = [m for m in ('plotly', 'streamlit', 'torch') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
