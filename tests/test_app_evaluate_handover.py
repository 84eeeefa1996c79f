"""From an Evaluate results row to the text (issue 38, point 2): the sidebar's
configuration is among those evaluated by default, so that Explore shows its traffic;
a selected row opens in Explore or goes to Compare with its document. The fast fake
model ("hash") stands in: these tests are about the pages, not retrieval quality."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Dataframe

from pages import config_controls, explore_page, sidebar

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 180
TEXT = "# Pets\n\nCats purr when content.\n\n## Fish\n\nFish swim in clean water.\n" * 4
PHRASE = "Fish swim in clean water."
NOT_CUT = "did not cut this document at these boundaries"


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _results(at: AppTest) -> Dataframe:
    return next(d for d in at.dataframe if d.key and d.key.endswith("eval.results"))


def _select_row(at: AppTest, row: int, key: str = "eval.results") -> AppTest:
    """Select a row of the table under ``key`` as the browser does (AppTest has no API)."""
    table = next(d for d in at.dataframe if d.key and d.key.endswith(key))
    states = WidgetStates()
    states.CopyFrom(at._tree.get_widget_states())
    state = states.widgets.add()
    state.id = table.proto.id
    state.string_value = json.dumps({"selection": {"rows": [row], "columns": [], "cells": []}})
    at._run(states)
    return _ok(at)


def _own_document_evaluated() -> AppTest:
    """The pasted document with recursive · 120 chars in the sidebar, evaluated on a
    question file with a grid of token · 40 tokens (the token strategy counts tokens
    only), which the sidebar's configuration is not in."""
    start = TEXT.index(PHRASE)
    row = {
        "question": "Where do fish swim?",
        "references": [{"content": PHRASE, "start_index": start, "end_index": start + 25}],
    }
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value(TEXT).run()
    _ok(at.switch_page("pages/explore_page.py").run())
    at.selectbox(key=config_controls.STRATEGY_KEY).set_value("recursive").run()
    at.selectbox(key="recursive.unit").set_value("chars").run()
    at.number_input(key="recursive.size").set_value(120).run()
    _ok(at.switch_page("pages/evaluate_page.py").run())
    at.radio(key="eval.origin").set_value("My document").run()
    at.radio(key="eval.own_from").set_value("a question file").run()
    upload = json.dumps(row).encode()
    at.file_uploader(key="eval_upload.questions").set_value(("q.jsonl", upload, "text/plain"))
    _ok(at.run())
    at.multiselect(key="eval.models").set_value(["hash"])
    at.multiselect(key="eval.strategies").set_value(["token"])
    at.multiselect(key="eval.units").set_value(["chars"])
    at.text_input(key="eval.sizes").set_value("40")
    next(b for b in at.button if b.label == "Run evaluation").click()
    return _ok(at.run())


@pytest.mark.slow
def test_the_sidebars_configuration_is_evaluated_and_explore_shows_its_traffic() -> None:
    at = _own_document_evaluated()
    results = _results(at).value
    assert results["Strategy"].tolist() == ["token", "recursive"]
    assert results["Size"].tolist() == [40, 120]
    _ok(at.switch_page("pages/explore_page.py").run())
    assert not any(NOT_CUT in i.value for i in at.info)
    assert at.radio(key=explore_page.LENS_COLOUR_KEY) is not None


@pytest.mark.slow
def test_leaving_the_sidebars_configuration_out_evaluates_the_grid_only() -> None:
    at = _own_document_evaluated()
    at.toggle(key="eval.include_sidebar").set_value(False)
    next(b for b in at.button if b.label == "Run evaluation").click()
    _ok(at.run())
    assert _results(at).value["Strategy"].tolist() == ["token"]
    _ok(at.switch_page("pages/explore_page.py").run())
    assert any(NOT_CUT in i.value for i in at.info)


@pytest.mark.slow
def test_a_selected_row_opens_in_explore_with_its_configuration() -> None:
    at = _own_document_evaluated()
    explore = next(b for b in at.button if b.label == "Open in Explore")
    assert explore.disabled  # nothing selected yet
    _select_row(at, 0)
    assert any("Selected: token · 40 tokens" in c.value for c in at.caption)
    next(b for b in at.button if b.label == "Open in Explore").click().run()
    _ok(at)
    assert at.title[0].value == "Explore"
    assert at.session_state[config_controls.STRATEGY_KEY] == "token"
    assert at.session_state["token.size"] == 40
    assert at.session_state["token.unit"] == "tokens"
    # the document stays the pasted one, and the lens colours these very chunks
    assert at.session_state[sidebar.SOURCE_KEY] == "Paste"
    assert not any(NOT_CUT in i.value for i in at.info)


@pytest.mark.slow
def test_a_bundled_row_goes_to_compare_with_its_document() -> None:
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    _ok(at.switch_page("pages/evaluate_page.py").run())
    at.multiselect(key="eval.models").set_value(["hash"])
    at.multiselect(key="eval.corpora").set_value(["chatlogs"])
    at.multiselect(key="eval.strategies").set_value(["token"])
    at.text_input(key="eval.sizes").set_value("200, 400")
    next(b for b in at.button if b.label == "Run evaluation").click()
    _ok(at.run())
    results = _results(at).value
    assert results["Strategy"].tolist()[:2] == ["token", "token"]
    assert len(results) == 3  # 2 sizes and the sidebar's configuration
    _select_row(at, 1)
    next(b for b in at.button if b.label == "Add to Compare").click().run()
    _ok(at)
    assert at.title[0].value == "Compare"
    assert at.session_state["cmp.B.strategy"] == "token"
    assert at.session_state["cmp.B.token.size"] == 400
    assert at.session_state[sidebar.SOURCE_KEY] == "Upload"
    captions = " ".join(c.value for c in at.caption)
    assert "chatlogs" in captions


def test_a_compare_configuration_opens_in_explore() -> None:
    at = _ok(AppTest.from_file(APP, default_timeout=TIMEOUT).run())
    _ok(at.switch_page("pages/compare_page.py").run())
    stats = next(d for d in at.dataframe if d.key and d.key.endswith("cmp_stats"))
    b_strategy = at.session_state["cmp.B.strategy"]
    assert stats.value["Config"].tolist() == ["A", "B"]
    _select_row(at, 1, "cmp_stats")
    assert not any(b.label == "Add to Compare" for b in at.button)
    next(b for b in at.button if b.label == "Open in Explore").click().run()
    _ok(at)
    assert at.title[0].value == "Explore"
    assert at.session_state[config_controls.STRATEGY_KEY] == b_strategy != "recursive"
