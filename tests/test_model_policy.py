"""Which model a full-quality view uses (issue 27): minilm-onnx-int8 once it is built and
usable, the torch reference otherwise; when a first view starts with the static preview;
and the map's presets sized as the registry's defaults, which the model reads whole.

A derived model counts as built when its folder exists (:mod:`chunking.embedding.derived`),
so the tests make or leave out that folder in a cache of their own; the real built
models are used where a model is loaded.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import chunking
from chunking.documents.io import read_path
from chunking.embedding import registry
from chunking.embedding.models import get_embedder
from chunking.embedding.onnx import onnx_int8_dir
from chunking.embedding.registry import (
    ONNX_INT8,
    STATIC,
    first_view_model,
    full_quality_model,
    usable,
)
from chunking.embedding.static import static_dir
from chunking.units import DEFAULT_MODEL, DEFAULT_MODEL_WINDOW, SPECIAL_TOKENS, get_sizer
from pages import map_page, model_choice, param_widgets
from tests.conftest import sample_paths


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder in which no derived model is built."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def _build(folder: Path) -> None:
    folder.mkdir(parents=True)  # what a finished build leaves (build_once renames into it)


def test_without_the_onnx_model_built_full_quality_is_the_torch_reference(
    empty_cache: Path,
) -> None:
    assert not usable(ONNX_INT8)
    assert full_quality_model() == DEFAULT_MODEL
    assert not usable("no-such-model")


def test_once_the_onnx_model_is_built_it_is_the_full_quality_model(empty_cache: Path) -> None:
    _build(onnx_int8_dir())
    assert usable(ONNX_INT8) and usable(" MINILM-ONNX-INT8 ")
    assert full_quality_model() == ONNX_INT8


def test_a_built_onnx_model_without_its_runtime_is_not_the_default(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _build(onnx_int8_dir())
    real = importlib.util.find_spec

    def without_onnxruntime(name: str, *args: object) -> object:
        return None if name == "onnxruntime" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_onnxruntime)
    assert full_quality_model() == DEFAULT_MODEL


def test_the_torch_reference_starts_with_the_preview_for_many_texts(empty_cache: Path) -> None:
    many = registry.PREVIEW_FROM_TEXTS
    assert first_view_model(DEFAULT_MODEL, many, 0.0) == DEFAULT_MODEL  # static not built
    _build(static_dir())
    assert first_view_model(DEFAULT_MODEL, many - 1, 999.0) == DEFAULT_MODEL
    assert first_view_model(DEFAULT_MODEL, many, 0.0) == STATIC
    assert first_view_model("sentence-transformers/all-MiniLM-L6-v2", many, 0.0) == STATIC
    assert first_view_model("", many, 0.0) == STATIC  # an empty name is the bundled model


def test_the_onnx_model_starts_with_the_preview_only_for_a_long_wait(empty_cache: Path) -> None:
    _build(static_dir())
    long = registry.PREVIEW_FROM_SECONDS
    assert first_view_model(ONNX_INT8, 10_000, long - 1) == ONNX_INT8
    assert first_view_model(ONNX_INT8, 10, long) == STATIC
    for other in ("hash", STATIC, "/some/local/model"):
        assert first_view_model(other, 10_000, 1e6) == other


def test_the_onnx_model_is_named_with_its_quality_next_to_figures() -> None:
    onnx = get_embedder(ONNX_INT8)  # built by the set-up (chunk-explorer models --build)
    assert onnx.label == f"{ONNX_INT8} ({registry.ONNX_NOTE})"
    assert "0.98" in onnx.label and "reference" in onnx.label
    assert model_choice.model_label(ONNX_INT8) == onnx.label
    assert model_choice.model_label(DEFAULT_MODEL) == f"{DEFAULT_MODEL} (torch, the reference)"


def test_a_strategys_model_starts_at_the_full_quality_model_in_the_app_only() -> None:
    spec = chunking.get_strategy("semantic")
    assert spec.param("model").default == DEFAULT_MODEL  # the CLI and the API keep torch
    assert param_widgets.param_start(spec.param("model")) == full_quality_model()
    assert param_widgets.param_start(spec.param("max_size")) == spec.param("max_size").default
    for name in ("langchain.semantic", "llamaindex.semantic"):
        if name in chunking.strategies():
            model = chunking.get_strategy(name).param("model")
            assert param_widgets.param_start(model) == full_quality_model()


def test_the_maps_presets_are_sized_to_the_models_window() -> None:
    presets = map_page.preset_configs()
    recursive = chunking.get_strategy("recursive").param("size").default
    assert f"Preset: Recursive · {recursive} chars" in presets
    assert presets[f"Preset: Recursive · {recursive} chars"].params["size"] == recursive
    assert presets["Preset: Semantic · percentile 95"].params["model"] == full_quality_model()
    sizer, window = get_sizer("model"), DEFAULT_MODEL_WINDOW
    too_long = []
    for path in sample_paths():
        text = read_path(path).text
        for name, config in presets.items():
            if config.strategy == "semantic":
                continue  # embeds: its defaults are checked in tests/test_defaults.py
            for c in chunking.run(text, config):
                if sizer.size(c.embedding_text) + SPECIAL_TOKENS > window and not c.flags:
                    too_long.append(f"{name} on {path.name}: chunk {c.index}")
    assert not too_long, too_long[:5]
