"""The retrieval lens in the app (AppTest): typed questions with excerpts (located, near
match, not found) evaluated on the sidebar's document, the miss reasons in the Evaluate
table and per question, the questions on the map (choosing one, switching the
colouring), the text coloured by traffic with the gold span underlined, Compare's
reasons side by side, and an evaluation with no misses. The fast fake model ("hash")
stands in: the lens, not retrieval quality, is under test; the boundary a cut answer
straddles is fixed by the chunk size, whatever the model ranks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import chunking
from pages import config_controls, sidebar, state

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 180
TEXT = (
    "# Pets\n\nCats purr when they are content and warm.\n\n"
    "## Fish\n\nFish swim in clean water near the reef.\n\n"
    "## Birds\n\nBirds sing at dawn in the tall green trees of the old park.\n"
)
FISH = "Fish swim in clean water"
#: A near match of "Birds sing at dawn in the tall green trees of the old park" (49
#: characters, longer than a 40-character chunk: always cut by a boundary).
BIRDS = "Birds sing at dawn in the tall  green trees of the park"
TYPED = (
    f"Where do fish swim? | {FISH}\n"
    f"When do birds sing? | {BIRDS}\n"
    "What do dogs eat? | Dogs eat kibble from a silver bowl\n"
)


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _evaluate(size: int, top_k: int = 2, typed: str = TYPED) -> AppTest:
    """Paste TEXT, cut it with recursive ``size`` chars in the sidebar, and evaluate the
    same configuration on typed questions with the fake model."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value(TEXT).run()
    at.selectbox(key=config_controls.STRATEGY_KEY).set_value("recursive").run()
    at.selectbox(key="recursive.unit").set_value("chars").run()
    at.number_input(key="recursive.size").set_value(size).run()
    _ok(at.switch_page("pages/evaluate_page.py").run())
    at.radio(key="eval.origin").set_value("My document").run()
    at.radio(key="eval.own_from").set_value("questions typed here").run()
    at.text_area(key="eval.typed").set_value(typed)
    _ok(at.run())
    at.multiselect(key="eval.models").set_value(["hash"])
    at.multiselect(key="eval.strategies").set_value(["recursive"])
    at.multiselect(key="eval.units").set_value(["chars"])
    at.text_input(key="eval.sizes").set_value(str(size))
    at.number_input(key="eval.top_k").set_value(top_k)
    at.toggle(key="eval.langchain").set_value(False)
    next(b for b in at.button if b.label == "Run evaluation").click()
    return _ok(at.run())


def _frame(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


@pytest.mark.slow
def test_typed_questions_are_located_near_matched_or_reported_and_the_misses_explained() -> None:
    at = _evaluate(40)
    lines = _frame(at, "status")
    assert lines["status"].tolist() == ["located", "near match", "not found"]
    assert "1 located, 1 near match, 1 not found" in " ".join(c.value for c in at.caption)
    assert any("line 3: not found" in w.value and "dogs" in w.value for w in at.warning)
    results = _frame(at, "never retrieved %")
    assert {"cut by a boundary", "truncated", "out-ranked", "never retrieved %"} <= set(
        results.columns
    )
    misses = _frame(at, "why")
    assert misses["question"].tolist() == ["Where do fish swim?", "When do birds sing?"]
    birds = misses.set_index("question").loc["When do birds sing?"]
    assert birds["reason"] == "cut by a boundary" and "holds" in birds["why"]
    assert int(results["cut by a boundary"].iloc[0]) >= 1
    shared = at.session_state[state.LENS_KEY]
    assert [q.text for q in shared.questions] == ["Where do fish swim?", "When do birds sing?"]
    start = TEXT.index(FISH)
    assert (shared.questions[0].references[0].start, shared.questions[0].references[0].end) == (
        start,
        start + len(FISH),
    )
    # the per-chunk traffic: k retrieved per question, counted over every chunk
    assert sum(int(n.sum()) for n in shared.lenses[0].retrieved.values()) == 2 * 2


@pytest.mark.slow
def test_map_questions_choose_a_question_and_switch_the_colouring() -> None:
    at = _evaluate(40)
    _ok(at.switch_page("pages/map_page.py").run())
    at.radio(key="map.mode").set_value("questions").run()
    _ok(at)
    chart = next(c for c in _charts(at) if c["data"][0]["name"].startswith("questions"))
    assert chart["data"][0]["name"] == "questions (2)"
    assert chart["data"][1]["name"].startswith("chunks (")  # coloured by times retrieved
    misses = at.radio(key="map.lens_miss")
    assert "When do birds sing?" in " ".join(misses.options)
    misses.set_value(1).run()  # question 1: the birds, whose answer no chunk holds whole
    _ok(at)
    text = " ".join(m.value for m in at.markdown)
    assert "When do birds sing?" in text and "cut by a boundary" in text
    marks = _frame(at, "gold")
    assert marks["gold"].any()
    names = [t["name"] for t in _charts(at)[-1]["data"]]
    assert "selected question" in names and any(n.startswith("gold chunks") for n in names)
    at.radio(key="map.lens_colour").set_value("reason").run()
    names = [t["name"] for t in _charts(at)[-1]["data"]]
    assert any(n.startswith("cut by a boundary (") for n in names)
    assert not any(n.startswith("chunks (") for n in names)


@pytest.mark.slow
def test_explore_colours_traffic_and_underlines_the_gold_text_and_compare_sums_reasons() -> None:
    at = _evaluate(40)
    _ok(at.switch_page("pages/explore_page.py").run())
    at.radio(key="explore.lens_colour").set_value("retrieved").run()
    view = next(
        h.value for h in _ok(at).html if 'class="ce-doc"' in h.value and "data-heat" in h.value
    )
    heats = [int(n) for n in re.findall(r'data-heat="(\d+)"', view)]
    assert max(heats) >= 1 and min(heats) == 0  # some chunk was never retrieved
    assert "ce-gold" not in view
    at.selectbox(key="explore.lens_question").set_value(0).run()
    view = next(
        h.value for h in _ok(at).html if 'class="ce-doc"' in h.value and "ce-gold" in h.value
    )
    underlined = "".join(re.findall(r'<span class="ce-gold">([^<]*)</span>', view))
    assert underlined == FISH
    _ok(at.switch_page("pages/compare_page.py").run())
    lines = " ".join(m.value for m in at.markdown)
    assert "cut by a boundary — recursive" in lines


@pytest.mark.slow
def test_an_evaluation_with_no_misses() -> None:
    # one chunk holds the whole document: every question gets all of its gold text
    at = _evaluate(2000, top_k=1, typed=f"Where do fish swim? | {FISH}\n")
    assert len(chunking.chunk(TEXT, "recursive", size=2000, unit="chars")) == 1
    results = _frame(at, "never retrieved %")
    assert results["cut by a boundary"].tolist() == ["0"]
    assert results["out-ranked"].tolist() == ["0"] and results["never retrieved %"].tolist() == [
        "0.0"
    ]
    assert any("Every gold span of this question was retrieved" in s.value for s in at.success)
    _ok(at.switch_page("pages/map_page.py").run())
    at.radio(key="map.mode").set_value("questions").run()
    assert any("Every question got all of its gold text" in s.value for s in _ok(at).success)


def test_the_map_says_how_to_get_a_lens_without_an_evaluation() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _ok(at.switch_page("pages/map_page.py").run())
    at.radio(key="map.mode").set_value("questions").run()
    assert any("Evaluate" in i.value for i in _ok(at).info)
