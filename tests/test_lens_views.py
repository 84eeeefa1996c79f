"""What the pages draw the retrieval lens with: the boundary view's heat and gold
underline (escaped), and the map of questions and chunks (traces, marks, selection)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from chunking import chunk
from chunking.evaluation.lens import REASONS, QuestionMarks
from chunking.viz.lens import QUESTION_TRACE, lens_figure, selected_question
from chunking.viz.render import heat_colour, render_window

HOSTILE = "<b>bold</b> Fish swim in clean water. <script>alert(1)</script> Birds sing.\n" * 3


def test_heat_and_gold_colour_the_view_and_keep_the_text_escaped() -> None:
    chunks = chunk(HOSTILE, "recursive", size=40, unit="chars")
    heat = [i % 3 for i in range(len(chunks))]
    start = HOSTILE.index("Fish swim")
    gold = [(start, start + len("Fish swim in clean water."))]
    markup = render_window(HOSTILE, chunks, heat=heat, gold=gold)
    assert "<script>" not in markup and "&lt;script&gt;" in markup
    underlined = "".join(re.findall(r'<span class="ce-gold">([^<]*)</span>', markup))
    assert underlined == "Fish swim in clean water."
    shown = [int(n) for n in re.findall(r'data-heat="(\d+)"', markup)]
    assert set(shown) == set(heat)
    assert heat_colour(0, 2) != heat_colour(2, 2) and heat_colour(1, 2) != heat_colour(2, 2)
    plain = render_window(HOSTILE, chunks)
    assert "data-heat" not in plain and "ce-gold" not in plain


def _figure(by: str, marks: QuestionMarks | None = None, selected: int | None = None):
    rng = np.random.default_rng(0)
    colours = [0, 1, 2, 0] if by == "retrieved" else [REASONS[0], "found", "no gold", REASONS[2]]
    return lens_figure(
        rng.normal(size=(4, 2)),
        rng.normal(size=(2, 2)),
        colours,
        by,
        ["<i>one</i>", "two", "three", "four"],
        ["what <b>is</b> it?", "why?"],
        [0.4, 0.9],
        marks,
        selected,
    )


def test_the_lens_map_draws_questions_first_chunks_by_count_or_reason_and_the_marks() -> None:
    by_count = _figure("retrieved")
    assert by_count.data[QUESTION_TRACE].name == "questions (2)"
    assert list(by_count.data[1].marker.color) == [0, 1, 2, 0]
    assert "<i>" not in " ".join(by_count.data[1].hovertext)
    by_reason = _figure("reason")
    names = [t.name for t in by_reason.data]
    assert f"{REASONS[0]} (1)" in names and "found (1)" in names and f"{REASONS[2]} (1)" in names
    marks = QuestionMarks(1, "d", (0, 3), (("d", 2, 1), ("d", 0, 2), ("other", 1, 3)))
    marked = _figure("retrieved", marks, 1)
    names = [t.name for t in marked.data]
    assert "gold chunks (2)" in names and "top 2" in names and "selected question" in names
    top = next(t for t in marked.data if t.name == "top 2")
    assert list(top.text) == ["1", "2"]  # the other document's chunk is not on this map
    with pytest.raises(ValueError, match="one colour"):
        lens_figure(np.zeros((2, 2)), np.zeros((1, 2)), [0], "retrieved", ["a"], ["q"], [0.1])


def test_a_clicked_question_is_found_among_selected_points() -> None:
    chunk_point = {"curve_number": 1, "point_index": 0}
    assert selected_question([chunk_point, {"curve_number": QUESTION_TRACE, "point_index": 1}]) == 1
    assert selected_question([chunk_point]) is None
