"""AppTest tests of the model box, the fast first view and map selection (issues 13, 16,
27).

The model box starts at the model full-quality views use (minilm-onnx-int8 once built,
else the torch reference), must never go blank (an empty name is that model), keep the
user's choice through uploads and page changes, the Semantic page's size bounds must
start at the model's window, every announced wait is the core's estimate, the map's
time is the whole view's, and a single click must select a point on the map.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path

import pytest
from streamlit.proto.PlotlyChart_pb2 import PlotlyChart
from streamlit.testing.v1 import AppTest

import chunking
from chunking.embedding import registry, timing
from chunking.embedding.models import Wait, estimate_wait, get_embedder
from chunking.embedding.registry import full_quality_model
from chunking.engine.spans import sentence_spans
from chunking.splitters.semantic.analysis import window_texts
from pages import cached, config_controls, model_choice, sidebar

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
TIMEOUT = 300
BUNDLED = "all-MiniLM-L6-v2"
FIRST = (
    "Bread dough needs flour, water, salt and yeast. Knead the dough for ten minutes. "
    "Let the dough rise in a warm kitchen. Bake the loaf until the crust turns brown. "
)
SECOND = (
    "Jupiter is the largest planet. Its Great Red Spot is a storm. Astronomers count "
    "ninety moons. The moon Europa hides an ocean. Probes study its magnetic field. "
)


def _page(name: str) -> str:
    return os.path.relpath(ROOT / "pages" / name, APP.parent)


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _open(at: AppTest, name: str) -> AppTest:
    return _ok(at.switch_page(_page(name)).run())


def _upload(at: AppTest, name: str, text: str) -> AppTest:
    at.file_uploader(key=sidebar.UPLOAD_KEY).set_value((name, text.encode(), "text/plain"))
    return _ok(at.run())


def _uploading_app() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    _ok(at.radio(key=sidebar.SOURCE_KEY).set_value("Upload").run())
    return _upload(at, "first.txt", FIRST * 3)


def choose_model(at: AppTest, page: str, key: str, model: str) -> AppTest:
    """Type ``model`` into the model box of ``page`` (AppTest cannot type a new option
    into a select box that is on the page, so it is set while another page is shown)."""
    _open(at, "tour_page.py")
    at.session_state[key] = model
    return _open(at, page)


def _captions(at: AppTest) -> str:
    return "\n".join(str(c.value) for c in at.caption)


def test_the_map_model_survives_an_upload_and_page_changes() -> None:
    at = choose_model(_open(_uploading_app(), "map_page.py"), "map_page.py", "map.model", "hash")
    assert at.selectbox(key="map.model").value == "hash"
    _upload(at, "second.txt", SECOND * 3)
    assert at.selectbox(key="map.model").value == "hash"
    assert not at.error
    semantic = _open(at, "semantic_page.py")
    assert semantic.selectbox(key="sem.model").value == full_quality_model()
    back = _open(semantic, "map_page.py")
    assert back.selectbox(key="map.model").value == "hash"
    assert "hash" in _captions(back)


@pytest.mark.parametrize("blank", ["", "   "])
def test_an_empty_model_box_is_the_full_quality_model(blank: str) -> None:
    at = choose_model(_uploading_app(), "semantic_page.py", "sem.model", blank)
    assert at.selectbox(key="sem.model").value == full_quality_model()
    assert not at.error
    _upload(at, "second.txt", SECOND * 3)
    assert at.selectbox(key="sem.model").value == full_quality_model()
    assert not at.error


def test_the_model_box_offers_the_named_models_with_their_notes() -> None:
    at = _open(_uploading_app(), "semantic_page.py")
    box = at.selectbox(key="sem.model")
    assert box.options[0].startswith(BUNDLED)
    assert any(o.startswith("minilm-onnx-int8") for o in box.options)
    assert "minilm-static (fast preview, lower quality)" in box.options


def test_semantic_sizes_start_at_the_models_window() -> None:
    at = _open(_uploading_app(), "semantic_page.py")
    embedder = get_embedder(full_quality_model())  # the default, named next to the figures
    assert at.session_state["sem.unit"] == "model"
    assert at.session_state["sem.max_size"] == embedder.token_limit == 254
    assert f"reads the first {embedder.token_limit} of its word pieces" in _captions(at)
    assert f"Model: **{embedder.label}**" in _captions(at)
    at.session_state["sem.max_size"] = 400
    _ok(at.run())
    assert any("reads only the first 254" in str(w.value) for w in at.warning)


def test_a_single_click_selects_a_point_on_the_map() -> None:
    at = choose_model(_uploading_app(), "map_page.py", "map.model", "hash")
    chart = next(e for e in at.get("plotly_chart") if e.proto.selection_mode)
    assert PlotlyChart.SelectionMode.POINTS in chart.proto.selection_mode
    # Streamlit turns click-to-select off while the chart is in lasso or box mode.
    assert json.loads(chart.proto.spec)["layout"]["dragmode"] not in ("lasso", "select")


@pytest.fixture
def steady_estimates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Estimates that do not move between the page's and the test's: no records of
    earlier runs, and the machine's load fixed."""
    monkeypatch.setenv(timing.TIMINGS_ENV, str(tmp_path / "timings.json"))
    monkeypatch.setattr(timing, "contention", lambda threads=0: 1.0)


