"""chonkie's chunkers, run by chonkie itself.

Offsets are chonkie's ``start_index``, checked by :mod:`.align`. chonkie's ``tokenizer``
is ``"character"`` (its default) or our offline cl100k_base encoding (unit ``tokens``).
The semantic chunker is given our embedding model through chonkie's ``BaseEmbeddings``
interface (its own default, ``minishlab/potion-base-32M``, would be downloaded).

chonkie's ``CodeChunker`` needs ``tree-sitter-language-pack``, which downloads its
grammars on first use; offline, ``chonkie.code`` says so in one line instead of trying.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from ..model import Piece
from ..params import Check, Param, Splitter, Strategy
from ..units import Sizer
from .align import LibraryChunk, align
from .common import (
    chunk_overlap_param,
    chunk_size_param,
    declare,
    embedder,
    library_errors,
    model_param,
    require,
    size_param,
    unit_choice,
)

LIBRARY = "chonkie"
#: chonkie downloads the rest of the grammars while fewer than this many are present.
_GRAMMARS_BEFORE_DOWNLOAD = 19
#: Our parameters that chonkie does not take by their own name.
_OURS = ("unit", "model")


def _chonkie(strategy: str) -> Any:
    return require("chonkie", "chonkie", strategy)


def tokenizer(unit: str) -> Any:
    """chonkie's ``tokenizer`` argument for a unit."""
    if unit == "chars":
        return "character"
    from ..units import get_encoding

    return get_encoding()


def embeddings_adapter(model: Any, unit: str) -> Any:
    """Our embedder as chonkie ``BaseEmbeddings``; its tokenizer measures ``unit``."""
    import numpy as np

    base = require("chonkie.embeddings", "chonkie", "chonkie.semantic")

    class OurEmbeddings(base.BaseEmbeddings):  # type: ignore[name-defined]
        def embed(self, text: str) -> Any:
            return np.asarray(model.embed([text])[0])

        def embed_batch(self, texts: list[str]) -> list[Any]:
            return list(model.embed(texts)) if texts else []

        @property
        def dimension(self) -> int:
            return int(model.dimension)

        def get_tokenizer(self) -> Any:
            return tokenizer(unit)

        def __repr__(self) -> str:
            return f"OurEmbeddings({model.name})"

    return OurEmbeddings()


def _need_grammars(strategy: str) -> None:
    """chonkie's CodeChunker would download tree-sitter grammars; say so instead."""
    _chonkie(strategy)  # a missing chonkie is said first
    try:
        pack = importlib.import_module("tree_sitter_language_pack")
    except ImportError:
        pack = None
    if pack is None or len(pack.downloaded_languages()) <= _GRAMMARS_BEFORE_DOWNLOAD:
        raise ValueError(
            f"strategy {strategy!r} needs tree-sitter-language-pack with its grammars, which "
            "it downloads on first use (not possible offline, so not in the engines extra); "
            "with network access: pip install tree-sitter-language-pack, then "
            "tree_sitter_language_pack.download_all(); or use our 'code' strategy"
        )


def _split_with(class_name: str, strategy: str) -> Splitter:
    """Run chonkie's ``class_name``, given every parameter but unit and model by its own
    name, and our tokenizer (or, with a model, our embeddings) for the unit."""

    def split(text: str, p: Mapping[str, Any], sizer: Sizer) -> list[Piece]:
        kwargs = {name: value for name, value in p.items() if name not in _OURS}
        if "model" in p:
            kwargs["embedding_model"] = embeddings_adapter(embedder(p), p["unit"])
        if class_name == "CodeChunker":
            _need_grammars(strategy)
        with library_errors(strategy, LIBRARY):
            cls = getattr(_chonkie(strategy), class_name)
            if "model" not in p:
                kwargs["tokenizer"] = tokenizer(p["unit"])
            chunks = list(cls(**kwargs).chunk(text))
        found = [LibraryChunk(c.text, c.start_index) for c in chunks]
        return align(text, found, sizer, limit=p["chunk_size"])

    return split


