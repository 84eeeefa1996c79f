"""AppTest tests of the Semantic, Map and Guided tour pages.

What a page shows is compared with the core: each test computes the same thing with
``chunking.semantic`` / ``chunking`` directly. The real bundled model is used on small
documents.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import chunking
import chunking.splitters.semantic.analysis as sem
from chunking.documents.io import read_path
from chunking.embedding.models import get_embedder
from chunking.embedding.registry import full_quality_model
from chunking.engine.spans import sentence_spans
from chunking.splitters.semantic.methods import THRESHOLD_RANGES, check_threshold
from pages import config_controls, sidebar  # the app's modules (pytest's pythonpath has the root)

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 300
ESSAY = read_path(ROOT / "sample_docs" / "long_essay.txt").text
GUIDE = read_path(ROOT / "sample_docs" / "technical_guide.md").text
TOPICS = [
    "Bread dough needs flour, water, salt and yeast. Knead the dough for ten minutes until "
    "it is smooth. Let the dough rise in a warm kitchen until it doubles. Bake the loaf "
    "until the crust turns brown. Cool the bread on a rack before slicing it.",
    "Jupiter is the largest planet in our solar system. Its Great Red Spot is a storm "
    "larger than the Earth. Astronomers count more than ninety moons around it. The moon "
    "Europa hides an ocean under its ice. Space probes study its magnetic field.",
    "The striker scored twice in the second half. The goalkeeper saved a late penalty. "
    "Fans sang until the referee blew the final whistle. The coach changed the formation "
    "at half time. The win moved the club to the top of the league.",
    "Income tax returns are due at the end of April. Employees can deduct some work "
    "expenses. The tax office charges interest on late payments. Keep your receipts for "
    "six years. An accountant can help you claim every allowance.",
]
TEXT = " ".join(TOPICS)
HOSTILE = (
    "Intro sentence about cats. <script>alert(1)</script> is not a sentence. "
    "<img src=x onerror=alert(2)> hides here. Cats purr. Dogs bark loudly. "
    "Markets fell today. The end."
)
#: The page's starting settings: the registry's method and minimum size, and size bounds
#: that fit the bundled model's window (254 of its word pieces).
DEFAULTS = {
    "method": "percentile",
    "unit": "model",
    "max_size": 254,
    "min_size": chunking.get_strategy("semantic").param("min_size").fresh_default(),
}


APP = ROOT / "app.py"


def _page(name: str) -> str:
    return os.path.relpath(ROOT / "pages" / name, APP.parent)


# ----------------------------------------------------------------------- helpers


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _start(text: str | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    if text is not None:
        at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
        at.text_area(key=sidebar.PASTE_KEY).set_value(text).run()
    return _ok(at)


def _open(at: AppTest, name: str) -> AppTest:
    return _ok(at.switch_page(_page(name)).run())


def _metric(at: AppTest, label: str) -> str:
    for metric in at.metric:
        if metric.label == label:
            return metric.value
    raise AssertionError(f"no metric {label!r}; have {[m.label for m in at.metric]}")


def _number(at: AppTest, label: str) -> int:
    return int(_metric(at, label).replace(",", ""))


def _length(values: Any) -> int:
    """How many values a serialised plotly array holds (a list, or typed-array data)."""
    if isinstance(values, dict) and "bdata" in values:
        return len(np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]))
    return len(values)


def _figures(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(e.proto.spec) for e in at.get("plotly_chart")]


def _curve(at: AppTest) -> dict[str, Any]:
    for fig in _figures(at):
        if any(t.get("meta") == "curve" for t in fig["data"]):
            return fig
    raise AssertionError("no distance curve on the page")


def _map(at: AppTest) -> dict[str, Any]:
    for fig in _figures(at):
        if all("customdata" in t for t in fig["data"]) and fig["data"]:
            return fig
    raise AssertionError("no embedding map on the page")


def choose_model(at: AppTest, page: str, key: str, model: str) -> AppTest:
    """Type ``model`` into the model box of ``page`` (AppTest cannot type a new option
    into a select box that is on the page, so it is set while another page is shown)."""
    _open(at, "tour_page.py")
    at.session_state[key] = model
    return _open(at, page)


def _texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


@pytest.fixture(scope="module")
def analysis() -> sem.SemanticAnalysis:
    """The analysis with the page's default model (minilm-onnx-int8 once built)."""
    return sem.analyze(TEXT, embedder=get_embedder(full_quality_model()), buffer_size=1)


