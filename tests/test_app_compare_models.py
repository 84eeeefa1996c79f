"""AppTest of the Compare page with semantic configurations (issue 27): each one that
embeds has its sentence windows embedded first, with progress and the model named, by
the app's default model, not under the chunking's bare spinner."""

from __future__ import annotations

import chunking
from chunking.embedding.models import get_embedder
from chunking.embedding.registry import full_quality_model
from pages import cached, config_controls, model_choice
from tests.test_app_models import (
    FIRST,
    SECOND,
    _ok,
    _open,
    _upload,
    _uploading_app,
    choose_model,
)

#: A text of its own: no other test has embedded its windows in this process.
TEXT = f"{SECOND}{FIRST}{SECOND}The compare page embeds before it chunks. "


def _stats_chunks(at: object) -> dict[str, int]:
    """Chunks per configuration letter, from Compare's statistics table."""
    frames = [f.value for f in at.dataframe if "Mean size" in f.value.columns]  # type: ignore[attr-defined]
    assert len(frames) == 1, frames
    return {str(r["Config"]): int(r["Chunks"]) for _, r in frames[0].iterrows()}


def test_compare_embeds_each_semantic_configuration_first_with_the_default_model() -> None:
    at = _upload(_uploading_app(), "compare.txt", TEXT)
    _ok(at.selectbox(key=config_controls.STRATEGY_KEY).set_value("semantic").run())
    at = _open(at, "compare_page.py")
    _ok(at.selectbox(key="cmp.B.strategy").set_value("semantic").run())
    _ok(at.number_input(key="cmp.B.semantic.buffer_size").set_value(2).run())
    model = full_quality_model()
    assert at.session_state["semantic.model"] == model  # A, from the sidebar
    assert at.session_state["cmp.B.semantic.model"] == model  # B, in its column
    name = get_embedder(model).name
    key = cached.text_key(TEXT)
    # both embedded before the chunking (with a progress bar naming the model)
    assert model_choice.was_embedded(model_choice.semantic_marker(key, name, 1))
    assert model_choice.was_embedded(model_choice.semantic_marker(key, name, 2))
    assert _stats_chunks(at) == {
        "A": len(chunking.chunk(TEXT, "semantic", model=model)),
        "B": len(chunking.chunk(TEXT, "semantic", model=model, buffer_size=2)),
    }
    assert not at.error, [e.value for e in at.error]


def test_a_compared_model_that_cannot_load_is_named_and_left_out() -> None:
    at = _upload(_uploading_app(), "compare.txt", TEXT)
    at = _open(at, "compare_page.py")
    _ok(at.selectbox(key="cmp.B.strategy").set_value("semantic").run())
    at = choose_model(at, "compare_page.py", "cmp.B.semantic.model", "no-such-model")
    errors = [str(e.value) for e in at.error]
    assert len(errors) == 1 and "no-such-model" in errors[0], errors
    assert any("Two valid configurations" in str(i.value) for i in at.info)
    # only A, the sidebar's, would offer "Use the bundled model" (B to D share one key)
    assert not any(b.key and b.key.endswith("_use_bundled") for b in at.button)
