"""Late chunking: chunk vectors pooled from the token vectors of the whole document.

Instead of embedding each chunk alone, the document is read by the model's transformer
in windows of its maximum length (:data:`WINDOW_OVERLAP` of each window shared with the
next), so that every token's vector has seen the text around it, beyond its chunk. A
token read by two windows gets the mean of its two vectors. A chunk's vector is the mean
of the vectors of the tokens inside its exact character span (through the tokenizer's
offset mapping: a token counts if it shares a character with the span), normalised to
length 1, as the model's own mean pooling would. A chunk is never re-embedded alone.

The gain depends on how much text a window holds: all-MiniLM-L6-v2 reads 256 word
pieces (its BERT base up to 512), so a token sees at most a few paragraphs; long-context
models (8k tokens) are where the technique was shown to help most.

Only sentence-transformers models on torch expose token vectors here; others raise
:class:`~chunking.embedding.models.EmbeddingError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..embedding.cache import text_key
from ..embedding.models import EmbeddingError, SentenceTransformerEmbedder
from ..model import Progress
from ..runtime.lru import BoundedLRU, shared_cache

if TYPE_CHECKING:
    from ..embedding.models import Embedder
    from .spans import SpanArray

#: Share of each window read again by the next one.
WINDOW_OVERLAP = 0.25
#: Windows sent to the model at once.
WINDOW_BATCH = 8
#: Late vectors kept per process, by model, document and chunk spans (bounded in
#: entries and bytes: ``CACHE_BOUNDS["late_vectors"]``).
_CACHE: BoundedLRU[tuple[str, str, str], np.ndarray] = shared_cache("late_vectors")


def transformer_parts(embedder: Embedder) -> tuple[Any, Any]:
    """The Hugging Face tokenizer and transformer of a sentence-transformers model."""
    model = getattr(embedder, "model", None)
    if not isinstance(embedder, SentenceTransformerEmbedder) or model is None or not len(model):
        raise EmbeddingError(
            f"late chunking needs token vectors, which only sentence-transformers models "
            f"on torch give here; {embedder.name} is not one (use the bundled "
            "all-MiniLM-L6-v2 or another sentence-transformers model)"
        )
    import torch

    auto = getattr(model[0], "auto_model", None)
    if not isinstance(auto, torch.nn.Module):
        raise EmbeddingError(
            f"late chunking needs the model's torch transformer; {embedder.name} runs on "
            "another backend (use the bundled all-MiniLM-L6-v2 in torch)"
        )
    return model.tokenizer, auto


def supports_late(embedder: Embedder) -> bool:
    """Whether :func:`late_vectors` can use this embedder (a torch sentence-transformer)."""
    try:
        transformer_parts(embedder)
    except EmbeddingError:
        return False
    return True


def windows(n_tokens: int, length: int, overlap: float = WINDOW_OVERLAP) -> list[tuple[int, int]]:
    """``[start, end)`` token ranges of ``length`` tokens covering ``n_tokens``, each
    sharing ``round(overlap × length)`` tokens with the next."""
    if length < 1:
        raise ValueError(f"window length must be at least 1; got {length}")
    step = max(1, length - round(overlap * length))
    out = []
    start = 0
    while True:
        end = min(start + length, n_tokens)
        out.append((start, end))
        if end >= n_tokens:
            return out
        start += step


def token_ranges(offsets: np.ndarray, spans: SpanArray) -> np.ndarray:
    """For each span, the ``[first, last)`` tokens sharing a character with it.

    ``offsets`` are the tokens' ``(start, end)`` characters, in document order.
    """
    if len(offsets) == 0:
        return np.zeros((len(spans), 2), dtype=np.int64)
    first = np.searchsorted(offsets[:, 1], spans[:, 0], side="right")
    last = np.searchsorted(offsets[:, 0], spans[:, 1], side="left")
    return np.column_stack([first, np.maximum(first, last)]).astype(np.int64)


def pool(token_vectors: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """Mean of the token vectors of each ``[first, last)`` range, as unit rows (a range
    without tokens gives a zero row)."""
    means = np.zeros((len(ranges), token_vectors.shape[1]), dtype=np.float64)
    for row, (first, last) in enumerate(ranges):
        if last > first:
            means[row] = token_vectors[first:last].mean(axis=0, dtype=np.float64)
    return _unit_rows(means)


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1)).astype(np.float32)


def add_context(
    pooled: np.ndarray, context_vectors: np.ndarray, contexts: Sequence[str]
) -> np.ndarray:
    """Late vectors with their chunk's context: the context is not in the document, so
    it cannot be pooled from its tokens; its own embedding is added with the same
    weight as the chunk's (both are unit vectors) and the sum normalised. A chunk
    without context keeps its late vector."""
    present = np.array([[bool(c)] for c in contexts], dtype=np.float32).reshape(-1, 1)
    return _unit_rows(pooled + context_vectors * present)


def _encode(tokenizer: Any, document: str) -> tuple[list[int], np.ndarray]:
    encoded = tokenizer(
        document,
        add_special_tokens=False,
        return_offsets_mapping=True,
        truncation=False,
        verbose=False,
    )
    offsets = np.asarray(encoded["offset_mapping"], dtype=np.int64).reshape(-1, 2)
    return list(encoded["input_ids"]), offsets


def token_vectors(
    embedder: Embedder, document: str, progress: Progress | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The document's token vectors (windows averaged) and their character offsets."""
    import torch

    tokenizer, model = transformer_parts(embedder)
    ids, offsets = _encode(tokenizer, document)
    length = embedder.max_seq_length - 2  # room for [CLS] and [SEP]
    spans = windows(len(ids), length)
    sums = np.zeros((len(ids), embedder.dimension), dtype=np.float32)
    seen = np.zeros(len(ids), dtype=np.float32)
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    for lo in range(0, len(spans), WINDOW_BATCH):
        batch = spans[lo : lo + WINDOW_BATCH]
        width = max(b - a for a, b in batch) + 2
        input_ids = torch.zeros((len(batch), width), dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, (a, b) in enumerate(batch):
            input_ids[row, : b - a + 2] = torch.tensor([cls, *ids[a:b], sep])
            mask[row, : b - a + 2] = 1
        with torch.inference_mode():
            hidden = model(input_ids=input_ids, attention_mask=mask).last_hidden_state.numpy()
        for row, (a, b) in enumerate(batch):
            sums[a:b] += hidden[row, 1 : b - a + 1]
            seen[a:b] += 1
        if progress is not None:
            progress(min(lo + WINDOW_BATCH, len(spans)), len(spans), "windows read")
    sums /= np.maximum(seen, 1)[:, None]  # in place: a long document has many tokens
    return sums, offsets


def late_vectors(
    embedder: Embedder,
    document: str,
    spans: SpanArray,
    progress: Progress | None = None,
) -> np.ndarray:
    """One unit vector per chunk span, pooled from the whole document's token vectors
    (cached per model, document and spans)."""
    key = (embedder.name, text_key(document), text_key(np.asarray(spans).tobytes().hex()))
    cached: np.ndarray | None = _CACHE.get(key)
    if cached is not None:
        return cached
    vectors, offsets = token_vectors(embedder, document, progress)
    pooled = pool(vectors, token_ranges(offsets, np.asarray(spans, dtype=np.int64)))
    pooled.setflags(write=False)
    _CACHE.put(key, pooled)
    return pooled