@pytest.fixture(scope="module")
def semantic_app() -> AppTest:
    return _open(_start(TEXT), "semantic_page.py")


# ----------------------------------------------------------------- semantic page


def test_threshold_changes_the_breakpoints_as_the_core_does_without_embedding_again(
    semantic_app: AppTest, analysis: sem.SemanticAnalysis
) -> None:
    at = semantic_app
    assert _number(at, "Sentences") == len(analysis.sentences) == len(sentence_spans(TEXT))
    embedder = get_embedder(full_quality_model())
    calls = embedder.calls
    counts = []
    for threshold in (95.0, 75.0, 50.0, 20.0):
        _ok(at.slider(key="sem.threshold.percentile").set_value(threshold).run())
        result = analysis.chunk(threshold=threshold, **DEFAULTS)
        assert _number(at, "Breakpoints") == len(result.breakpoints)
        assert _number(at, "Chunks") == len(result.chunks)
        curve = _curve(at)
        markers = [t for t in curve["data"] if t.get("meta") == "similarity"]
        assert sum(_length(t["x"]) for t in markers) == len(result.breakpoints)
        [line] = curve["layout"]["shapes"]
        assert line["y0"] == pytest.approx(result.threshold)
        counts.append(len(result.breakpoints))
    assert len(set(counts)) > 1  # the threshold did change the cut
    assert embedder.calls == calls  # every change re-chunked from the cached analysis


def test_count_method_and_min_size_follow_the_core(
    semantic_app: AppTest, analysis: sem.SemanticAnalysis
) -> None:
    at = semantic_app
    _ok(at.selectbox(key="sem.method").set_value("count").run())
    _ok(at.slider(key="sem.threshold.count").set_value(4).run())
    window = ("model", 254)  # the page starts at the bundled model's window
    auto_min = DEFAULTS["min_size"]
    counted = analysis.chunk("count", 4, *window, auto_min)
    assert _number(at, "Chunks") == len(counted.chunks)
    assert len(counted.chunks) + len(counted.merged) == 4  # four cut, tiny ones merged
    _ok(at.selectbox(key="sem.method").set_value("percentile").run())
    _ok(at.slider(key="sem.threshold.percentile").set_value(30.0).run())
    _ok(at.number_input(key="sem.min_size").set_value(40).run())
    expected = analysis.chunk("percentile", 30.0, *window, 40)
    assert expected.merged
    assert _number(at, "Merged (min size)") == len(expected.merged)
    assert _number(at, "Chunks") == len(expected.chunks)
    _ok(at.number_input(key="sem.min_size").set_value(auto_min).run())


def test_the_chunks_are_drawn_on_the_text(
    semantic_app: AppTest, analysis: sem.SemanticAnalysis
) -> None:
    at = semantic_app
    _ok(at.slider(key="sem.threshold.percentile").set_value(50.0).run())
    result = analysis.chunk(threshold=50.0, **DEFAULTS)
    [view] = [h.value for h in at.html if 'class="ce-doc"' in h.value]
    assert view.count('class="ce-mark"') == len(result.chunks)


def test_auto_says_what_it_chose(semantic_app: AppTest, analysis: sem.SemanticAnalysis) -> None:
    at = semantic_app
    _ok(at.selectbox(key="sem.method").set_value("auto").run())
    chosen = analysis.chunk("auto", None, "tokens", 512)
    assert f"auto chose {chosen.method}" in _texts(at.info).replace("*", "")
    assert _number(at, "Breakpoints") == len(chosen.breakpoints)
    _ok(at.selectbox(key="sem.method").set_value("percentile").run())


@pytest.mark.parametrize(
    ("text", "count"), [("Just one sentence here.", 1), ("First sentence. Second one.", 2)]
)
def test_one_or_two_sentences_get_a_message(text: str, count: int) -> None:
    at = _open(_start(text), "semantic_page.py")
    assert len(sentence_spans(text)) == count
    message = _texts(at.info)
    assert f"{count} sentence" in message and "at least three" in message
    assert not at.get("plotly_chart")


