"""An endpoint's name, window, tokenizer, request plan and cost, without a server."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import Config
from chunking.embedding.endpoint import (
    KNOWN_MODELS,
    PRICES_DATE,
    EndpointEmbedder,
    EndpointSpec,
    endpoint_spec,
    estimate_cost,
    plan_requests,
)
from chunking.embedding.models import ModelWindow, canonical_model_name, get_embedder, model_window
from chunking.units import get_sizer, model_tokenizer_path

OPENAI = "https://api.openai.com/v1"


@given(
    st.sampled_from(["http://localhost:11434/v1", "https://api.example.com/v1", "http://h:8/"]),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,30}", fullmatch=True),
    st.none() | st.integers(1, 100_000),
    st.sampled_from([None, "tokens", "model"]),
    st.sampled_from(["OPENAI_API_KEY", "MY_KEY", "K2"]),
)
def test_a_spec_survives_its_name(
    url: str, model: str, window: int | None, tokenizer: str | None, key_env: str
) -> None:
    spec = EndpointSpec(url, model, key_env, window, tokenizer)
    assert EndpointSpec.parse(spec.name) == spec
    assert canonical_model_name(spec.name) == spec.name
    assert spec.cache_name == f"{url.rstrip('/')}#{model}"


@given(st.lists(st.integers(0, 400), max_size=60), st.integers(1, 10), st.integers(1, 1000))
def test_requests_hold_every_text_once_in_order_within_the_caps(
    sizes: list[int], max_inputs: int, max_tokens: int
) -> None:
    batches = plan_requests(sizes, max_inputs, max_tokens)
    assert [i for b in batches for i in b] == list(range(len(sizes)))
    for batch in batches:
        assert 1 <= len(batch) <= max_inputs
        assert len(batch) == 1 or sum(sizes[i] for i in batch) <= max_tokens


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://host/v1", "http:// or https://"),
        ("http:///v1", "with a host"),
        ("https://user:sk-secret@api.openai.com/v1", "must not hold a user name or key"),
        ("https://api.openai.com/v1?api_key=sk-secret", "must not hold a query"),
    ],
)
def test_a_bad_url_is_refused_without_repeating_a_key(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        endpoint_spec(url, "m")
    assert "sk-secret" not in str(err.value)


def test_known_hosted_models_bring_their_tokenizer_window_and_dated_price() -> None:
    spec = endpoint_spec(OPENAI, "text-embedding-3-small")
    assert (spec.unit, spec.max_seq_length, spec.special_tokens) == ("tokens", 8191, 0)
    assert not spec.guessed and not spec.is_local
    embedder = EndpointEmbedder(spec, key="sk-unused")
    texts = ["A short text.", "Another one, a little longer than the first."]
    cost = estimate_cost(embedder, texts)
    tokens = get_sizer("tokens")
    assert cost.tokens == sum(tokens.size(t) for t in texts)
    assert cost.price == KNOWN_MODELS["text-embedding-3-small"].price == 0.02
    assert PRICES_DATE in cost.describe() and "OpenAI" in cost.describe()
    assert embedder.requests == 0  # nothing was sent


def test_other_models_take_the_window_and_tokenizer_given_or_say_they_are_guessed() -> None:
    guessed = endpoint_spec("http://localhost:11434/v1", "nomic-embed-text")
    assert guessed.unit == "tokens" and guessed.max_seq_length == 512
    assert "tokenizer and window guessed" in guessed.note
    path = model_tokenizer_path()
    given_ = endpoint_spec(
        "http://localhost:11434/v1", "nomic-embed-text", window=2048, tokenizer=f"tokenizer:{path}"
    )
    assert given_.unit == f"tokenizer:{path.resolve()}" and not given_.guessed
    assert model_window(given_.name, get_embedder("hash")) == ModelWindow(given_.unit, 2048)
    known = endpoint_spec(OPENAI, "text-embedding-3-large")
    assert model_window(known.name, get_embedder("hash")) == ModelWindow("tokens", 8191)
    cost = estimate_cost(EndpointEmbedder(guessed), ["text"])
    assert cost.price == 0.0 and "a server on this machine" in cost.describe()


def test_an_endpoint_is_a_semantic_configs_model_without_its_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-written-4711")
    name = endpoint_spec(OPENAI, "text-embedding-3-small", key_env="OPENAI_API_KEY").name
    config = Config.create("semantic", model=name)
    assert "sk-never" not in config.to_json() and name in config.to_json()
    assert "sk-never" not in repr(EndpointEmbedder(EndpointSpec.parse(name)))
