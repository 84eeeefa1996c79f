"""The embeddings endpoint against a real OpenAI-compatible server process
(tests/embedding_server.py) serving the bundled all-MiniLM-L6-v2: the same vectors as
the local model, batching, retries honouring Retry-After, the disk cache (a second run
sends nothing, counted by the server), every bad answer as one clear error, and the key
in no output."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from chunking.embedding import models
from chunking.embedding.cache import clear_cache
from chunking.embedding.endpoint import (
    EndpointEmbedder,
    EndpointSpec,
    estimate_cost,
    load_endpoint,
)
from chunking.embedding.models import (
    Embedder,
    EmbeddingError,
    embed_chunks,
    get_embedder,
    load_bundled,
)
from tests.embedding_server import Server, start

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("endpoint")]

KEY = "sk-test-0123456789abcdef-secret"
MODEL = "all-MiniLM-L6-v2"
LONG = " ".join(f"word{i} and more text about shards" for i in range(120))
TEXTS = [f"Sentence number {i} is about cats, dogs and shard {i % 7}." for i in range(70)]


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with start(key=KEY) as running:
        yield running


@pytest.fixture(scope="module")
def local() -> Embedder:
    """The bundled model in this process, the reference."""
    return load_bundled()


@pytest.fixture(autouse=True)
def _fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: Server) -> None:
    """Every test: its own disk cache, an empty memory cache, no loaded endpoints, the
    server's counts and faults cleared, and the key in OPENAI_API_KEY."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr(models, "_MODELS", {})
    clear_cache()
    server.reset()


def endpoint(server: Server, model: str = MODEL, **settings: object) -> EndpointEmbedder:
    return load_endpoint(f"{server.url}#{model}", **settings)  # type: ignore[arg-type]


def test_vectors_equal_the_local_model_and_truncation_follows_its_window(
    server: Server, local: Embedder
) -> None:
    remote = endpoint(server)
    texts = [*TEXTS[:20], LONG]
    vectors = remote.embed(texts)
    assert vectors.shape == (21, 384) and remote.dimension == 384
    np.testing.assert_allclose(vectors, local.embed(texts), atol=2e-5)
    # the long text is cut at the model's 254 word pieces before it is sent, as the
    # local model truncates it, and both flag it the same way
    assert remote.token_limit == 254
    assert embed_chunks([LONG], remote).flags == embed_chunks([LONG], local).flags
    assert embed_chunks([LONG], remote).truncated == [0]


def test_requests_are_batched_and_a_second_run_sends_nothing(
    server: Server, tmp_path: Path
) -> None:
    remote = endpoint(server, max_inputs=10, concurrency=3)
    first = remote.embed(TEXTS)
    assert server.requests() == 7 and server.stats()["inputs"] == 70
    clear_cache()  # a new process: only the disk cache is left
    again = endpoint(server)
    second = again.embed(TEXTS)
    assert server.requests() == 7, "the second run sent a request"
    assert again.dimension == 384 and again.requests == 0
    np.testing.assert_array_equal(first, second)
    assert list((tmp_path / "cache" / "chunk-explorer" / "embeddings").iterdir())


def test_the_token_cap_splits_requests(server: Server) -> None:
    remote = endpoint(server, max_request_tokens=200)
    remote.embed([LONG, LONG + " x", "short"])  # 254 pieces each: over the cap, alone
    assert server.requests() == 3


def test_429_is_retried_after_the_time_retry_after_asks(server: Server) -> None:
    server.faults({"kind": "429", "retry_after": "1"})
    remote = endpoint(server)
    vectors = remote.embed(TEXTS[:3])
    assert vectors.shape == (3, 384)
    assert remote.waits == [1.0] and remote.requests == 2
    arrivals = server.stats()["arrivals"]
    assert len(arrivals) == 2 and arrivals[1] - arrivals[0] >= 0.95


def test_500_and_a_time_out_are_retried_with_backoff(server: Server, local: Embedder) -> None:
    server.faults({"kind": "500"}, {"kind": "timeout", "seconds": 11})
    remote = endpoint(server, timeout=10.0)  # long: a busy machine answers slowly
    vectors = remote.embed(TEXTS[:3])
    np.testing.assert_allclose(vectors, local.embed(TEXTS[:3]), atol=2e-5)
    assert remote.requests == 3 and len(remote.waits) == 2
    assert all(0 < w <= 2 for w in remote.waits)


