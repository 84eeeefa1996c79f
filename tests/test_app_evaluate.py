"""The Evaluate page (AppTest): readable, unclipped results tables, models side by side,
the techniques table and its Inspect view, and the query playground on the sidebar's
configuration. The fast fake model ("hash") stands in where the test is about the page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import chunking
from chunking.documents.io import read_path
from pages import config_controls, sidebar

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
PAGE = str(ROOT / "pages" / "evaluate_page.py")
TIMEOUT = 180
GUIDE = read_path(ROOT / "sample_docs" / "technical_guide.md").text


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _run_sweep(models: list[str], **choices: str) -> AppTest:
    at = _ok(AppTest.from_file(PAGE, default_timeout=TIMEOUT).run())
    at.multiselect(key="eval.models").set_value(models)
    at.multiselect(key="eval.corpora").set_value(["chatlogs"])
    at.multiselect(key="eval.strategies").set_value(["recursive"])
    at.text_input(key="eval.sizes").set_value("200, 400")
    for key, value in choices.items():
        at.selectbox(key=f"eval.{key}").set_value(value)
    next(b for b in at.button if b.label == "Run evaluation").click()
    return _ok(at.run())


@pytest.mark.slow
def test_results_show_human_names_every_row_and_the_models_side_by_side() -> None:
    at = _run_sweep(["hash", "all-MiniLM-L6-v2"])
    results = at.dataframe[0]
    columns = list(results.value.columns)
    assert "Precision (std)" in columns and "Recall" in columns and "Technique" in columns
    assert not [c for c in columns if c.endswith(("_std", "_mean", "_share"))]
    assert len(results.value) == 4  # 2 sizes × 2 models
    # each row's 95 % bootstrap interval of its recall and precision Ω, explained below
    for label in ("Recall", "Precision Ω"):
        low, high = results.value[f"{label} 95 % low"], results.value[f"{label} 95 % high"]
        assert ((low <= results.value[label]) & (results.value[label] <= high)).all()
    assert any("95 % bootstrap interval" in c.value for c in at.caption)
    per_model = next(d.value for d in at.dataframe if "configuration" in d.value.columns)
    assert any(c.startswith("Recall · hash") for c in per_model.columns)
    assert any(c.startswith("Recall · sentence-transformers") for c in per_model.columns)
    assert len(per_model) == 2  # one row per configuration


@pytest.mark.slow
def test_a_bad_technique_is_an_error_in_place() -> None:
    at = _run_sweep(["hash"], returned="parent")
    assert any("parent-child" in e.value for e in at.error)
    assert not any("Precision (std)" in d.value.columns for d in at.dataframe)


@pytest.mark.slow
def test_techniques_table_and_what_each_returned_for_a_question() -> None:
    at = _run_sweep(["hash"], retriever="hybrid")
    assert at.dataframe[0].value["Technique"].tolist() == ["hybrid", "hybrid"]
    next(b for b in at.button if b.label == "Compare techniques").click()
    _ok(at.run())
    table = next(d.value for d in at.dataframe if "Δ Recall" in d.value.columns)
    # the fake model has no token vectors: late rows are left out; recursive has no parent
    expected = ["dense", "bm25", "hybrid", "headers", "window:1"]
    if "cluster" in chunking.strategies():  # the cluster chunker, same size and unit
        expected.append("cluster")
    assert table["Technique"].tolist() == expected
    assert table["Δ Recall"].iloc[0] == 0
    tabs = [t.label for t in at.tabs]
    first = tabs.index("dense")
    assert tabs[first : first + len(table)] == table["Technique"].tolist()  # one tab each
    evidence = [h.value for h in at.html if 'class="ev-doc"' in h.value]
    assert len(evidence) >= len(table) and all("<script" not in e for e in evidence)


@pytest.mark.slow
def test_the_playground_queries_the_sidebars_configuration() -> None:
    hostile = "<script>alert(1)</script> Cats purr softly.\n\n" + GUIDE[:3000]
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value(hostile).run()
    at = _ok(at.switch_page("pages/explore_page.py").run())
    at.selectbox(key=config_controls.STRATEGY_KEY).set_value("recursive").run()
    at.selectbox(key="recursive.unit").set_value("chars").run()
    at.number_input(key="recursive.size").set_value(120).run()
    _ok(at.switch_page("pages/evaluate_page.py").run())
    at.selectbox(key="eval.pg_model").set_value("hash")
    at.number_input(key="eval.pg_k").set_value(3)
    at.text_input(key="eval.pg_query").set_value("Cats purr softly")
    _ok(at.run())
    assert any("recursive · 120 chars" in c.value for c in at.caption)
    hits = next(d.value for d in at.dataframe if "rank" in d.value.columns)
    assert hits["rank"].tolist() == [1, 2, 3]
    chunks = chunking.chunk(hostile, "recursive", size=120, unit="chars")
    assert "Cats purr softly" in chunks[int(hits["chunk"].iloc[0])].text
    assert (hits["end"] - hits["start"]).max() <= 120
    markup = [h.value for h in at.html if 'class="ev-doc"' in h.value][-1]
    assert "<script>alert" not in markup and "&lt;script&gt;" in markup


@pytest.mark.slow
def test_own_document_and_question_file_with_header_context() -> None:
    text = "# Pets\n\nCats purr when content.\n\n## Fish\n\nFish swim in clean water.\n" * 3
    phrase = "Fish swim in clean water."
    start = text.index(phrase)
    row = {
        "question": "Where do fish swim?",
        "references": [{"content": phrase, "start_index": start, "end_index": start + 25}],
    }
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value(text).run()
    _ok(at.switch_page("pages/evaluate_page.py").run())
    at.radio(key="eval.origin").set_value("My document").run()
    at.radio(key="eval.own_from").set_value("a question file").run()
    upload = json.dumps(row).encode()
    at.file_uploader(key="eval_upload.questions").set_value(("q.jsonl", upload, "text/plain"))
    _ok(at.run())
    at.multiselect(key="eval.models").set_value(["hash"])
    at.multiselect(key="eval.strategies").set_value(["recursive"])
    at.multiselect(key="eval.units").set_value(["chars"])
    at.text_input(key="eval.sizes").set_value("40")
    at.selectbox(key="eval.context").set_value("headers")
    next(b for b in at.button if b.label == "Run evaluation").click()
    _ok(at.run())
    # the whole wait is announced before it starts (the fake model: under a second)
    assert any(c.value.startswith("This evaluation takes under a second") for c in at.caption)
    results = at.dataframe[0].value
    # the grid's recursive · 40 chars, then the sidebar's configuration (evaluated too)
    assert results["Technique"].tolist() == ["headers", "headers"]
    assert results["Size"].tolist()[0] == 40 and results["Recall"].iloc[0] > 0
    next(b for b in at.button if b.label == "Compare techniques").click()
    _ok(at.run())
    contexts = next(
        d.value for d in at.dataframe if "context (embedded before the chunk)" in d.value.columns
    )
    assert contexts["context (embedded before the chunk)"].str.startswith("pasted text").all()
    assert any("Pets > Fish" in c for c in contexts["context (embedded before the chunk)"])