def test_too_many_sentences_are_offered_a_truncation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHUNK_EXPLORER_MAX_SENTENCES", "8")
    at = _open(_start(TEXT), "semantic_page.py")
    total = len(sentence_spans(TEXT))
    assert f"{total:,} sentences" in _texts(at.warning)
    assert not at.get("plotly_chart")
    _ok(at.button(key="sem_truncate").click().run())
    head = TEXT[: sentence_spans(TEXT)[7][1]]
    assert f"first 8 of {total}" in _texts(at.info)
    assert _number(at, "Sentences") == len(sentence_spans(head))
    _ok(at.button(key="sem_untruncate").click().run())
    assert f"{total:,} sentences" in _texts(at.warning)


def test_a_bad_sentence_limit_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHUNK_EXPLORER_MAX_SENTENCES", "lots")
    at = _open(_start(TEXT), "semantic_page.py")
    assert "CHUNK_EXPLORER_MAX_SENTENCES='lots'" in _texts(at.warning)
    assert _number(at, "Sentences") == len(sentence_spans(TEXT))


def test_a_model_that_cannot_load_is_an_error_with_a_way_out(semantic_app: AppTest) -> None:
    at = choose_model(semantic_app, "semantic_page.py", "sem.model", "/no/such/model-directory")
    error = _texts(at.error)
    assert "could not be loaded" in error and "no model directory" in error
    assert not at.get("plotly_chart")
    _ok(at.button(key="sem_use_bundled").click().run())
    assert not at.error
    assert at.selectbox(key="sem.model").value == "all-MiniLM-L6-v2"
    # the bundled model's breakpoints at the page's current method and threshold
    method = at.selectbox(key="sem.method").value
    threshold = at.slider(key=f"sem.threshold.{method}").value
    bundled = sem.analyze(TEXT, embedder=get_embedder("all-MiniLM-L6-v2"), buffer_size=1)
    expected = bundled.chunk(threshold=threshold, **{**DEFAULTS, "method": method})
    assert _number(at, "Breakpoints") == len(expected.breakpoints)


def test_the_fake_model_works_and_is_cached_by_its_own_name() -> None:
    at = choose_model(_start(TEXT), "semantic_page.py", "sem.model", "hash")
    fake = sem.analyze(TEXT, embedder="hash", buffer_size=1)
    assert _number(at, "Breakpoints") == len(fake.chunk(threshold=95.0, **DEFAULTS).breakpoints)
    _ok(at.slider(key="sem.threshold.percentile").set_value(40.0).run())
    assert _number(at, "Breakpoints") == len(fake.chunk(threshold=40.0, **DEFAULTS).breakpoints)


def test_markup_in_the_document_stays_text() -> None:
    at = _open(_start(HOSTILE), "semantic_page.py")
    sentences = len(sentence_spans(HOSTILE))
    _ok(at.number_input(key="sem.min_size").set_value(0).run())  # no merging of short ones
    _ok(at.selectbox(key="sem.method").set_value("count").run())
    _ok(at.slider(key="sem.threshold.count").set_value(sentences).run())  # cut everywhere
    assert _number(at, "Breakpoints") == sentences - 1
    [view] = [h.value for h in at.html if 'class="ce-doc"' in h.value]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in view
    assert "<script" not in view and "<img" not in view
    hovers = [h for t in _curve(at)["data"] for h in (t.get("hovertext") or [])]
    assert hovers and any("&lt;script&gt;" in h or "&lt;img" in h for h in hovers)
    assert not any("<script" in h or "<img" in h for h in hovers)


def test_the_settings_can_be_handed_to_the_sidebar(analysis: sem.SemanticAnalysis) -> None:
    at = _open(_start(TEXT), "semantic_page.py")
    _ok(at.slider(key="sem.threshold.percentile").set_value(60.0).run())
    expected = analysis.chunk(threshold=60.0, **DEFAULTS)
    assert _number(at, "Chunks") == len(expected.chunks)
    _ok(at.button(key="sem_to_sidebar").click().run())
    assert at.selectbox(key=config_controls.STRATEGY_KEY).value == "semantic"
    assert at.session_state["semantic.threshold"] == 60.0
    explore = _open(at, "explore_page.py")
    assert _number(explore, "Chunks") == len(expected.chunks)  # the same cut, on Explore


