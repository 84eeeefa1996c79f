"""The model box offers to build the derived models when they are missing (issue 38,
point 6): with an empty model folder (``XDG_CACHE_HOME`` moves it) the box says which
are not built and how long building takes, and its button builds them with a progress
bar and switches the box to the ONNX int8 model."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from chunking.embedding import registry
from chunking.embedding.onnx import onnx_int8_dir
from chunking.embedding.static import static_dir
from chunking.model import Progress

KEY = "t.model"


def _box() -> None:
    from pages import model_choice

    model_choice.model_select("t.model", "Model")


@pytest.fixture(autouse=True)
def _empty_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def _run() -> AppTest:
    at = AppTest.from_function(_box, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _offer(at: AppTest) -> list[str]:
    return [i.value for i in at.info if "not built on this machine" in i.value]


def test_an_empty_model_folder_offers_the_build_with_its_time() -> None:
    assert not onnx_int8_dir().exists() and not static_dir().exists()
    at = _run()
    assert at.selectbox(key=KEY).value == "all-MiniLM-L6-v2"  # torch: nothing built
    (offer,) = _offer(at)
    assert "minilm-onnx-int8 and minilm-static" in offer and "about" in offer
    assert "chunk-explorer models --build" in offer
    button = next(b for b in at.button if b.key == f"{KEY}_build")
    assert button.label.startswith("Build minilm-onnx-int8 and minilm-static (about ")


def test_a_derived_model_is_offered_alone_and_another_model_gets_no_offer() -> None:
    at = _run()
    at.selectbox(key=KEY).set_value("minilm-static").run()
    (offer,) = _offer(at)
    assert offer.startswith("minilm-static is not built") and "onnx" not in offer
    at.selectbox(key=KEY).set_value("use-multilingual").run()
    assert not _offer(at)
    assert not any(b.key == f"{KEY}_build" for b in at.button)


def test_the_button_builds_with_progress_and_the_box_uses_the_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[tuple[str, bool]] = []

    def build(self: registry.NamedModel, progress: Progress | None = None) -> None:
        # stands in for the real build (minutes on this machine): the folder it renames
        # into place, and the progress it reports
        assert progress is not None
        progress(1, 2, "quantizing")
        (onnx_int8_dir() if self.key == registry.ONNX_INT8 else static_dir()).mkdir(parents=True)
        built.append((self.name, self.is_built()))

    monkeypatch.setattr(registry.NamedModel, "load", build)
    at = _run()
    next(b for b in at.button if b.key == f"{KEY}_build").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert built == [("minilm-onnx-int8", True), ("minilm-static", True)]
    assert at.selectbox(key=KEY).value == "minilm-onnx-int8"
    assert not _offer(at)
