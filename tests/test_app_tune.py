"""The Tune page: a small grid search on one chroma-eval corpus, its verdict and chart,
and a trial taken to the sidebar and to Explore."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from chunking.tuning.objectives import COST_LABELS, COSTS
from pages import tune_page
from pages.config_controls import STRATEGY_KEY

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 240


def _tune_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/tune_page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.multiselect(key="eval.corpora").set_value(["chatlogs"]).run()
    at.number_input(key="tune.size_low").set_value(200).run()
    at.number_input(key="tune.size_high").set_value(400).run()
    at.number_input(key="tune.size_step").set_value(200).run()
    at.text_input(key="tune.overlaps").set_value("0").run()
    at.selectbox(key="tune.sampler").set_value("grid").run()
    at.selectbox(key="tune.model").set_value("minilm-static").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_dry_run_counts_before_anything_runs() -> None:
    at = _tune_page()
    dry = [i.value for i in at.info if "Dry run" in i.value]
    assert dry and "4 on paper, 4 to run" in dry[0], dry
    shown = next(s.options for s in at.selectbox if s.key == "tune.cost")
    assert shown == [COST_LABELS[c] for c in COSTS]
    at.text_input(key="tune.overlaps").set_value("0, 300").run()
    dry = [i.value for i in at.info if "Dry run" in i.value]
    assert "8 on paper, 6 to run (2 invalid" in dry[0], dry


def test_a_search_shows_the_verdict_and_hands_a_trial_to_explore() -> None:
    at = _tune_page()
    next(b for b in at.button if b.key == "tune.run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    result = at.session_state[tune_page.RESULT_KEY]["result"]
    labels = [t.label for t in result.trials]
    assert len(labels) == 4
    verdict = "\n".join(m.value for m in at.markdown)
    assert "Winner: " in verdict and "half-splits" in verdict and "held-out" in verdict
    assert at.selectbox(key=tune_page.TRIAL_KEY).value == result.winner.label
    # choose another trial, use it: the sidebar takes its strategy and size
    chosen = next(label for label in labels if label.startswith("token"))
    at.selectbox(key=tune_page.TRIAL_KEY).set_value(chosen).run()
    next(b for b in at.button if b.key == "tune.use").click().run()
    assert at.session_state[STRATEGY_KEY] == "token"
    size = result.trial(chosen).config.params["size"]
    assert at.session_state["token.size"] == size
    # the retrieval lens of the chosen trial
    at.toggle(key="tune.lens").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    lens_lines = [m.value for m in at.markdown if "cut by a boundary —" in m.value]
    assert lens_lines and chosen in lens_lines[0]
    # add it to Compare: configuration B takes it
    next(b for b in at.button if b.key == "tune.compare").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Compare"
    assert at.session_state["cmp.B.strategy"] == "token"
    assert at.session_state["cmp.B.token.size"] == size
    at.switch_page("pages/tune_page.py").run()
    # results survive a page change
    at.switch_page("pages/evaluate_page.py").run()
    at.switch_page("pages/tune_page.py").run()
    assert at.session_state[tune_page.RESULT_KEY]["result"] is result
    assert at.selectbox(key=tune_page.TRIAL_KEY).value == chosen
    # open it in Explore: the document is handed over with the configuration
    next(b for b in at.button if b.key == "tune.explore").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Explore"
    captions = " ".join(c.value for c in at.caption)
    assert "chatlogs" in captions and "Token" in captions
