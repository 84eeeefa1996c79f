"""The guided tour's presets give chunks the default embedding model reads whole, as the
registry's defaults do (tests/test_defaults.py); a preset away from the default says why."""

from __future__ import annotations

from pathlib import Path

import pytest

import chunking
from chunking.documents.io import read_path
from chunking.units import DEFAULT_MODEL_WINDOW, SPECIAL_TOKENS, get_sizer
from pages import tour_page

ROOT = Path(__file__).resolve().parents[1]
STOPS = [
    pytest.param(stop, id=f"{level.number}.{k} {stop.label}")
    for level in tour_page.LEVELS
    for k, stop in enumerate(level.stops)
    if stop.needs_strategy and stop.strategy != "semantic"
]


@pytest.mark.parametrize("stop", STOPS)
def test_a_tour_preset_fits_the_default_models_window(stop: tour_page.Stop) -> None:
    text = read_path(ROOT / "sample_docs" / stop.sample).text
    chunks = chunking.run(text, chunking.Config.create(stop.strategy, **stop.params))
    sizer = get_sizer("model")
    # a parent-child strategy's parents go to a language model; only its leaves are embedded
    embedded = [c for c in chunks if not c.metadata.get("children")]
    pieces = [sizer.size(c.embedding_text) + SPECIAL_TOKENS for c in embedded]
    assert embedded and max(pieces) <= DEFAULT_MODEL_WINDOW, (stop.label, max(pieces))


@pytest.mark.parametrize("stop", STOPS)
def test_a_size_away_from_the_registry_default_is_explained(stop: tour_page.Stop) -> None:
    spec = chunking.get_strategy(stop.strategy)
    name = spec.limit_param
    assert name is not None
    default = spec.defaults()
    size, unit = stop.params.get(name, default[name]), stop.params.get("unit", default["unit"])
    if (size, unit) != (default[name], default["unit"]):
        assert f"{size} {unit}" in f"{stop.label} {stop.hint}", stop.label


def test_the_code_stop_keeps_all_but_the_long_demo_whole() -> None:
    stop = next(s for level in tour_page.LEVELS for s in level.stops if s.strategy == "code")
    text = read_path(ROOT / "sample_docs" / stop.sample).text
    chunks = chunking.run(text, chunking.Config.create(stop.strategy, **stop.params))
    cut = {c.metadata["symbol"] for c in chunks if c.metadata.get("boundary") == "line"}
    assert cut == {"_demo"}, cut
    assert "long demo" in stop.hint