# ----------------------------------------------------------------------- map page


def test_the_map_draws_one_point_per_chunk() -> None:
    at = _open(_start(), "map_page.py")  # the default sample, recursive defaults
    chunks = chunking.chunk(GUIDE)
    assert len(chunks) >= 10
    assert _number(at, "Points") == len(chunks)
    assert _metric(at, "Projection") == "UMAP 2D"
    fig = _map(at)
    assert [t["type"] for t in fig["data"]] == ["scattergl"]
    assert sum(_length(t["x"]) for t in fig["data"]) == len(chunks)

    _ok(at.radio(key="map.dims").set_value("3D").run())
    fig = _map(at)
    assert [t["type"] for t in fig["data"]] == ["scatter3d"]
    assert _length(fig["data"][0]["z"]) == len(chunks)
    _ok(at.radio(key="map.dims").set_value("2D").run())
    assert [t["type"] for t in _map(at)["data"]] == ["scattergl"]
    [computed] = [m for m in at.metric if m.label == "Computed in"]
    assert computed.delta == "this view: from the cache"  # shown before: not projected again

    preset = "Preset: Fixed · 500 chars · overlap 50"
    _ok(at.multiselect(key="map.with").set_value([preset]).run())
    _ok(at.radio(key="map.colour").set_value("configuration").run())
    fixed = chunking.chunk(GUIDE, "fixed", size=500, overlap=50)
    assert _number(at, "Points") == len(chunks) + len(fixed)
    fig = _map(at)
    assert [_length(t["x"]) for t in fig["data"]] == [len(chunks), len(fixed)]
    assert len({t["marker"]["color"] for t in fig["data"]}) == 2


def test_a_tiny_document_is_mapped_with_pca_and_the_reason() -> None:
    at = _open(_start(TEXT), "map_page.py")
    count = len(chunking.chunk(TEXT))
    assert count < 10
    assert _number(at, "Points") == count
    assert _metric(at, "Projection") == "PCA 2D"
    assert f"only {count} chunk" in _texts(at.info)


def test_too_many_points_are_offered_a_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHUNK_EXPLORER_MAX_MAP_POINTS", "12")
    at = _open(_start(), "map_page.py")
    total = len(chunking.chunk(GUIDE))
    assert f"{total:,} chunks" in _texts(at.warning)
    assert not at.get("plotly_chart")
    _ok(at.button(key="map_sample").click().run())
    points = _number(at, "Points")
    assert 10 <= points <= 12
    assert sum(_length(t["x"]) for t in _map(at)["data"]) == points


def test_the_map_works_with_the_fake_model() -> None:
    at = choose_model(_start(), "map_page.py", "map.model", "hash")
    assert "hash" in _map(at)["layout"]["title"]["text"]
    assert _number(at, "Points") == len(chunking.chunk(GUIDE))


def test_the_map_reports_a_model_that_cannot_load() -> None:
    at = choose_model(_start(TEXT), "map_page.py", "map.model", "/no/such/model-directory")
    assert "could not be loaded" in _texts(at.error)
    _ok(at.button(key="map_use_bundled").click().run())
    assert not at.error


# --------------------------------------------------------------------- guided tour


def test_the_tour_opens_fixed_size_chunks_of_the_essay() -> None:
    at = _open(_start(), "tour_page.py")
    assert len(at.get("button")) >= 5
    _ok(at.button(key="tour_1_0").click().run())
    assert at.title[0].value == "Explore"
    assert at.selectbox(key=sidebar.SAMPLE_KEY).value == "long_essay.txt"
    assert _number(at, "Chunks") == len(chunking.chunk(ESSAY, "fixed", size=500, overlap=50))


def test_the_tour_opens_markdown_sections_of_the_guide() -> None:
    at = _open(_start(), "tour_page.py")
    _ok(at.button(key="tour_3_0").click().run())
    assert at.title[0].value == "Explore"
    expected = chunking.chunk(GUIDE, "markdown", size=160, unit="tokens")
    assert _number(at, "Chunks") == len(expected)


