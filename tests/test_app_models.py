"""AppTest tests of the model box, the fast first view and map selection (issues 13, 16).

The model box must never go blank (an empty name is the bundled model), keep the
user's choice through uploads and page changes, the Semantic page's size bounds must
start at the model's window, and a single click must select a point on the map.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest
from streamlit.proto.PlotlyChart_pb2 import PlotlyChart
from streamlit.testing.v1 import AppTest

from chunking.embedding.models import get_embedder
from pages import sidebar, widgets

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
    assert semantic.selectbox(key="sem.model").value == BUNDLED
    back = _open(semantic, "map_page.py")
    assert back.selectbox(key="map.model").value == "hash"
    assert "hash" in _captions(back)


@pytest.mark.parametrize("blank", ["", "   "])
def test_an_empty_model_box_is_the_bundled_model(blank: str) -> None:
    at = choose_model(_uploading_app(), "semantic_page.py", "sem.model", blank)
    assert at.selectbox(key="sem.model").value == BUNDLED
    assert not at.error
    _upload(at, "second.txt", SECOND * 3)
    assert at.selectbox(key="sem.model").value == BUNDLED
    assert not at.error


def test_the_model_box_offers_the_named_models_with_their_notes() -> None:
    at = _open(_uploading_app(), "semantic_page.py")
    box = at.selectbox(key="sem.model")
    assert box.options[0].startswith(BUNDLED)
    assert any(o.startswith("minilm-onnx-int8") for o in box.options)
    assert "minilm-static (fast preview, lower quality)" in box.options


def test_semantic_sizes_start_at_the_models_window() -> None:
    at = _open(_uploading_app(), "semantic_page.py")
    embedder = get_embedder()
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


@pytest.mark.slow
def test_a_long_document_starts_with_the_static_preview(monkeypatch: pytest.MonkeyPatch) -> None:
    get_embedder("minilm-static")  # built once per machine (minutes on a busy machine)
    monkeypatch.setattr(widgets, "PREVIEW_FROM_TEXTS", 5)
    at = _uploading_app()  # a document no other test embedded in this process:
    _upload(at, "fresh.txt", f"{SECOND * 2}A note numbered {uuid.uuid4().hex}. ")
    _open(at, "semantic_page.py")
    assert any("quick first view" in str(i.value) for i in at.info)
    assert "Model: **minilm-static (fast preview, lower quality)**" in _captions(at)
    assert at.selectbox(key="sem.model").value == BUNDLED  # the choice is unchanged
    _ok(at.button(key="sem_full_model").click().run())
    assert f"Model: **{get_embedder().label}**" in _captions(at)
    assert not any("quick first view" in str(i.value) for i in at.info)