def _fresh_document() -> str:
    """A document no other test embedded in this process."""
    return f"{SECOND * 2}A note numbered {uuid.uuid4().hex}. "


def _announced(model: str, text: str) -> Wait:
    """The core's estimate for the Semantic page's windows of ``text`` with ``model``."""
    windows = window_texts(text, sentence_spans(text), 1)
    return estimate_wait(model, windows, f"{len(windows):,} sentence windows", disk_cache=True)


@pytest.mark.slow
@pytest.mark.usefixtures("steady_estimates")
def test_a_long_document_starts_with_the_static_preview(monkeypatch: pytest.MonkeyPatch) -> None:
    get_embedder("minilm-static")  # built once per machine (minutes on a busy machine)
    monkeypatch.setattr(registry, "PREVIEW_FROM_TEXTS", 5)
    at = _uploading_app()
    text = _fresh_document()
    _upload(at, "fresh.txt", text)
    at = choose_model(at, "semantic_page.py", "sem.model", BUNDLED)  # the torch reference
    [notice] = [str(i.value) for i in at.info if "quick first view" in str(i.value)]
    assert (
        f"takes {_announced(BUNDLED, text).describe()} for these" in notice
    )  # the core's estimate
    assert "Model: **minilm-static (fast preview, lower quality)**" in _captions(at)
    assert at.selectbox(key="sem.model").value == BUNDLED  # the choice is unchanged
    _ok(at.button(key="sem_full_model").click().run())
    assert f"Model: **{get_embedder().label}**" in _captions(at)
    assert not any("quick first view" in str(i.value) for i in at.info)


@pytest.mark.usefixtures("steady_estimates")
def test_the_onnx_model_previews_only_a_long_wait_and_says_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    onnx = get_embedder(registry.ONNX_INT8)  # built by the set-up
    get_embedder(registry.STATIC)
    monkeypatch.setattr(registry, "PREVIEW_FROM_SECONDS", 0.0)  # any wait is long here
    at = _uploading_app()
    text = _fresh_document()
    _upload(at, "fresh.txt", text)
    at = choose_model(at, "semantic_page.py", "sem.model", registry.ONNX_INT8)
    [notice] = [str(i.value) for i in at.info if "quick first view" in str(i.value)]
    assert notice.count(onnx.label) == 1  # named with its quality
    wait = _announced(registry.ONNX_INT8, text)
    assert f"takes {wait.describe()} for these {wait.what}" in notice
    button = at.button(key="sem_full_model")
    assert button.label == f"Use {registry.ONNX_INT8} ({timing.about(wait.seconds)})"
    _ok(button.click().run())
    assert f"Model: **{onnx.label}**" in _captions(at)
    monkeypatch.setattr(registry, "PREVIEW_FROM_SECONDS", 1e9)  # no wait is long
    _upload(at, "other.txt", _fresh_document())
    assert not any("quick first view" in str(i.value) for i in at.info)
    assert f"Model: **{onnx.label}**" in _captions(at)


def test_the_maps_time_is_the_whole_views() -> None:
    at = choose_model(_uploading_app(), "map_page.py", "map.model", "hash")
    [computed] = [m for m in at.metric if m.label == "Computed in"]
    found = re.search(
        r"took when it was computed: ([\d.]+) s to chunk .* ([\d.]+) s to", computed.help
    )
    assert found, computed.help
    vectors, projection = (float(g) for g in found.groups())
    assert float(computed.value.removesuffix(" s")) == pytest.approx(
        vectors + projection, abs=0.011
    )


def test_explore_embeds_a_semantic_cut_first_with_the_full_quality_model() -> None:
    at = _uploading_app()
    text = FIRST * 3
    _ok(at.selectbox(key=config_controls.STRATEGY_KEY).set_value("semantic").run())
    at = _open(at, "explore_page.py")
    model = full_quality_model()
    assert at.session_state["semantic.model"] == model  # the sidebar starts at it
    assert f"model {model_choice.model_label(model)}" in _captions(at)
    name = get_embedder(model).name
    # embedded before the chunking (with its progress bar), not under "Chunking…"
    assert model_choice.was_embedded(model_choice.semantic_marker(cached.text_key(text), name, 1))
    chunks = chunking.chunk(text, "semantic", model=model)
    assert int(next(m.value for m in at.metric if m.label == "Chunks")) == len(chunks)