def test_the_tour_hands_semantic_settings_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHUNK_EXPLORER_MAX_SENTENCES", "40")  # stop before embedding
    at = _open(_start(), "tour_page.py")
    _ok(at.button(key="tour_4_0").click().run())
    assert at.title[0].value == "Semantic breakpoints"
    assert f"{len(sentence_spans(ESSAY)):,} sentences" in _texts(at.warning)
    # AppTest reruns the page it last switched to itself; a browser stays on this page.
    at.switch_page(_page("semantic_page.py"))
    _ok(at.button(key="sem_truncate").click().run())  # the first 40 sentences: quick
    assert at.selectbox(key="sem.method").value == "percentile"
    assert at.slider(key="sem.threshold.percentile").value == 95.0


def test_the_tour_maps_several_configurations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHUNK_EXPLORER_MAX_MAP_POINTS", "10")  # stop before embedding
    at = _open(_start(), "tour_page.py")
    _ok(at.button(key="tour_4_1").click().run())
    assert at.title[0].value == "Embedding map"
    chosen = at.multiselect(key="map.with").value
    assert "Preset: Fixed · 500 chars · overlap 50" in chosen
    assert at.session_state["map.colour"] == "configuration"  # drawn once the map is
    total = len(chunking.chunk(ESSAY, "recursive", size=600))
    total += len(chunking.chunk(ESSAY, "fixed", size=500, overlap=50))
    if "Preset: Semantic · percentile 95" in chosen:
        total += len(
            chunking.chunk(ESSAY, "semantic", method="percentile", model=full_quality_model())
        )
    assert f"{total:,} chunks" in _texts(at.warning)


# ------------------------------------------------------- regressions (issue 10)


def test_a_negative_similarity_threshold_is_kept_not_clamped() -> None:
    # Regression: the page clamped a similarity threshold to [0, 1] without a word,
    # while the core accepts [-1, 1].
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update(strategy="semantic", method="similarity", threshold="-0.2", model="hash")
    _ok(at.run())
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value(TEXT).run()
    at = _open(at, "semantic_page.py")
    slider = at.slider(key="sem.threshold.similarity")
    assert slider.value == -0.2
    assert (slider.min, slider.max) == (-1.0, 1.0)  # what the core accepts, and no more:
    check_threshold("similarity", slider.min)
    with pytest.raises(ValueError, match="between -1 and 1"):
        check_threshold("similarity", slider.min - 0.01)
    fake = sem.analyze(TEXT, embedder="hash", buffer_size=1)
    expected = fake.chunk("similarity", -0.2, "tokens", 512)
    assert _number(at, "Chunks") == len(expected.chunks)
    _ok(at.button(key="sem_to_sidebar").click().run())
    assert at.session_state["semantic.threshold"] == -0.2


def test_every_configuration_keeps_a_point_when_the_map_is_sampled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Regression: a configuration whose share of the point budget rounded to 0 vanished
    # from the map without a word.
    monkeypatch.setenv("CHUNK_EXPLORER_MAX_MAP_POINTS", "10")
    at = _start()
    _ok(at.number_input(key="recursive.size").set_value(8000).run())
    at = choose_model(at, "map_page.py", "map.model", "hash")
    preset = "Preset: Fixed · 500 chars · overlap 50"
    _ok(at.multiselect(key="map.with").set_value([preset]).run())
    few = len(chunking.chunk(GUIDE, size=8000))
    many = len(chunking.chunk(GUIDE, "fixed", size=500, overlap=50))
    assert 10 * few // (few + many) == 0  # the case that used to lose configuration A
    _ok(at.button(key="map_sample").click().run())
    counts = [_length(t["x"]) for t in _map(at)["data"]]
    assert len(counts) == 2 and min(counts) >= 1 and sum(counts) <= 10
    assert _number(at, "Points") == sum(counts)
    assert f"A · Recursive · 8000 chars: {counts[0]} of {few}" in _texts(at.info)


def test_the_threshold_sliders_span_what_the_core_accepts(semantic_app: AppTest) -> None:
    at = semantic_app
    try:
        for method, (lo, hi) in THRESHOLD_RANGES.items():
            _ok(at.selectbox(key="sem.method").set_value(method).run())
            slider = at.slider(key=f"sem.threshold.{method}")
            assert (slider.min, slider.max) == (lo, hi)
            assert slider.step == pytest.approx((hi - lo) / 200)  # 0.5 or 0.01
    finally:
        _ok(at.selectbox(key="sem.method").set_value(DEFAULTS["method"]).run())
