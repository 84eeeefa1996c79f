"""Switching strategy keeps the unit, the size and an overlap in that unit (where the new
strategy takes them), instead of silently bringing back the new strategy's earlier or
default size: work in tokens at 160 stays at 160 tokens."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

import chunking
from chunking.analysis.recommend import carried_over
from pages import config_controls

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "sample_docs" / "technical_guide.md").read_text(encoding="utf-8")
R = chunking.strategies()


def _defaults(name: str) -> dict:
    return {p.name: p.default for p in R[name].params}


def test_a_switch_keeps_the_unit_size_and_an_overlap_counted_in_it() -> None:
    markdown = {**_defaults("markdown"), "unit": "words", "size": 300, "overlap": 30}
    kept = carried_over(R["markdown"], markdown, R["recursive"], _defaults("recursive"))
    assert kept == {"unit": "words", "size": 300, "overlap": 30}
    # an overlap in units is not a number of sentences: the sentence strategy keeps none
    kept = carried_over(R["markdown"], markdown, R["sentence"], _defaults("sentence"))
    assert kept == {"unit": "words", "size": 300}


def test_nothing_is_kept_that_the_new_strategy_cannot_take() -> None:
    model = {**_defaults("recursive"), "unit": "model", "size": 200}
    assert carried_over(R["recursive"], model, R["fixed"], _defaults("fixed")) == {}  # no unit
    assert carried_over(R["recursive"], model, R["token"], _defaults("token")) == {}
    tiny = {**_defaults("recursive"), "unit": "tokens", "size": 20, "overlap": 10}
    kept = carried_over(R["recursive"], tiny, R["markdown"], _defaults("markdown"))
    assert kept["size"] == 20 and kept.get("overlap", 10) == 10
    started = _defaults("recursive")  # nothing worked on: the new strategy's own values
    assert carried_over(R["recursive"], started, R["fixed"], _defaults("fixed"), started) == {}


def test_the_sidebar_keeps_the_size_and_unit_when_the_strategy_changes() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at = at.switch_page("pages/explore_page.py").run()
    box = at.selectbox(key=config_controls.STRATEGY_KEY)
    box.set_value("markdown").run()
    at.selectbox(key="markdown.unit").set_value("tokens").run()
    at.number_input(key="markdown.size").set_value(120).run()
    at.selectbox(key=config_controls.STRATEGY_KEY).set_value("recursive").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="recursive.unit").value == "tokens"
    assert at.number_input(key="recursive.size").value == 120
    assert any("Kept from Markdown" in c.value for c in at.caption)
    chunks = chunking.chunk(GUIDE, "recursive", unit="tokens", size=120)
    shown = next(m.value for m in at.metric if m.label == "Chunks")
    assert int(shown.replace(",", "")) == len(chunks)
