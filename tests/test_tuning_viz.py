"""The quality–cost chart: every trial with its interval, the front joined, the rest pale."""

from __future__ import annotations

from chunking.viz.tuning import (
    FRONT_COLOUR,
    PALE_COLOUR,
    difference_chart,
    front_chart,
    selected_label,
)


def _trial(label: str, quality: float, cost: float, on_front: bool, duplicate_of=None) -> dict:
    return {
        "label": label,
        "config": {"strategy": "recursive", "params": {"size": 200, "unit": "tokens"}},
        "technique": "dense",
        "top_k": 5,
        "quality": quality,
        "ci_low": quality - 0.1,
        "ci_high": quality + 0.05,
        "cost": cost,
        "on_front": on_front,
        "duplicate_of": duplicate_of,
    }


TRIALS = [
    _trial("cheap", 0.6, 100, True),
    _trial("best", 0.9, 400, True),
    _trial("middle", 0.8, 200, True),
    _trial("worse", 0.5, 300, False),
    _trial("twin", 0.9, 400, False, duplicate_of="best"),
]


def test_the_chart_draws_the_front_in_cost_order_and_the_rest_pale() -> None:
    fig = front_chart(TRIALS, "recall", "tokens sent", winner="best")
    traces = {t.name: t for t in fig.data}
    assert set(traces) == {"front", "dominated", "winner"}
    front = traces["front"]
    assert list(front.x) == [100, 200, 400] and front.mode == "lines+markers"
    assert front.marker.color == FRONT_COLOUR
    assert [c[0] for c in front.customdata] == ["cheap", "middle", "best"]
    assert [round(v, 3) for v in front.error_y.array] == [0.05, 0.05, 0.05]
    assert [round(v, 3) for v in front.error_y.arrayminus] == [0.1, 0.1, 0.1]
    dominated = traces["dominated"]
    assert [c[0] for c in dominated.customdata] == ["worse"]  # the duplicate is left out
    assert dominated.marker.color == PALE_COLOUR and dominated.mode == "markers"
    assert "size=200" in dominated.customdata[0][1]
    assert "%{customdata[0]}" in front.hovertemplate
    assert fig.layout.xaxis.title.text == "tokens sent"
    assert fig.layout.yaxis.title.text == "recall"


def test_a_selected_point_names_its_trial() -> None:
    fig = front_chart(TRIALS)
    point = {"customdata": list(fig.data[1].customdata[1])}
    assert selected_label([point]) == "middle"
    assert selected_label([]) is None and selected_label([{"x": 1}]) is None


def test_the_difference_chart_sorts_the_differences() -> None:
    fig = difference_chart([0.5, -1.0, 0.0, 1.0], "winner minus runner-up")
    assert list(fig.data[0].y) == [-1.0, 0.0, 0.5, 1.0]
    assert fig.layout.title.text == "winner minus runner-up"