def test_failing_after_the_retries_keeps_what_was_embedded(server: Server) -> None:
    remote = endpoint(server, max_inputs=5, concurrency=1, attempts=2, timeout=10.0)
    remote.dimension  # noqa: B018 (the probe: one request)
    server.reset()
    server.faults({}, {}, {"kind": "500"}, {"kind": "timeout", "seconds": 11})
    with pytest.raises(EmbeddingError, match=r"did not answer within 10 s, 2 attempts") as err:
        remote.embed(TEXTS[:15])
    assert "\n" not in str(err.value)
    assert server.stats()["inputs"] == 20
    clear_cache()
    server.reset()
    endpoint(server).embed(TEXTS[:15])  # only the third batch is sent again
    assert server.stats()["inputs"] == 5


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("malformed", r"malformed answer .*no list of data\[\]\.embedding"),
        ("garbage", r"malformed answer .*not JSON"),
        ("short", r"short answer .*: 2 vectors for 3 texts"),
        ("401", r"refused the key \(HTTP 401\)"),
        ("403", r"refused the key \(HTTP 403\)"),
    ],
)
def test_a_bad_answer_is_one_clear_line_and_caches_nothing(
    server: Server, fault: str, message: str
) -> None:
    server.faults({"kind": fault})
    remote = endpoint(server)
    remote.dimension = 384  # known: the bad answer is the first one sent
    with pytest.raises(EmbeddingError, match=message) as err:
        remote.embed(TEXTS[:3])
    assert "\n" not in str(err.value) and KEY not in str(err.value)
    remote.embed(TEXTS[:3])
    assert server.stats()["inputs"] == 6, "a bad answer left vectors in the cache"


def test_a_dimension_that_changes_is_refused(server: Server) -> None:
    remote = endpoint(server, max_inputs=3, concurrency=1)
    server.faults({}, {"kind": "dimension"})
    with pytest.raises(EmbeddingError, match="returned 383-dimensional vectors after 384"):
        remote.embed(TEXTS[:6])
    clear_cache()
    server.reset()
    endpoint(server).embed(TEXTS[:6])
    assert server.stats()["inputs"] == 3  # the first answer was kept


def test_wrong_key_unknown_model_wrong_url_and_refused_connection(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "sk-wrong-key-987654321"
    with pytest.raises(EmbeddingError, match=r"refused the key \(HTTP 401\)") as err:
        endpoint(server, key=wrong).embed(["a"])
    assert wrong not in str(err.value) and "***" in str(err.value)
    with pytest.raises(EmbeddingError, match=r"has no model 'nomic-embed-text' \(HTTP 404\)"):
        endpoint(server, "nomic-embed-text").embed(["a"])
    with pytest.raises(EmbeddingError, match=r"no embeddings at .*/nowhere/v1/embeddings"):
        load_endpoint(f"{server.root}/nowhere/v1#{MODEL}").embed(["a"])
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(EmbeddingError, match=r"cannot reach the embeddings endpoint"):
        load_endpoint(f"http://127.0.0.1:{port}/v1#{MODEL}").embed(["a"])
    monkeypatch.delenv("MY_EMBED_KEY", raising=False)
    with pytest.raises(EmbeddingError, match="MY_EMBED_KEY is not set"):
        get_embedder(f"{server.url}#{MODEL}?key_env=MY_EMBED_KEY")


def test_the_cost_counts_only_what_is_not_cached(server: Server) -> None:
    remote = endpoint(server)
    remote.embed(TEXTS[:10])
    cost = estimate_cost(remote, TEXTS[:20], price=0.5)
    assert (cost.texts, cost.cached) == (10, 10)
    assert cost.tokens == sum(remote.count_tokens(t) for t in TEXTS[10:20])
    assert cost.dollars == pytest.approx(cost.tokens * 0.5 / 1e6)
    assert "$0.5 per million (the price given)" in cost.describe()
    assert server.requests() == 1  # estimating sends nothing


def test_the_name_and_repr_never_hold_the_key(server: Server) -> None:
    remote = endpoint(server)
    spec = EndpointSpec.parse(f"{server.url}#{MODEL}?key_env=OPENAI_API_KEY")
    for shown in (remote.name, repr(remote), remote.label, spec.name, repr(spec)):
        assert KEY not in shown
