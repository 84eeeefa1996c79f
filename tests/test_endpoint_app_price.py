"""The endpoint's price, its measured wait and Evaluate's code set, against the real
server process of tests/embedding_server.py (the bundled all-MiniLM-L6-v2 behind the
OpenAI embeddings protocol).

- the endpoint box's "Price (US$ per million tokens)" starts at the known model's dated
  price (empty for others), changes every cost caption, says where it comes from, and
  survives a page change without ever reaching the link;
- an endpoint's wait is its own measured throughput: unknown before the first request
  (never MiniLM's local speed), the measured one after a run;
- Evaluate's code set offers the endpoint like the grid does, asks before sending to
  another host, and scores Pass@k as the local model does;
- the key is never on the page.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from chunking.embedding import models
from chunking.embedding.cache import clear_cache
from chunking.embedding.endpoint import (
    PRICES_DATE,
    THROUGHPUT_TOKENS,
    UNKNOWN_WAIT,
    EndpointEmbedder,
    load_endpoint,
    measured_throughput,
    record_throughput,
)
from chunking.embedding.models import estimate_embedding_seconds, estimate_wait, load_bundled
from chunking.evaluation import Settings
from chunking.evaluation.datasets import CODE, Dataset, evaluate_given, find_dataset, load_dataset
from chunking.evaluation.passk import with_k_columns
from chunking.evaluation.questions import renumber
from pages import endpoint_box, sidebar
from tests.embedding_server import Server, start

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("endpoint")]

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
EVALUATE = str(ROOT / "pages" / "evaluate_page.py")
TIMEOUT = 600
KEY = "sk-price-test-key-5b1f0e93"
MODEL = "all-MiniLM-L6-v2"
PRICE_KEY = "sem.model_embed_price"


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with start(key=KEY) as running:
        yield running


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: Server) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr(models, "_MODELS", {})
    clear_cache()
    server.reset()


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _everything(at: AppTest) -> str:
    parts = [
        str(e.value)
        for kind in ("markdown", "caption", "error", "warning", "info")
        for e in at.get(kind)
    ]
    parts += [str(e.proto) for kind in ("selectbox", "number_input") for e in at.get(kind)]
    return "\n".join(parts)


def _text(tag: str) -> str:
    """A pasted document of its own per test (the process keeps what it embedded)."""
    return (
        f"The {tag} bakery opens at six. Bread dough needs flour, water, salt and yeast. "
        f"Knead the {tag} dough for ten minutes. Jupiter is the largest planet. "
        f"Its Great Red Spot is a storm older than the {tag} telescope. Europa hides an ocean. "
    )


def _semantic(text: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    at.radio(key=sidebar.SOURCE_KEY).set_value("Paste").run()
    at.text_area(key=sidebar.PASTE_KEY).set_value(text).run()
    page = os.path.relpath(ROOT / "pages" / "semantic_page.py", APP.parent)
    return _ok(at.switch_page(page).run())


def _costs(at: AppTest) -> list[str]:
    return [c.value for c in at.caption if c.value.startswith("Embedding cost:")]


# ------------------------------------------------------------------------ the price


def test_the_price_given_in_the_box_is_the_cost_captions_price(server: Server) -> None:
    at = _semantic(_text("given"))
    at.text_input(key="sem.model_embed_url").set_value(server.url)
    at.text_input(key="sem.model_embed_model").set_value(MODEL)
    at = _ok(at.run())
    # a self-hosted model has no known price: the box starts empty (unknown)
    assert at.number_input(key=PRICE_KEY).value is None
    at.number_input(key=PRICE_KEY).set_value(0.5)
    next(b for b in at.button if b.label == "Use this endpoint").click()
    at = _ok(at.run())
    assert server.requests() > 0 and not at.error
    (cost,) = _costs(at)
    assert "× $0.5 per million (the price given)" in cost, cost
    tokens = int(cost.split(": ")[2].split(" tokens")[0].replace(",", ""))
    assert cost.endswith(f"≈ ${tokens * 0.5 / 1e6:.4f}")
    assert "Price for all-MiniLM-L6-v2: $0.5 per million tokens (given)." in _everything(at)
    assert KEY not in _everything(at)

    # another page and back: the price is still there, and never in the link
    at = _ok(at.switch_page(os.path.relpath(ROOT / "pages" / "explore_page.py", APP.parent)).run())
    at = _ok(at.switch_page(os.path.relpath(ROOT / "pages" / "semantic_page.py", APP.parent)).run())
    assert at.number_input(key=PRICE_KEY).value == 0.5
    assert at.session_state[endpoint_box.PRICES_KEY] == {f"{server.url}#{MODEL}": 0.5}
    link = " ".join(f"{k}={v}" for k, v in at.query_params.items())
    assert "0.5" not in link and "price" not in link.lower() and KEY not in link


def test_without_a_price_the_caption_says_where_the_cost_comes_from(server: Server) -> None:
    at = _semantic(_text("free"))
    at.text_input(key="sem.model_embed_url").set_value(server.url)
    at.text_input(key="sem.model_embed_model").set_value(MODEL)
    next(b for b in at.button if b.label == "Use this endpoint").click()
    at = _ok(at.run())
    (cost,) = _costs(at)
    assert "× $0 per million (a server on this machine) ≈ $0.0000" in cost, cost


def test_a_known_models_price_starts_at_its_dated_price_and_follows_the_model() -> None:
    at = _semantic(_text("known"))
    at.text_input(key="sem.model_embed_url").set_value("http://embeddings.invalid/v1")
    at.text_input(key="sem.model_embed_model").set_value("text-embedding-3-large")
    at = _ok(at.run())
    assert at.number_input(key=PRICE_KEY).value == pytest.approx(0.13)
    assert f"$0.13 per million tokens (OpenAI's price of {PRICES_DATE})" in _everything(at)
    at.text_input(key="sem.model_embed_model").set_value("text-embedding-3-small")
    at = _ok(at.run())  # untouched: it follows the model
    assert at.number_input(key=PRICE_KEY).value == pytest.approx(0.02)
    at.number_input(key=PRICE_KEY).set_value(0.07)
    at = _ok(at.run())
    at.text_input(key="sem.model_embed_model").set_value("nomic-embed-text")
    at = _ok(at.run())  # set by the user: kept for the small model, the next one starts empty
    assert at.number_input(key=PRICE_KEY).value is None
    at.text_input(key="sem.model_embed_model").set_value("text-embedding-3-small")
    at = _ok(at.run())
    assert at.number_input(key=PRICE_KEY).value == pytest.approx(0.07)
    assert "$0.07 per million tokens (given)" in _everything(at)


# ------------------------------------------------------------------------- the wait

TEXTS = [
    f"Line {i} of the ledger lists {i * 7} barrels of oil and shard {i % 5}." for i in range(90)
]
OTHER = [f"Row {i} of the ledger lists {i * 3} crates of tea and shard {i % 4}." for i in range(90)]


def test_an_endpoint_wait_is_unknown_until_measured_then_its_own(server: Server) -> None:
    name = f"{server.url}#{MODEL}"
    # never measured: no number (MiniLM's local speed would give one), "unknown" said
    wait = estimate_wait(name, TEXTS, "90 lines")
    assert wait.unknown and wait.embed_seconds == 0 and wait.describe() == UNKNOWN_WAIT
    assert estimate_embedding_seconds(name, TEXTS) == 0
    assert not estimate_wait(models.DEFAULT_MODEL, TEXTS).unknown

    remote = models.get_embedder(name)
    assert isinstance(remote, EndpointEmbedder)
    assert remote.estimate_seconds(TEXTS) is None
    started = time.perf_counter()
    remote.embed(TEXTS)
    outer = time.perf_counter() - started
    measured = measured_throughput(remote.spec.cache_name)
    assert measured is not None and measured.runs == 1 and measured.texts == len(TEXTS)
    assert measured.tokens == remote.sent_tokens(TEXTS)
    assert 0 < measured.seconds <= outer  # the run's own wall time, not a prior

    # the same texts are cached: nothing to wait for; others: the measured rate
    assert remote.estimate_seconds(TEXTS) == 0
    expected = measured.seconds * remote.sent_tokens(OTHER) / measured.tokens
    assert remote.estimate_seconds(OTHER) == pytest.approx(expected)
    wait = estimate_wait(name, OTHER, "90 rows")
    assert not wait.unknown and wait.embed_seconds == pytest.approx(expected)
    # the dimension was read from the first answer: a second embedder asks nothing more
    before = server.requests()
    again = load_endpoint(name)
    assert again.dimension == 384 and server.requests() == before


@settings(max_examples=60, deadline=None)
@given(
    runs=st.lists(
        st.tuples(
            st.floats(0, 100, allow_nan=False), st.integers(1, 300_000), st.integers(1, 2_000)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_the_throughput_record_weighs_runs_by_tokens_and_holds_the_latest(
    runs: list[tuple[float, int, int]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("throughput")
    for seconds, tokens, texts in runs:
        record_throughput("http://localhost:1/v1#m", seconds, tokens, texts, folder)
    measured = measured_throughput("http://localhost:1/v1#m", folder)
    assert measured is not None and measured.runs == len(runs)
    last_tokens = runs[-1][1]
    # the latest run is always held whole, and the record never outgrows its horizon
    assert measured.tokens >= last_tokens
    assert measured.tokens <= max(THROUGHPUT_TOKENS, last_tokens) + 1e-6
    rates = [s / t for s, t, _ in runs]
    assert min(rates) - 1e-12 <= measured.seconds_per_token <= max(rates) + 1e-12
    assert measured_throughput("http://localhost:1/v1#other", folder) is None


# ---------------------------------------------------------------------- the code set


def _small_code_set(files: int = 8) -> Dataset:
    """The code set cut down to a few files with questions (retrieval among them)."""
    dataset = load_dataset(find_dataset(CODE))
    asked = [q.corpus_id for q in dataset.questions]
    kept = sorted(set(asked), key=lambda d: (-asked.count(d), d))[:files]
    chunks = dataset.given_chunks()
    return dataclasses.replace(
        dataset,
        documents={d: dataset.documents[d] for d in kept},
        questions=tuple(renumber([q for q in dataset.questions if q.corpus_id in kept])),
        chunks={d: chunks[d] for d in kept},
    )


def test_code_set_pass_at_k_with_the_endpoint_equals_the_local_model(server: Server) -> None:
    dataset = _small_code_set()
    ks = [1, 5, 10]
    tables = []
    for embedder in (load_bundled(), load_endpoint(f"{server.url}#{MODEL}")):
        result = evaluate_given(dataset, embedder, Settings(top_k=max(ks), scope="all"))
        tables.append(with_k_columns(result.table, result.evaluations, dataset.documents, ks, None))
    local, remote = tables
    assert server.requests() > 0
    columns = [f"pass@{k}" for k in ks] + ["recall", "mrr"]
    columns = [c for c in local.columns if c.lower() in columns]
    assert len(columns) >= len(ks)
    np.testing.assert_allclose(
        remote[columns].to_numpy(float), local[columns].to_numpy(float), atol=1e-6
    )


def _code_set(at: AppTest) -> AppTest:
    at.radio(key="eval.origin").set_value("anthropic-code-eval (code retrieval)")
    return _ok(at.run())


def test_the_code_set_offers_an_endpoint_and_asks_before_sending_it_away(
    server: Server,
) -> None:
    at = _code_set(_ok(AppTest.from_file(EVALUATE, default_timeout=TIMEOUT).run()))
    at.text_input(key="eval.code_model_embed_url").set_value("http://embeddings.invalid/v1")
    at.text_input(key="eval.code_model_embed_model").set_value("text-embedding-3-small")
    next(b for b in at.button if b.label == "Run on the code set").click()
    at = _ok(at.run())
    name = "http://embeddings.invalid/v1#text-embedding-3-small"
    assert at.session_state["eval.code_model"] == name  # filled in: chosen
    options = at.selectbox(key="eval.code_model").options  # as the box shows them
    assert "text-embedding-3-small at embeddings.invalid (endpoint; counts cl100k_base tokens)" in (
        options
    )
    shown = _everything(at)
    assert f"embeds 737 chunks and 248 questions: {UNKNOWN_WAIT}" in shown
    assert "embeddings.invalid is not this machine" in shown
    assert any(b.label == "Send documents to embeddings.invalid" for b in at.button)
    assert server.requests() == 0 and KEY not in shown
    # the local model chosen again in the box: the endpoint stays a choice, not forced
    at.selectbox(key="eval.code_model").set_value("hash")
    next(b for b in at.button if b.label == "Run on the code set").click()
    at = _ok(at.run())
    assert at.session_state["eval.code_model"] == "hash" and not at.error
