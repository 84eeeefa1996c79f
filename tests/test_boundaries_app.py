"""The boundary editor's pages (pages/boundary_editor.py) through AppTest: the tour's
"Where would you cut?" stop, starting from the chunks or from none, the scores against
the gold on Explore and the ranking on Compare; the figure and the marked text on their
own. Clicks inside the editor itself are driven in a real browser
(tests/e2e/test_boundaries_browser.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from chunking import Config, run
from chunking.evaluation.boundaries import boundary_scores
from chunking.evaluation.gold import read_gold
from chunking.viz.boundaries import agreement_ranking, marked_text_html
from pages import boundary_editor, config_controls, tour_page
from tests.conftest import show_explore_tab

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 300
ESSAY = (ROOT / "sample_docs" / "long_essay.txt").read_text(encoding="utf-8")
GOLD = read_gold(ROOT / "sample_gold" / "long_essay.gold.json", ESSAY)
STOP = next(
    (level, k, stop)
    for level in tour_page.LEVELS
    for k, stop in enumerate(level.stops)
    if stop.boundaries is not None
)


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metrics(at: AppTest) -> dict[str, str]:
    names = ("Pk", "WindowDiff", "B", "Precision", "Recall", "F1")
    return {m.label: m.value for m in at.metric if m.label in names}


def _tour_stop() -> AppTest:
    level, k, _ = STOP
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    _ok(at.switch_page("pages/tour_page.py").run())
    _ok(at.button(key=f"tour_{level.number}_{k}").click().run())
    return _ok(at.switch_page("pages/explore_page.py").run())  # AppTest does not follow it


def test_the_tour_stop_scores_the_paragraph_chunks_against_the_sample_gold() -> None:
    level, _, stop = STOP
    assert level.title == "Where would you cut?" and stop.sample == "long_essay.txt"
    at = _tour_stop()
    chunks = run(ESSAY, Config.create(stop.strategy, **stop.params))
    expected = boundary_scores(ESSAY, GOLD.boundaries, chunks)
    metrics = _metrics(at)
    assert metrics["Recall"] == f"{expected['recall']:.3f}" == "1.000"
    assert metrics["Precision"] == f"{expected['precision']:.3f}"
    assert metrics["B"] == f"{expected['b']:.3f}"
    assert metrics["Pk"] == f"{expected['pk']:.3f}"
    caption = next(c.value for c in at.caption if "gold boundaries:" in c.value)
    assert "40 gold boundaries: 40 matched, 0 missed, 115 extra" in caption
    assert "B 0.23–0.53" in caption
    assert any("40 boundaries" in m.value for m in at.markdown)
    assert "115 more" in stop.hint or "115 more" in level.look_for


def test_a_wider_tolerance_in_sentences_changes_the_scores() -> None:
    at = _tour_stop()
    _ok(at.selectbox(key=config_controls.STRATEGY_KEY).set_value("sentence").run())
    before = _metrics(at)
    _ok(at.number_input(key=boundary_editor.TOLERANCE_KEY).set_value(1).run())
    at.radio(key=boundary_editor.TOLERANCE_UNIT_KEY).set_value("sentences")
    _ok(at.run())
    after = _metrics(at)
    chunks = run(ESSAY, Config.create("sentence"))
    expected = boundary_scores(
        ESSAY, GOLD.boundaries, chunks, tolerance=1, tolerance_unit="sentences"
    )
    assert after["F1"] == f"{expected['f1']:.3f}"
    assert float(after["F1"]) > float(before["F1"])
    assert after["Pk"] == before["Pk"]  # the window metrics take no tolerance


def test_starting_from_the_chunks_scores_them_perfect_and_from_none_empty() -> None:
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    _ok(show_explore_tab(at.switch_page("pages/explore_page.py"), "Where would you cut?"))
    assert not _metrics(at)  # no gold yet: nothing to score
    _ok(at.button(key="boundaries.from_chunks").click().run())
    metrics = _metrics(at)
    assert (metrics["Pk"], metrics["WindowDiff"], metrics["B"]) == ("0.000", "0.000", "1.000")
    assert (metrics["Precision"], metrics["Recall"], metrics["F1"]) == ("1.000", "1.000", "1.000")
    _ok(at.button(key="boundaries.from_none").click().run())
    metrics = _metrics(at)
    assert metrics["Recall"] == "1.000" and metrics["Precision"] == "0.000"
    assert any(m.value.startswith("**0 boundaries**, 1 segments") for m in at.markdown)
    # The sample gold is offered only for a sample that has one (not the technical guide).
    assert not [b for b in at.button if b.key == "boundaries.from_sample"]


def test_compare_ranks_the_configurations_by_agreement_with_the_gold() -> None:
    at = _tour_stop()
    _ok(at.switch_page("pages/compare_page.py").run())
    table = next(d for d in at.dataframe if "WindowDiff" in d.value.columns).value
    assert len(table) >= 2
    assert list(table["B"]) == sorted(table["B"], reverse=True)
    first = table.iloc[0]
    assert first["configuration"].startswith("A · Paragraph packing")
    assert first["recall"] == pytest.approx(1.0)
    _ok(at.radio(key=boundary_editor.RANK_KEY).set_value("pk").run())
    table = next(d for d in at.dataframe if "WindowDiff" in d.value.columns).value
    assert list(table["Pk"]) == sorted(table["Pk"])
    assert any("People agree with each other" in c.value for c in at.caption)


def test_compare_without_a_gold_says_where_to_draw_one() -> None:
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    _ok(at.switch_page("pages/compare_page.py").run())
    assert any("Edit boundaries" in i.value for i in at.main.info)


# ------------------------------------------------------------ figure and marked text


def test_the_ranking_puts_the_best_first_and_draws_the_band() -> None:
    fig = agreement_ranking({"a": 0.2, "b": 0.6, "c": 0.4}, "b", (0.23, 0.53))
    assert list(fig.data[0].y) == ["b", "c", "a"]
    (band,) = fig.layout.shapes
    assert (band.x0, band.x1) == (0.23, 0.53)
    lowest_first = agreement_ranking({"a": 0.2, "b": 0.6}, "pk", None)
    assert list(lowest_first.data[0].y) == ["a", "b"] and not lowest_first.layout.shapes


def test_the_marked_text_escapes_the_document_and_marks_each_kind() -> None:
    text = "<b>bold</b> & more <script>alert(1)</script> end"
    page = marked_text_html(text, [3], [12], [text.index("end")])
    assert "<script>" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&amp; more" in page
    assert page.count("bmark-matched") == 1 and page.count("bmark-missed") == 1
    assert page.count("bmark-extra") == 1
    assert "character 12" in page
    plain = marked_text_html(text, [], [], [])
    assert "bmark-" not in plain.split("</div>", 1)[1]