# --- declarations ---------------------------------------------------------------------


def _chunker(
    class_name: str, description: str, params: tuple[Param, ...], checks: tuple[Check, ...] = ()
) -> Strategy:
    """chonkie's ``class_name``, as ``chonkie.<its name without Chunker>``."""
    name = f"chonkie.{class_name.removesuffix('Chunker').lower()}"
    split = _split_with(class_name, name)
    return declare(LIBRARY, name, class_name, description, params, split=split, checks=checks)


def _overlap_below(p: Mapping[str, Any]) -> None:
    if p["chunk_overlap"] >= p["chunk_size"]:
        raise ValueError(
            f"chunk_overlap ({p['chunk_overlap']}) must be smaller than chunk_size "
            f"({p['chunk_size']}); lower chunk_overlap"
        )


_UNIT = unit_choice(("chars", "tokens"), "chars", "chunk_size")
_SIZE = chunk_size_param(2048, "Maximum chunk size, in chonkie's tokenizer's units (see unit).")
_OVERLAP = chunk_overlap_param(0)
_MIN_SENTENCES = Param(
    "min_sentences_per_chunk", int, 1, "Fewest sentences a chunk holds.", minimum=1
)


def _min_characters_per_sentence(default: int) -> Param:
    help = "Shorter sentences are joined to the next."
    return Param("min_characters_per_sentence", int, default, help, minimum=1)


RECURSIVE = _chunker(
    "RecursiveChunker",
    "chonkie's RecursiveChunker with its default rules: paragraphs, sentences, "
    "punctuation, words, characters; pieces under min_characters_per_chunk are merged.",
    (
        _SIZE,
        size_param(
            "min_characters_per_chunk", 24, "Smallest piece, in characters, kept on its own."
        ),
        _UNIT,
    ),
)

TOKEN = _chunker(
    "TokenChunker",
    "chonkie's TokenChunker: fixed windows of chunk_size tokens (or characters) with "
    "chunk_overlap.",
    (_SIZE, _OVERLAP, _UNIT),
    checks=(_overlap_below,),
)

SENTENCE = _chunker(
    "SentenceChunker",
    "chonkie's SentenceChunker: sentences (split at '. ', '! ', '? ' and new lines) packed "
    "up to chunk_size with chunk_overlap.",
    (_SIZE, _OVERLAP, _MIN_SENTENCES, _min_characters_per_sentence(12), _UNIT),
    checks=(_overlap_below,),
)

SEMANTIC = _chunker(
    "SemanticChunker",
    "chonkie's SemanticChunker over our embedding model (chonkie's default model would be "
    "downloaded): sentence windows compared, boundaries found by peak detection on the "
    "smoothed similarity, groups packed up to chunk_size.",
    (
        Param(
            "threshold",
            float,
            0.8,
            "Similarity threshold (between 0 and 1).",
            minimum=0.01,
            maximum=0.99,
        ),
        _SIZE,
        Param("similarity_window", int, 3, "Sentences compared at once.", minimum=1),
        _MIN_SENTENCES,
        _min_characters_per_sentence(24),
        Param(
            "skip_window",
            int,
            0,
            "Merge similar groups up to this many groups apart (0: off).",
            minimum=0,
            maximum=10,
        ),
        unit_choice(("tokens", "chars"), "tokens", "chunk_size"),
        model_param(),
    ),
)

CODE = _chunker(
    "CodeChunker",
    "chonkie's CodeChunker (tree-sitter syntax trees). Needs tree-sitter-language-pack "
    "with its grammars downloaded, which is not possible offline: here it explains that "
    "instead of running.",
    (_SIZE, Param("language", str, "auto", "The code's language, or auto to detect it."), _UNIT),
)

STRATEGIES = (RECURSIVE, TOKEN, SENTENCE, SEMANTIC, CODE)
